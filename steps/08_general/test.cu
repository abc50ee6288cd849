// Step 08 tests.
//   GPU: every kernel of every element type on the awkward shapes, aligned shapes with partial
//        tiles for the vector kernels, buffers that do not start on 16 bytes, (label large)
//        matrices past 2^31 elements on each path, and the phases that step08_patterns times.
//   CPU: the launcher's decisions, the register transposes, the shared-memory layout (every unit
//        stored once, no bank conflicts), the tile order, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <functional>
#include <fstream>
#include <memory>
#include <new>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bank_model.hpp"
#include "check.cuh"
#include "device_buffer.cuh"
#include "host_data.hpp"
#include "testing.cuh"
#include "patterns.cuh"
#include "variants.cuh"

namespace {

using course::ElemType;
using course::Problem;
using course::Variant;

// ---- GPU: every kernel, every type -----------------------------------------------------------

struct Case {
  ElemType type;
  Variant variant;
  bool may_refuse;  // the vector kernels alone refuse misaligned rows; everything else must run
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << course::elem_name(c.type) << " " << c.variant.name;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (ElemType t : course::all_elem_types()) {
    for (const Variant& v : step08::variants(t)) {
      cases.push_back({t, v, v.name.rfind("16B vectors", 0) == 0});
    }
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = std::string(course::elem_name(info.param.type)) + "_" + info.param.variant.name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// Shapes whose rows start on 16 bytes for every element size (multiples of 16 elements) but
// that are not multiples of any tile: the vector kernels must take them, edge tiles included.
// (The tile order's groups are taller than these: see TransposesMatricesTallerThanATileGroup.)
const std::vector<course::Shape>& aligned_edge_shapes() {
  static const std::vector<course::Shape> shapes = {
      {16, 16}, {16, 48}, {48, 272}, {272, 48}, {144, 400}, {1168, 48}, {48, 1168}, {2320, 80},
  };
  return shapes;
}

class Step08 : public ::testing::TestWithParam<Case> {};

TEST_P(Step08, TransposesEveryAwkwardShape) {
  REQUIRE_GPU();
  const Case& c = GetParam();
  if (!c.may_refuse) {
    EXPECT_TRUE(course::check_awkward_shapes(c.variant, c.type));
    return;
  }
  for (const course::Shape& s : course::awkward_shapes()) {
    ASSERT_TRUE(course::check_transpose(c.variant, Problem{c.type, s.rows, s.cols, 1}, true));
  }
}

TEST_P(Step08, TransposesAlignedShapesWithPartialTiles) {
  REQUIRE_GPU();
  const Case& c = GetParam();
  for (const course::Shape& s : aligned_edge_shapes()) {
    ASSERT_TRUE(course::check_transpose(c.variant, Problem{c.type, s.rows, s.cols, 1}));
  }
}

// Taller than one group of the tile order (TC * S tile rows: 4096 to 32768 input rows for the
// step's tiles), so that the last, shorter group runs: one shape with aligned rows, one without.
TEST_P(Step08, TransposesMatricesTallerThanATileGroup) {
  REQUIRE_GPU();
  const Case& c = GetParam();
  ASSERT_TRUE(course::check_transpose(c.variant, Problem{c.type, 32784, 48, 1}));
  ASSERT_TRUE(course::check_transpose(c.variant, Problem{c.type, 32785, 37, 1}, c.may_refuse));
}

INSTANTIATE_TEST_SUITE_P(General, Step08, ::testing::ValuesIn(all_cases()), case_name);

// ---- GPU: buffers that do not start on 16 bytes ----------------------------------------------

// The launcher must not assume cudaMalloc's alignment: a matrix can start anywhere its element
// type may (a slice of a bigger buffer). Input and output are shifted by one element (16-byte
// elements stay aligned; they need it).
TEST(Step08Launcher, TransposesFromAndToUnalignedPointers) {
  REQUIRE_GPU();
  const course::Shape shapes[] = {{64, 64}, {100, 37}, {129, 256}, {256, 129}, {33, 1}};
  for (ElemType t : course::all_elem_types()) {
    for (const course::Shape& s : shapes) {
      const Problem p{t, s.rows, s.cols, 1};
      EXPECT_TRUE(course::check_transpose(step08::auto_variant(t), p, false, course::elem_size(t)));
    }
  }
}

// ---- GPU, label large: past 2^31 elements --------------------------------------------------

std::int64_t host_memory_available() {  // bytes, from /proc/meminfo; 0 when unknown
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::int64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

// Transposes one rows x cols matrix of `type` with the launcher and checks every element,
// reading the expected value straight from the input (no third buffer): ~2 x the matrix on the
// host and on the device.
void check_large(ElemType type, std::int64_t rows, std::int64_t cols, step08::Path expected) {
  const Problem p{type, rows, cols, 1};
  const std::size_t n = p.bytes(), guard = 4096, size = course::elem_size(type);
  const std::size_t margin = std::size_t{1} << 30;
  std::size_t free_dev = 0, total_dev = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_dev, &total_dev));
  if (free_dev < 2 * n + 2 * guard + margin / 4) {
    GTEST_SKIP() << p.describe() << " needs " << (2 * n >> 20) << " MiB of device memory, "
                 << (free_dev >> 20) << " MiB is free";
  }
  const std::int64_t host_free = host_memory_available();
  if (host_free < static_cast<std::int64_t>(2 * n + margin)) {
    GTEST_SKIP() << p.describe() << " needs " << ((2 * n + margin) >> 20)
                 << " MiB of host memory, MemAvailable is " << (host_free >> 20) << " MiB";
  }
  step08::Plan plan;
  ASSERT_TRUE(step08::plan_transpose(size, rows, cols, 256, 256, &plan));
  ASSERT_EQ(plan.path, expected) << "this test is meant for another path";

  std::unique_ptr<std::uint8_t[]> in(new (std::nothrow) std::uint8_t[n]);
  std::unique_ptr<std::uint8_t[]> got(new (std::nothrow) std::uint8_t[n + 2 * guard]);
  if (!in || !got) GTEST_SKIP() << "host allocation of " << (2 * n >> 20) << " MiB failed";
  const std::uint64_t seed = course::fresh_seed();
  course::fill_pattern(type, in.get(), p.elements(), seed);
  {
    course::DeviceBuffer d_in(n), d_out(n + 2 * guard);
    CUDA_CHECK(cudaMemcpy(d_in.get(), in.get(), n, cudaMemcpyHostToDevice));
    ASSERT_EQ(course::run_poisoned(step08::auto_variant(type), p, d_in.get(), d_out.get(),
                                   d_out.bytes(), guard),
              cudaSuccess);
    CUDA_CHECK(cudaMemcpy(got.get(), d_out.get(), n + 2 * guard, cudaMemcpyDeviceToHost));
  }
  for (std::size_t i = 0; i < guard; ++i) {
    ASSERT_EQ(got[i], course::kPoisonByte) << "wrote before the output";
    ASSERT_EQ(got[guard + n + i], course::kPoisonByte) << "wrote past the output";
  }
  // Output element i is (row c, col r) of the cols x rows output = input element (r, c).
  std::atomic<std::int64_t> first_bad{p.elements()};
  const std::uint8_t* out = got.get() + guard;
  course::parallel_for(p.elements(), [&](std::int64_t begin, std::int64_t end) {
    std::int64_t c = begin / rows, r = begin % rows;
    for (std::int64_t i = begin; i < end; ++i) {
      if (std::memcmp(out + i * size, in.get() + (r * cols + c) * size, size) != 0) {
        std::int64_t cur = first_bad.load();
        while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
        }
        return;
      }
      if (++r == rows) r = 0, ++c;
    }
  });
  const std::int64_t bad = first_bad.load();
  if (bad != p.elements()) {
    const std::int64_t c = bad / rows, r = bad % rows;
    FAIL() << p.describe() << " (seed " << seed << "): output (row " << c << ", col " << r
           << ") is " << course::hex_bits(type, out + bad * size) << ", expected "
           << course::hex_bits(type, in.get() + (r * cols + c) * size);
  }
}

// 46341^2 > 2^31: every index past 2^31 must be 64-bit. 46341 floats per row are not whole
// vectors, so this is the scalar path with sector-aligned writes (~8.6 GB per matrix).
TEST(Step08Large, F32Over2To31ElementsScalarRealigned) {
  REQUIRE_GPU();
  check_large(ElemType::f32, 46341, 46341, step08::Path::scalar);
}

// The packed vector path past 2^31 elements (46352 is a multiple of 16; ~2.1 GB per matrix).
TEST(Step08Large, I8Over2To31ElementsVector) {
  REQUIRE_GPU();
  check_large(ElemType::i8, 46352, 46352, step08::Path::vector);
}

// The scalar path past 2^31 elements.
TEST(Step08Large, I8Over2To31ElementsScalar) {
  REQUIRE_GPU();
  check_large(ElemType::i8, 46341, 46341, step08::Path::scalar);
}

// ---- GPU: the phases of step08_patterns -----------------------------------------------------

// What step08_patterns times must be what the transpose does. On every awkward shape: the store
// phase alone writes every output element (the tile's zeros) and nothing around the output; the
// load phase alone writes nothing at all; and the whole kernel on groups of 8 tile rows (the
// tool's second tile order) is still a transpose.
template <int S>
void check_phases(ElemType type) {
  constexpr int T = step08::scalar_tile(S);
  const std::size_t guard = 4096;
  for (const course::Shape& s : course::awkward_shapes()) {
    SCOPED_TRACE(course::elem_name(type) + std::string(" ") + std::to_string(s.rows) + "x" +
                 std::to_string(s.cols));
    const std::size_t n = static_cast<std::size_t>(s.rows * s.cols) * S;
    course::DeviceBuffer in(n), out(n + 2 * guard), sink(sizeof(unsigned));
    CUDA_CHECK(cudaMemset(in.get(), 0x5A, n));
    std::vector<std::uint8_t> got(n + 2 * guard);
    for (std::uint32_t group : {8u, step08::make_grid(s.rows, s.cols, T, T, S).group_rows}) {
      const step08::TileGrid grid = step08::grid_with_group(s.rows, s.cols, S, group);
      for (bool store : {true, false}) {
        CUDA_CHECK(cudaMemset(out.get(), course::kPoisonByte, out.bytes()));
        void* matrix = out.as<std::uint8_t>() + guard;
        using step08::Phase;
        auto* flag = sink.as<unsigned>();
        const bool cut =
            !step08::output_rows_on_sectors(S, s.rows, reinterpret_cast<std::uintptr_t>(matrix));
        const cudaError_t launched =
            store ? step08::launch_phase<S, Phase::store>(grid, in.get(), matrix, s.rows, s.cols,
                                                          cut, flag, nullptr)
                  : step08::launch_phase<S, Phase::load>(grid, in.get(), matrix, s.rows, s.cols,
                                                         cut, flag, nullptr);
        CUDA_CHECK(launched);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(got.data(), out.get(), got.size(), cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < got.size(); ++i) {
          const bool inside = i >= guard && i < guard + n;
          const std::uint8_t want = store && inside ? 0 : course::kPoisonByte;
          ASSERT_EQ(got[i], want) << (store ? "store" : "load") << " phase, group " << group
                                  << ", byte " << i << " of the buffer (output at " << guard << ")";
        }
      }
    }
  }
  const Variant short_groups{"scalar on groups of 8 tile rows", "256", "-",
                             [](const Problem& p, const void* in, void* out, cudaStream_t st) {
                               const auto cut = !step08::output_rows_on_sectors(
                                   S, p.rows, reinterpret_cast<std::uintptr_t>(out));
                               return step08::launch_scalar_on<S, T>(
                                   step08::grid_with_group(p.rows, p.cols, S, 8), in, out, p.rows,
                                   p.cols, cut, st);
                             }};
  EXPECT_TRUE(course::check_awkward_shapes(short_groups, type));
}

TEST(Step08Patterns, PhasesMoveWhatTheTransposeMoves) {
  REQUIRE_GPU();
  check_phases<4>(ElemType::f32);
  check_phases<8>(ElemType::f64);
}

// ---- CPU: the launcher's decisions -----------------------------------------------------------

using step08::Path;
using step08::Plan;

Plan plan_of(std::size_t size, std::int64_t rows, std::int64_t cols, std::uintptr_t in = 256,
             std::uintptr_t out = 256) {
  Plan p;
  EXPECT_TRUE(step08::plan_transpose(size, rows, cols, in, out, &p))
      << size << "-byte " << rows << " x " << cols;
  return p;
}

TEST(CpuStep08Plan, AlignedRowsTakeTheVectorKernelWhereVectorsPay) {
  for (std::size_t s : {1, 2, 16}) {
    const Plan p = plan_of(s, 16384, 16384);
    EXPECT_EQ(p.path, Path::vector) << s;
    EXPECT_EQ(p.tile.rows, step08::vector_tile(s).rows);
    EXPECT_EQ(p.tile.cols, step08::vector_tile(s).cols);
  }
  // 4- and 8-byte elements take the scalar kernel, uncut: the output rows are on sectors.
  for (std::size_t s : {4, 8}) {
    const Plan p = plan_of(s, 16384, 16384);
    EXPECT_EQ(p.path, Path::scalar) << s;
    EXPECT_EQ(p.tile.rows, step08::scalar_tile(s));
    EXPECT_FALSE(p.realign_out) << s;
  }
  EXPECT_EQ(plan_of(4, 8192, 2048).path, Path::scalar);
  EXPECT_FALSE(plan_of(4, 8192, 2048).realign_out);
  EXPECT_TRUE(plan_of(4, 8196, 2048).realign_out);  // rows of 8196 floats: on 16 bytes, not 32
  EXPECT_EQ(plan_of(2, 8192, 2048).path, Path::vector);
  EXPECT_EQ(plan_of(1, 8192, 2048).path, Path::vector);
  // The smallest aligned rows: 16 bytes (16 int8, 8 halves, 1 struct).
  EXPECT_EQ(plan_of(1, 16, 32).path, Path::vector);
  EXPECT_EQ(plan_of(2, 8, 24).path, Path::vector);
  EXPECT_EQ(plan_of(16, 3, 5).path, Path::vector);  // 16-byte elements are always aligned
  EXPECT_EQ(plan_of(16, 46341, 7).path, Path::vector);
}

TEST(CpuStep08Plan, MisalignedRowsTakeTheScalarKernelWithSectorAlignedWrites) {
  for (std::size_t s : {1, 2, 4, 8}) {
    const Plan p = plan_of(s, 4095, 4097);
    EXPECT_EQ(p.path, Path::scalar) << s;
    EXPECT_EQ(p.tile.rows, step08::scalar_tile(s));
    EXPECT_TRUE(p.realign_out) << s;  // output rows of 4095 elements: off their sectors
  }
  EXPECT_TRUE(plan_of(4, 12345, 6789).realign_out);
  // Input rows of 4097 floats misaligned, output rows of 4096 floats on their sectors.
  Plan p = plan_of(4, 4096, 4097);
  EXPECT_EQ(p.path, Path::scalar);
  EXPECT_FALSE(p.realign_out);
  p = plan_of(4, 4097, 4096);
  EXPECT_EQ(p.path, Path::scalar);
  EXPECT_TRUE(p.realign_out);
  // Output rows of 1004 floats start on 16 bytes but not on 32: vectors are fine on that side,
  // but the input rows (1001 floats) are not, and the writes are cut on sectors.
  p = plan_of(4, 1004, 1001);
  EXPECT_EQ(p.path, Path::scalar);
  EXPECT_TRUE(p.realign_out);
  p = plan_of(8, 1000, 1001);  // output rows of 1000 doubles = 8000 bytes: on sectors
  EXPECT_EQ(p.path, Path::scalar);
  EXPECT_FALSE(p.realign_out);
  p = plan_of(4, 46341, 46341);
  EXPECT_EQ(p.path, Path::scalar);
  EXPECT_EQ(p.blocks, 725 * 725);  // 46341 / 64 rounded up, squared: past 2^31 elements, fine
  EXPECT_EQ(plan_of(1, 16, 24).path, Path::scalar);   // 24 bytes per input row
  EXPECT_EQ(plan_of(1, 24, 16).path, Path::scalar);   // 24 bytes per output row
  EXPECT_EQ(plan_of(2, 8, 12).path, Path::scalar);
  EXPECT_EQ(plan_of(2, 16384, 16380).path, Path::scalar);
}

TEST(CpuStep08Plan, SingleRowsAndColumnsAreCopies) {
  for (std::size_t s : {1, 2, 4, 8, 16}) {
    EXPECT_EQ(plan_of(s, 1, 1).path, Path::copy);
    EXPECT_EQ(plan_of(s, 1, 4099).path, Path::copy);
    EXPECT_EQ(plan_of(s, 4099, 1).path, Path::copy);
  }
}

TEST(CpuStep08Plan, BuffersOffSixteenBytesLeaveTheVectorKernel) {
  // An aligned shape, but one buffer starts past a 16-byte boundary: the scalar kernel, which
  // cuts the writes on sectors only when the output buffer is off them.
  Plan p = plan_of(4, 1024, 1024, 256 + 4, 256);
  EXPECT_EQ(p.path, Path::scalar);
  EXPECT_FALSE(p.realign_out);
  p = plan_of(8, 1024, 1024, 256, 256 + 8);
  EXPECT_EQ(p.path, Path::scalar);
  EXPECT_TRUE(p.realign_out);
  EXPECT_EQ(plan_of(1, 1024, 1024, 256 + 1, 256).path, Path::scalar);
  EXPECT_EQ(plan_of(2, 1024, 1024, 256, 256 + 2).path, Path::scalar);
}

TEST(CpuStep08Plan, RefusesWhatNoKernelCanDo) {
  Plan p;
  EXPECT_FALSE(step08::plan_transpose(3, 10, 10, 0, 0, &p));    // element size
  EXPECT_FALSE(step08::plan_transpose(32, 10, 10, 0, 0, &p));
  EXPECT_FALSE(step08::plan_transpose(4, 0, 10, 0, 0, &p));     // empty
  EXPECT_FALSE(step08::plan_transpose(4, 10, -1, 0, 0, &p));
  EXPECT_FALSE(step08::plan_transpose(4, 64, 64, 2, 0, &p));    // float not on 4 bytes
  EXPECT_FALSE(step08::plan_transpose(8, 64, 64, 0, 4, &p));    // double not on 8 bytes
  EXPECT_FALSE(step08::plan_transpose(16, 64, 64, 8, 0, &p));   // 16-byte element not on 16
  const std::int64_t big = std::int64_t{1} << 40;
  EXPECT_FALSE(step08::plan_transpose(1, big, big, 0, 0, &p));  // bytes overflow 64 bits
  // 2^31 + 1 tiles: one too many blocks for grid.x.
  EXPECT_FALSE(step08::plan_transpose(4, 64, 64 * ((std::int64_t{1} << 31)), 0, 0, &p));
  EXPECT_TRUE(step08::plan_transpose(4, 64, 64 * ((std::int64_t{1} << 31) - 1), 0, 0, &p));
}

// The launchers refuse before touching the GPU, so these run anywhere.
TEST(CpuStep08Launcher, RefusesBeforeLaunching) {
  const auto bad = reinterpret_cast<const void*>(std::uintptr_t{0x1002});
  void* out = reinterpret_cast<void*>(std::uintptr_t{0x1000});
  EXPECT_EQ(step08::transpose(bad, out, 64, 64, 4), cudaErrorInvalidValue);
  EXPECT_EQ(step08::transpose(out, out, 64, 64, 3), cudaErrorInvalidValue);
  EXPECT_EQ(step08::transpose(out, out, 0, 64, 4), cudaErrorInvalidValue);
  const float* none = nullptr;
  EXPECT_EQ(step08::transpose(none, static_cast<float*>(nullptr), 5, 0), cudaErrorInvalidValue);
  // The vector kernel alone refuses rows that do not start on 16 bytes: here the buffers start
  // 8 bytes past a boundary (which 16-byte elements do not even allow).
  void* off = reinterpret_cast<void*>(std::uintptr_t{0x1008});
  for (ElemType t : course::all_elem_types()) {
    for (const Variant& v : step08::variants(t)) {
      if (v.name.rfind("16B vectors", 0) != 0) continue;
      EXPECT_EQ(v.launch(Problem{t, 32, 32, 1}, off, off, nullptr), cudaErrorInvalidValue)
          << course::elem_name(t) << " " << v.name;
    }
  }
}

TEST(CpuStep08Variants, EveryTypeHasTheLauncherAndAFallbackThatTakesAnyShape) {
  for (ElemType t : course::all_elem_types()) {
    const auto v = step08::variants(t);
    ASSERT_GE(v.size(), 3u);
    EXPECT_EQ(v.front().name, "auto");
    EXPECT_EQ(v.back().name, "scalar, writes cut on sectors");
  }
  const Problem odd{ElemType::f32, 4095, 4097, 1};
  EXPECT_EQ(step08::auto_variant(ElemType::f32, &odd).name,
            "auto: scalar, sector-aligned writes");
  const Problem even{ElemType::i8, 16384, 16384, 1};
  EXPECT_EQ(step08::auto_variant(ElemType::i8, &even).name, "auto: 16B vectors");
  EXPECT_EQ(step08::auto_variant(ElemType::i8, &even).tile, "128x128");
  const Problem floats{ElemType::f32, 16384, 16384, 1};
  EXPECT_EQ(step08::auto_variant(ElemType::f32, &floats).name, "auto: scalar");
  EXPECT_EQ(step08::auto_variant(ElemType::f32, &floats).tile, "64x64");
}

// ---- CPU: the register transposes ------------------------------------------------------------

TEST(CpuStep08Registers, BytePermMatchesPrmt) {
  const std::uint32_t x = 0x33221100, y = 0x77665544;
  EXPECT_EQ(step08::byte_perm(x, y, 0x3210), x);
  EXPECT_EQ(step08::byte_perm(x, y, 0x7654), y);
  EXPECT_EQ(step08::byte_perm(x, y, 0x5140), 0x55114400u);
  EXPECT_EQ(step08::byte_perm(x, y, 0x0123), 0x00112233u);
}

// Byte (row r, col c) of the block holds 16 r + c, so a wrong lane of any permute shows.
TEST(CpuStep08Registers, PacksFourRowsOfBytesIntoColumnWords) {
  step08::Vec16 v[4];
  for (int r = 0; r < 4; ++r)
    for (int w = 0; w < 4; ++w) {
      std::uint32_t word = 0;
      for (int b = 0; b < 4; ++b) word |= static_cast<std::uint32_t>(16 * r + 4 * w + b) << (8 * b);
      v[r].w[w] = word;
    }
  std::uint32_t u[16];
  step08::Pack<1>::to_units(v, u);
  for (int c = 0; c < 16; ++c)
    for (int r = 0; r < 4; ++r)
      EXPECT_EQ((u[c] >> (8 * r)) & 0xFF, static_cast<std::uint32_t>(16 * r + c))
          << "column " << c << ", row " << r;
}

TEST(CpuStep08Registers, PacksTwoRowsOfHalvesIntoColumnWords) {
  step08::Vec16 v[2];
  for (int r = 0; r < 2; ++r)
    for (int w = 0; w < 4; ++w)
      v[r].w[w] = static_cast<std::uint32_t>(0x100 * r + 2 * w) |
                  static_cast<std::uint32_t>(0x100 * r + 2 * w + 1) << 16;
  std::uint32_t u[8];
  step08::Pack<2>::to_units(v, u);
  for (int c = 0; c < 8; ++c)
    for (int r = 0; r < 2; ++r)
      EXPECT_EQ((u[c] >> (16 * r)) & 0xFFFF, static_cast<std::uint32_t>(0x100 * r + c))
          << "column " << c << ", row " << r;
}

TEST(CpuStep08Registers, WideElementsAreTakenWhole) {
  const step08::Vec16 v[1] = {{{0x11111111u, 0x22222222u, 0x33333333u, 0x44444444u}}};
  uint2 d[2];
  step08::Pack<8>::to_units(v, d);
  EXPECT_EQ(d[1].x, 0x33333333u);
  EXPECT_EQ(d[1].y, 0x44444444u);
  step08::Vec16 x{};
  step08::set_element<8>(x, 1, d[0]);
  EXPECT_EQ(x.w[2], 0x11111111u);
  EXPECT_EQ(step08::get_element<4>(v[0], 3), 0x44444444u);
}

// ---- CPU: the shared-memory layout -----------------------------------------------------------

// The conflict degree of one warp instruction in which lane i touches `bytes` bytes at byte
// offset addr[i] (-1: inactive). Accesses wider than 4 bytes are served a part of the warp at a
// time (8 bytes: half a warp, 16 bytes: a quarter), so each part is scored on its own.
int degree(const std::vector<int>& addr, int bytes) {
  const int lanes_per_phase = bytes <= 4 ? 32 : 128 / bytes;
  int worst = 1;
  for (int begin = 0; begin < 32; begin += lanes_per_phase) {
    std::vector<std::int64_t> words;
    for (int lane = begin; lane < begin + lanes_per_phase; ++lane) {
      if (addr[lane] < 0) continue;
      for (int w = 0; w < (bytes < 4 ? 1 : bytes / 4); ++w) words.push_back(addr[lane] / 4 + w);
    }
    worst = std::max(worst, course::conflict_degree(words));
  }
  return worst;
}

template <int S, int TR, int TC>
void check_layout() {
  using L = step08::TileShape<S, TR, TC>;
  SCOPED_TRACE(std::to_string(S) + "-byte elements, tile " + std::to_string(TR) + "x" +
               std::to_string(TC));
  // Every unit has its own place inside the tile, and chunk q of a row holds units
  // q*kUnitsPerChunk onwards, in order.
  std::set<int> seen;
  for (int c = 0; c < TC; ++c)
    for (int u = 0; u < L::kUnitRows; ++u) {
      const int off = L::unit_offset(c, u);
      ASSERT_TRUE(off >= 0 && off + L::kUnit <= L::kBytes && off % L::kUnit == 0);
      ASSERT_TRUE(seen.insert(off).second) << "unit (" << c << ", " << u << ") stored twice";
      ASSERT_EQ(off, L::chunk_offset(c, u / L::kUnitsPerChunk) + u % L::kUnitsPerChunk * L::kUnit);
      // The kernel's shortcut: the columns of one vector share the swizzle of its first column.
      const int first = c / L::kVec * L::kVec;
      ASSERT_EQ(off, L::unit_offset(first, u) + (c - first) * L::kRowBytes);
    }
  // Load phase: every pass covers each (vector, unit row) once, and each of its V unit writes
  // is conflict-free.
  std::set<std::pair<int, int>> slots;
  for (int p = 0; p < L::kLoadPasses; ++p)
    for (int warp = 0; warp < step08::kThreads / 32; ++warp)
      for (int e = 0; e < L::kVec; ++e) {
        std::vector<int> addr(32);
        for (int lane = 0; lane < 32; ++lane) {
          const step08::Slot s = step08::load_slot(L::kInVecs, 32 * warp + lane, p);
          ASSERT_LT(s.vec, L::kInVecs);
          ASSERT_LT(s.row, L::kUnitRows);
          if (e == 0) ASSERT_TRUE(slots.insert({s.vec, s.row}).second);
          addr[lane] = L::unit_offset(s.vec * L::kVec + e, s.row);
        }
        EXPECT_EQ(degree(addr, L::kUnit), 1) << "unit write, pass " << p << ", element " << e;
      }
  EXPECT_EQ(slots.size(), static_cast<std::size_t>(L::kInVecs * L::kUnitRows));
  // Store phase: 16-byte chunk reads, conflict-free.
  for (int p = 0; p < L::kStorePasses; ++p)
    for (int warp = 0; warp < step08::kThreads / 32; ++warp) {
      std::vector<int> addr(32);
      for (int lane = 0; lane < 32; ++lane) {
        const int f = 32 * warp + lane + step08::kThreads * p;
        addr[lane] = L::chunk_offset(f / L::kOutChunks, f % L::kOutChunks);
      }
      EXPECT_EQ(degree(addr, 16), 1) << "chunk read, pass " << p;
    }
}

TEST(CpuStep08Layout, EveryTileIsAPermutationAndConflictFree) {
  check_layout<1, 128, 128>();
  check_layout<1, 256, 128>();
  check_layout<2, 128, 64>();
  check_layout<2, 64, 128>();
  check_layout<2, 128, 128>();
  check_layout<4, 64, 64>();
  check_layout<4, 128, 64>();
  check_layout<8, 64, 32>();
  check_layout<8, 32, 64>();
  check_layout<8, 32, 32>();
  check_layout<16, 32, 32>();
  check_layout<16, 16, 16>();
}

// Realigned rows: row r of the tile starts m_r elements past a 16-byte boundary. The writes of
// the input side stay conflict-free whatever the m_r; the gathers of the output side conflict
// at most 2 ways (when two of a warp's 4 output rows share their m).
template <int S, int TR, int TC>
void check_realigned(std::int64_t rows, std::int64_t cols) {
  using L = step08::TileShape<S, TR, TC>;
  constexpr int V = L::kVec;
  SCOPED_TRACE(std::to_string(S) + "-byte, " + std::to_string(rows) + " x " + std::to_string(cols));
  for (std::int64_t r0 : {std::int64_t{0}, std::int64_t{TR}, std::int64_t{3 * TR}})
    for (std::int64_t c0 : {std::int64_t{0}, std::int64_t{TC}, std::int64_t{5 * TC}}) {
      for (int p = 0; p < L::kLoadPasses; ++p)
        for (int warp = 0; warp < 8; ++warp)
          for (int e = 0; e < V; ++e) {
            std::vector<int> addr(32, -1);
            for (int lane = 0; lane < 32; ++lane) {
              const step08::Slot s = step08::load_slot(L::kInVecs, 32 * warp + lane, p);
              const int m = static_cast<int>(((r0 + s.row) * cols + c0) % V);
              const int c = s.vec * V + e - m;
              if (c >= 0 && c < TC) addr[lane] = L::unit_offset(c, s.row);
            }
            EXPECT_EQ(degree(addr, S), 1) << "realigned write, pass " << p;
          }
      for (int p = 0; p < L::kStorePasses; ++p)
        for (int warp = 0; warp < 8; ++warp)
          for (int e = 0; e < V; ++e) {
            std::vector<int> addr(32, -1);
            for (int lane = 0; lane < 32; ++lane) {
              const step08::Slot s = step08::load_slot(L::kOutChunks, 32 * warp + lane, p);
              const int m = static_cast<int>(((c0 + s.row) * rows + r0) % V);
              const int r = s.vec * V + e - m;
              if (r >= 0 && r < TR) addr[lane] = L::unit_offset(s.row, r);
            }
            EXPECT_LE(degree(addr, S), 2) << "realigned gather, pass " << p;
          }
    }
}

TEST(CpuStep08Layout, RealignedRowsStayNearlyConflictFree) {
  check_realigned<4, 64, 64>(4095, 4097);
  check_realigned<4, 64, 64>(12345, 6789);
  check_realigned<4, 64, 64>(4098, 4094);
  check_realigned<4, 64, 64>(46341, 46341);
  check_realigned<8, 64, 32>(4095, 4097);
  check_realigned<8, 64, 32>(1001, 999);
}

// ---- CPU: the kernels' own code, run thread by thread --------------------------------------

// The halves of each kernel are __host__ __device__ functions of the thread index, so the CPU
// can run a block exactly as the GPU would: every thread through the load half, then (the
// barrier) every thread through the store half, on a "shared memory" array framed by poison
// that must stay intact. This checks the index arithmetic of every path on every shape without
// a GPU; the GPU tests above check the same on the hardware.
constexpr std::size_t kGuard = 256;

std::uint8_t* aligned16(std::vector<std::uint8_t>& v) {
  const auto p = reinterpret_cast<std::uintptr_t>(v.data());
  return v.data() + (16 - p % 16) % 16;
}

template <int S, int TR, int TC, bool RealignIn, bool RealignOut>
void emulate_vec(const std::uint8_t* in, std::uint8_t* out, std::int64_t rows, std::int64_t cols) {
  using Tile = step08::VecTile<S, TR, TC, RealignIn, RealignOut>;
  constexpr std::size_t n = Tile::L::kBytes;
  std::vector<std::uint8_t> storage(n + 2 * kGuard + 16);
  std::uint8_t* const smem = aligned16(storage) + kGuard;
  const step08::TileGrid grid = step08::make_grid(rows, cols, TR, TC, S);
  for (std::uint32_t b = 0; b < grid.tiles(); ++b) {
    std::fill(smem - kGuard, smem + n + kGuard, course::kPoisonByte);
    std::int64_t ty, tx;
    grid.tile(b, &ty, &tx);
    const step08::Corner at{ty * TR, tx * TC};
    for (unsigned t = 0; t < step08::kThreads; ++t) Tile::load(t, in, rows, cols, at, smem);
    for (unsigned t = 0; t < step08::kThreads; ++t) Tile::store(t, out, rows, cols, at, smem);
    for (std::size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(smem[-1 - static_cast<std::ptrdiff_t>(i)], course::kPoisonByte) << "wrote before the tile";
      ASSERT_EQ(smem[n + i], course::kPoisonByte) << "wrote past the tile";
    }
  }
}

template <int S, int T, bool Cut>
void emulate_scalar(const std::uint8_t* in, std::uint8_t* out, std::int64_t rows,
                    std::int64_t cols) {
  using Tile = step08::ScalarTile<S, T, Cut>;
  using E = typename Tile::E;
  struct Shared {
    typename Tile::Array tile;
  };
  auto smem = std::make_unique<Shared>();
  const step08::TileGrid grid = step08::make_grid(rows, cols, T, T, S);
  const int phase = Tile::phase_of(out);
  const auto* src = reinterpret_cast<const E*>(in);
  auto* dst = reinterpret_cast<E*>(out);
  for (std::uint32_t b = 0; b < grid.tiles(); ++b) {
    std::int64_t ty, tx;
    grid.tile(b, &ty, &tx);
    const std::int64_t r0 = ty * T, c0 = tx * T;
    const bool last = ty == grid.tiles_r - 1;
    // The same branch as the kernel: whole tiles take the path without bounds tests.
    if (Tile::whole(rows, cols, r0, c0)) {
      for (unsigned t = 0; t < step08::kThreads; ++t) {
        Tile::template load<true>(t, src, rows, cols, r0, c0, smem->tile);
      }
      for (unsigned t = 0; t < step08::kThreads; ++t) {
        Tile::template store<true>(t, dst, rows, cols, r0, c0, phase, last, smem->tile);
      }
    } else {
      for (unsigned t = 0; t < step08::kThreads; ++t) {
        Tile::template load<false>(t, src, rows, cols, r0, c0, smem->tile);
      }
      for (unsigned t = 0; t < step08::kThreads; ++t) {
        Tile::template store<false>(t, dst, rows, cols, r0, c0, phase, last, smem->tile);
      }
    }
  }
}
template <int S, int T>
void emulate_scalar(const std::uint8_t* in, std::uint8_t* out, std::int64_t rows,
                    std::int64_t cols, bool realign) {
  return realign ? emulate_scalar<S, T, true>(in, out, rows, cols)
                 : emulate_scalar<S, T, false>(in, out, rows, cols);
}

// The scalar kernel with the output cut at tile edges, and cut on sectors.
template <int S>
void emulate_scalar_plain(const std::uint8_t* in, std::uint8_t* out, std::int64_t rows,
                          std::int64_t cols) {
  emulate_scalar<S, step08::scalar_tile(S)>(in, out, rows, cols, false);
}
template <int S>
void emulate_scalar_realigned(const std::uint8_t* in, std::uint8_t* out, std::int64_t rows,
                              std::int64_t cols) {
  emulate_scalar<S, step08::scalar_tile(S)>(in, out, rows, cols, true);
}

// What step08::transpose launches, run on the CPU: the same plan, the same templates.
template <int S>
void emulate_plan(const Plan& plan, const std::uint8_t* in, std::uint8_t* out,
                  std::int64_t rows, std::int64_t cols) {
  constexpr step08::TileSize vt = step08::vector_tile(S);
  switch (plan.path) {
    case Path::copy:
      std::memcpy(out, in, static_cast<std::size_t>(rows * cols) * S);
      return;
    case Path::vector:
      return emulate_vec<S, vt.rows, vt.cols, false, false>(in, out, rows, cols);
    case Path::scalar:
      return emulate_scalar<S, step08::scalar_tile(S)>(in, out, rows, cols, plan.realign_out);
  }
}

using Runner = std::function<void(const std::uint8_t*, std::uint8_t*, std::int64_t, std::int64_t)>;

Runner emulated_launcher(std::size_t size) {
  return [size](const std::uint8_t* in, std::uint8_t* out, std::int64_t rows, std::int64_t cols) {
    Plan plan;
    ASSERT_TRUE(step08::plan_transpose(size, rows, cols, reinterpret_cast<std::uintptr_t>(in),
                                       reinterpret_cast<std::uintptr_t>(out), &plan));
    switch (size) {
      case 1: return emulate_plan<1>(plan, in, out, rows, cols);
      case 2: return emulate_plan<2>(plan, in, out, rows, cols);
      case 4: return emulate_plan<4>(plan, in, out, rows, cols);
      case 8: return emulate_plan<8>(plan, in, out, rows, cols);
      default: return emulate_plan<16>(plan, in, out, rows, cols);
    }
  };
}

// Transposes a fresh pattern with @p run into a poisoned output framed by guard bands, with the
// input and output starting @p shift bytes past a 16-byte boundary, and checks every bit.
void check_emulated(const Runner& run, ElemType type, std::int64_t rows, std::int64_t cols,
                    std::size_t shift = 0) {
  const Problem p{type, rows, cols, 1};
  const std::size_t n = p.bytes();
  SCOPED_TRACE(p.describe() + (shift ? ", buffers shifted by " + std::to_string(shift) : ""));
  std::vector<std::uint8_t> in_store(n + 16 + shift), out_store(n + 2 * kGuard + 16 + shift);
  std::uint8_t* in = aligned16(in_store) + shift;
  std::uint8_t* out_frame = aligned16(out_store);
  std::uint8_t* out = out_frame + kGuard + shift;
  const std::uint64_t seed = course::fresh_seed();
  course::fill_pattern(type, in, p.elements(), seed);
  std::vector<std::uint8_t> ref(n);
  course::cpu_transpose(p, in, ref.data());
  std::fill(out_frame, out_frame + n + 2 * kGuard + shift, course::kPoisonByte);
  run(in, out, rows, cols);
  if (::testing::Test::HasFatalFailure()) return;
  for (std::uint8_t* g = out_frame; g < out; ++g) ASSERT_EQ(*g, course::kPoisonByte) << "wrote before the output";
  for (std::size_t i = 0; i < kGuard; ++i) ASSERT_EQ(out[n + i], course::kPoisonByte) << "wrote past the output";
  const course::VerifyResult r = course::verify_transpose(p, ref.data(), out);
  ASSERT_TRUE(r.ok) << "seed " << seed << ": " << r.message;
}

std::vector<course::Shape> every_test_shape() {
  std::vector<course::Shape> shapes = course::awkward_shapes();
  for (const course::Shape& s : aligned_edge_shapes()) shapes.push_back(s);
  return shapes;
}

TEST(CpuStep08Emulated, LauncherTransposesEveryShapeOfEveryType) {
  for (ElemType t : course::all_elem_types()) {
    for (const course::Shape& s : every_test_shape()) {
      check_emulated(emulated_launcher(course::elem_size(t)), t, s.rows, s.cols);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(CpuStep08Emulated, LauncherTakesBuffersOffSixteenBytes) {
  const course::Shape shapes[] = {{64, 64}, {100, 37}, {129, 256}, {256, 129}, {33, 1}, {7, 13}};
  for (ElemType t : course::all_elem_types()) {
    const std::size_t size = course::elem_size(t);
    for (std::size_t shift = size; shift < 16; shift += size) {
      for (const course::Shape& s : shapes) {
        check_emulated(emulated_launcher(size), t, s.rows, s.cols, shift);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Each path on its own, on every shape it takes: the vector kernels (every tile shape of the
// table) on the shapes whose rows are aligned, the scalar kernel (both cuts) and the realigned
// vector kernels of the table on all.
template <int S>
void check_every_path(ElemType type) {
  SCOPED_TRACE(std::string("type ") + course::elem_name(type));
  std::vector<Runner> any_shape = {emulate_scalar_plain<S>, emulate_scalar_realigned<S>};
  if constexpr (S == 4 || S == 8) {
    constexpr step08::TileSize vt = step08::vector_tile(S);
    any_shape.push_back(emulate_vec<S, vt.rows, vt.cols, true, true>);
    any_shape.push_back(emulate_vec<S, vt.rows, vt.cols, true, false>);  // rows aligned only
    any_shape.push_back(emulate_vec<S, vt.rows, vt.cols, false, true>);
  }
  std::vector<Runner> aligned;
  if constexpr (S == 1) aligned = {emulate_vec<1, 128, 128, false, false>, emulate_vec<1, 256, 128, false, false>};
  if constexpr (S == 2) {
    aligned = {emulate_vec<2, 128, 64, false, false>, emulate_vec<2, 64, 128, false, false>,
               emulate_vec<2, 128, 128, false, false>};
  }
  if constexpr (S == 4) aligned = {emulate_vec<4, 64, 64, false, false>, emulate_vec<4, 128, 64, false, false>};
  if constexpr (S == 8) {
    aligned = {emulate_vec<8, 64, 32, false, false>, emulate_vec<8, 32, 64, false, false>,
               emulate_vec<8, 32, 32, false, false>};
  }
  if constexpr (S == 16) aligned = {emulate_vec<16, 32, 32, false, false>, emulate_vec<16, 16, 16, false, false>};

  for (const course::Shape& s : every_test_shape()) {
    const bool in_ok = step08::input_rows_aligned(S, s.cols, 0);
    const bool out_ok = step08::output_rows_aligned(S, s.rows, 0);
    for (std::size_t i = 0; i < any_shape.size(); ++i) {
      // The half-realigned vector kernels need the other side aligned.
      if ((i == 3 && !out_ok) || (i == 4 && !in_ok)) continue;
      check_emulated(any_shape[i], type, s.rows, s.cols);
      if (::testing::Test::HasFatalFailure()) return;
    }
    if (!in_ok || !out_ok) continue;
    for (const Runner& run : aligned) {
      check_emulated(run, type, s.rows, s.cols);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(CpuStep08Emulated, EveryPathOnEveryShapeItTakes) {
  check_every_path<1>(ElemType::i8);
  check_every_path<2>(ElemType::f16);
  check_every_path<4>(ElemType::f32);
  check_every_path<8>(ElemType::f64);
  check_every_path<16>(ElemType::b128);
}

// ---- CPU: the tile order -------------------------------------------------------------------

TEST(CpuStep08Grid, VisitsEveryTileOnceInGroupsOfTileRows) {
  // Tiles 1 to 64 bytes wide: groups of 1 to 64 tile rows (kBlocksInFlight = kReadPiece).
  for (int width : {1, 8, 64})
    for (std::int64_t tr : {1, 3, 8, 9, 17, 64, 65, 200})
      for (std::int64_t tc : {1, 2, 7, 33}) {
        const step08::TileGrid g = step08::make_grid(tr * 2 - 1, tc * width, 2, width, 1);
        const std::int64_t want =
            step08::kBlocksInFlight * width / step08::kReadPiece;  // tile rows per group
        ASSERT_EQ(g.tiles_r, tr);
        ASSERT_EQ(g.tiles_c, tc);
        ASSERT_EQ(g.group_rows, std::min(tr, want));
        std::set<std::pair<std::int64_t, std::int64_t>> seen;
        for (std::int64_t b = 0; b < g.tiles(); ++b) {
          std::int64_t ty, tx;
          g.tile(b, &ty, &tx);
          ASSERT_TRUE(ty >= 0 && ty < tr && tx >= 0 && tx < tc) << tr << "x" << tc << " block " << b;
          ASSERT_TRUE(seen.insert({ty, tx}).second) << tr << "x" << tc << " block " << b;
          // Blocks of one group share group_rows tile rows, and walk down them first.
          ASSERT_EQ(ty / g.group_rows, b / (std::int64_t{g.group_rows} * tc));
        }
      }
  // Past 2^31 elements the grid still fits: 46341^2 floats in 64x64 tiles.
  const step08::TileGrid big = step08::make_grid(46341, 46341, 64, 64, 4);
  std::int64_t ty, tx;
  big.tile(big.tiles() - 1, &ty, &tx);
  EXPECT_EQ(ty, 724);
  EXPECT_EQ(tx, 724);
}

}  // namespace
