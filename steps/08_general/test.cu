// Step 08 tests.
//   GPU: every kernel of the lesson in every element type on the awkward shapes, aligned shapes
//        with partial tiles for the vector kernel, matrices taller than one group of the tile
//        order, buffers that do not start on 16 bytes, and (label large) matrices past 2^31
//        elements on each path.
//   CPU: the launcher's decisions, the register transposes, the shared-memory layout (every unit
//        stored once, no bank conflicts), the kernels' own code run thread by thread on every
//        shape, type and path, the tile order, and the refusals.
// The lab's kernels (tile shapes tried, realigned vectors, step08_patterns) are tested in
// lab/test.cu.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <vector>

#include "check.cuh"
#include "device_buffer.cuh"
#include "host_data.hpp"
#include "test_support.cuh"
#include "testing.cuh"
#include "variants.cuh"

namespace {

using course::ElemType;
using course::Problem;
using course::Variant;
using step08_test::aligned_edge_shapes;
using step08_test::Case;

// ---- GPU: every kernel, every type -----------------------------------------------------------

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

INSTANTIATE_TEST_SUITE_P(General, Step08,
                         ::testing::ValuesIn(step08_test::cases_of(
                             [](ElemType t) { return step08::variants(t); })),
                         step08_test::case_name);

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

// ---- GPU: the shifted vectors on rows off 16 bytes ------------------------------------------

// The course's misaligned targets and their one-side-aligned neighbours, rows shorter than a
// vector, 1 x N and N x 1, for bytes and halves: the shifted kernel on its own and the launcher
// (which takes it), then both from and to buffers that start one element past 16 bytes.
TEST(Step08Shifted, TransposesMisalignedShapesOfBytesAndHalves) {
  REQUIRE_GPU();
  std::vector<course::Shape> shapes = {{4095, 4097}, {4096, 4097}, {4097, 4096}, {8191, 8193},
                                       {12345, 6789}, {1, 4097}, {4097, 1}, {3, 40001},
                                       {40001, 3}};
  for (const course::Shape& s : step08_test::misaligned_shapes()) shapes.push_back(s);
  for (ElemType t : {ElemType::i8, ElemType::f16, ElemType::bf16}) {
    const Variant shifted = course::elem_size(t) == 1 ? step08::shifted_variant<1>()
                                                      : step08::shifted_variant<2>();
    for (const course::Shape& s : shapes) {
      const Problem p{t, s.rows, s.cols, 1};
      EXPECT_TRUE(course::check_transpose(shifted, p));
      EXPECT_TRUE(course::check_transpose(step08::auto_variant(t), p));
      EXPECT_TRUE(course::check_transpose(shifted, p, false, course::elem_size(t)));
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
// vectors, so this is the scalar path with writes cut on sectors (~8.6 GB per matrix).
TEST(Step08Large, F32Over2To31ElementsScalarCutOnSectors) {
  REQUIRE_GPU();
  check_large(ElemType::f32, 46341, 46341, step08::Path::scalar);
}

// The packed vector path past 2^31 elements (46352 is a multiple of 16; ~2.1 GB per matrix).
TEST(Step08Large, I8Over2To31ElementsVector) {
  REQUIRE_GPU();
  check_large(ElemType::i8, 46352, 46352, step08::Path::vector);
}

// The shifted vector path past 2^31 elements (rows of 46341 bytes: off 16 bytes on both sides).
TEST(Step08Large, I8Over2To31ElementsShifted) {
  REQUIRE_GPU();
  check_large(ElemType::i8, 46341, 46341, step08::Path::shifted);
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
  for (std::size_t s : {1, 2, 16}) EXPECT_EQ(plan_of(s, 16384, 16384).path, Path::vector) << s;
  // 4- and 8-byte elements take the scalar kernel, uncut: the output rows are on sectors.
  for (std::size_t s : {4, 8}) {
    const Plan p = plan_of(s, 16384, 16384);
    EXPECT_EQ(p.path, Path::scalar) << s;
    EXPECT_FALSE(p.cut) << s;
  }
  EXPECT_EQ(plan_of(4, 8192, 2048).path, Path::scalar);
  EXPECT_FALSE(plan_of(4, 8192, 2048).cut);
  EXPECT_TRUE(plan_of(4, 8196, 2048).cut);  // rows of 8196 floats: on 16 bytes, not 32
  EXPECT_EQ(plan_of(2, 8192, 2048).path, Path::vector);
  EXPECT_EQ(plan_of(1, 8192, 2048).path, Path::vector);
  // The smallest aligned rows: 16 bytes (16 int8, 8 halves, 1 struct).
  EXPECT_EQ(plan_of(1, 16, 32).path, Path::vector);
  EXPECT_EQ(plan_of(2, 8, 24).path, Path::vector);
  EXPECT_EQ(plan_of(16, 3, 5).path, Path::vector);  // 16-byte elements are always aligned
  EXPECT_EQ(plan_of(16, 46341, 7).path, Path::vector);
}

TEST(CpuStep08Plan, MisalignedRowsTakeTheScalarKernelWithSectorAlignedWrites) {
  for (std::size_t s : {4, 8}) {
    const Plan p = plan_of(s, 4095, 4097);
    EXPECT_EQ(p.path, Path::scalar) << s;
    EXPECT_TRUE(p.cut) << s;  // output rows of 4095 elements: off their sectors
  }
  EXPECT_TRUE(plan_of(4, 12345, 6789).cut);
  // Input rows of 4097 floats misaligned, output rows of 4096 floats on their sectors.
  Plan p = plan_of(4, 4096, 4097);
  EXPECT_EQ(p.path, Path::scalar);
  EXPECT_FALSE(p.cut);
  p = plan_of(4, 4097, 4096);
  EXPECT_EQ(p.path, Path::scalar);
  EXPECT_TRUE(p.cut);
  // Output rows of 1004 floats start on 16 bytes but not on 32: vectors are fine on that side,
  // but the input rows (1001 floats) are not, and the writes are cut on sectors.
  p = plan_of(4, 1004, 1001);
  EXPECT_EQ(p.path, Path::scalar);
  EXPECT_TRUE(p.cut);
  p = plan_of(8, 1000, 1001);  // output rows of 1000 doubles = 8000 bytes: on sectors
  EXPECT_EQ(p.path, Path::scalar);
  EXPECT_FALSE(p.cut);
  EXPECT_EQ(plan_of(4, 46341, 46341).path, Path::scalar);
  // 46341 / 64 rounded up, squared: past 2^31 elements, the grid still fits.
  EXPECT_EQ(step08::blocks_for(46341, 46341, {64, 64}), 725 * 725);
}

// Bytes off 16 bytes on either side take the shifted vectors. Halves take the scalar kernel,
// which measured ahead of the shifted vectors for them (the lesson's table).
TEST(CpuStep08Plan, MisalignedByteRowsTakeTheShiftedVectors) {
  Plan p = plan_of(1, 4095, 4097);
  EXPECT_EQ(p.path, Path::shifted);
  EXPECT_TRUE(p.cut);
  EXPECT_EQ(step08::describe(p), "shifted vectors, sector-aligned writes");
  p = plan_of(1, 4096, 4097);  // input rows off 16 bytes, output rows on sectors: no lead
  EXPECT_EQ(p.path, Path::shifted);
  EXPECT_FALSE(p.cut);
  p = plan_of(1, 4097, 4096);  // input rows aligned, output rows off them
  EXPECT_EQ(p.path, Path::shifted);
  EXPECT_TRUE(p.cut);
  EXPECT_EQ(plan_of(1, 12345, 6789).path, Path::shifted);
  EXPECT_EQ(plan_of(1, 46341, 46341).path, Path::shifted);
  EXPECT_EQ(plan_of(1, 16, 24).path, Path::shifted);  // 24 bytes per input row
  EXPECT_EQ(plan_of(1, 24, 16).path, Path::shifted);  // 24 bytes per output row
  // Output rows of 16 bytes, not 32: aligned vectors both sides, the plain vector kernel.
  EXPECT_EQ(plan_of(1, 16, 16).path, Path::vector);
  for (auto shape : {std::pair<std::int64_t, std::int64_t>{4095, 4097}, {12345, 6789}, {8, 12},
                     {16384, 16380}}) {
    EXPECT_EQ(plan_of(2, shape.first, shape.second).path, Path::scalar)
        << shape.first << " x " << shape.second;
  }
  EXPECT_EQ(step08::describe(plan_of(2, 4095, 4097)), "scalar, sector-aligned writes");
}

// Each GPU's rules: the H200 runs the shifted bytes at three blocks per SM and takes the shifted
// vectors for halves too; every other plan is the H100's, which any GPU the course has no data
// for gets.
TEST(CpuStep08Plan, EachGpuHasItsOwnRules) {
  using step08::Gpu;
  EXPECT_EQ(step08::gpu_named("NVIDIA H200"), Gpu::h200);
  EXPECT_EQ(step08::gpu_named("NVIDIA H200 NVL"), Gpu::h200);
  EXPECT_EQ(step08::gpu_named("NVIDIA H100 80GB HBM3"), Gpu::h100);
  EXPECT_EQ(step08::gpu_named("NVIDIA A100-SXM4-80GB"), Gpu::h100);
  Plan h200;
  ASSERT_TRUE(step08::plan_transpose(1, 12345, 6789, 256, 256, &h200, Gpu::h200));
  EXPECT_EQ(h200.path, Path::shifted);
  EXPECT_EQ(h200.min_blocks, 3);
  EXPECT_EQ(step08::describe(h200), "shifted vectors, sector-aligned writes, 3 blocks per SM");
  EXPECT_EQ(plan_of(1, 12345, 6789).min_blocks, 0);  // the H100's rule
  ASSERT_TRUE(step08::plan_transpose(2, 12345, 6789, 256, 256, &h200, Gpu::h200));
  EXPECT_EQ(step08::describe(h200), "shifted vectors, sector-aligned writes");
  EXPECT_EQ(plan_of(2, 12345, 6789).path, Path::scalar);  // the H100's rule
  for (std::size_t s : {1, 2, 4, 8, 16}) {
    for (std::int64_t rows : {1, 16, 4095, 4096, 12345}) {
      for (std::int64_t cols : {1, 24, 4096, 4097, 6789}) {
        Plan h100 = plan_of(s, rows, cols);
        ASSERT_TRUE(step08::plan_transpose(s, rows, cols, 256, 256, &h200, Gpu::h200));
        const bool halves = s == 2 && h100.path == Path::scalar;  // the H200 shifts them
        EXPECT_EQ(h200.path, halves ? Path::shifted : h100.path) << s << "-byte " << rows << " x "
                                                                 << cols;
        EXPECT_EQ(h200.cut, h100.cut);
        EXPECT_EQ(h200.min_blocks, s == 1 && h100.path == Path::shifted ? 3 : 0);
        EXPECT_EQ(h100.min_blocks, 0);
      }
    }
  }
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
  EXPECT_FALSE(p.cut);
  p = plan_of(8, 1024, 1024, 256, 256 + 8);
  EXPECT_EQ(p.path, Path::scalar);
  EXPECT_TRUE(p.cut);
  EXPECT_EQ(plan_of(1, 1024, 1024, 256 + 1, 256).path, Path::shifted);
  p = plan_of(1, 1024, 1024, 256, 256 + 1);
  EXPECT_EQ(p.path, Path::shifted);
  EXPECT_TRUE(p.cut);
  p = plan_of(2, 1024, 1024, 256, 256 + 2);
  EXPECT_EQ(p.path, Path::scalar);
  EXPECT_TRUE(p.cut);
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
  // A grid of 2^31 tiles is one block too many for grid.x; 2^31 - 1 fit.
  EXPECT_EQ(step08::blocks_for(64, 64 * (std::int64_t{1} << 31), {64, 64}), -1);
  EXPECT_EQ(step08::blocks_for(64, 64 * ((std::int64_t{1} << 31) - 1), {64, 64}),
            (std::int64_t{1} << 31) - 1);
}

// The launchers refuse before touching the GPU, so these run anywhere.
TEST(CpuStep08Launcher, RefusesBeforeLaunching) {
  const auto bad = reinterpret_cast<const void*>(std::uintptr_t{0x1002});
  void* out = reinterpret_cast<void*>(std::uintptr_t{0x1000});
  EXPECT_EQ(step08::transpose_elements<4>(bad, out, 64, 64), cudaErrorInvalidValue);
  EXPECT_EQ(step08::transpose_elements<4>(out, out, 0, 64), cudaErrorInvalidValue);
  const float* none = nullptr;
  EXPECT_EQ(step08::transpose(none, static_cast<float*>(nullptr), 5, 0), cudaErrorInvalidValue);
  // 2^31 tiles, one block too many for grid.x: each kernel's launch refuses (the scalar kernel's
  // 64-wide tiles, the vector kernel's 128 bytes, the shifted kernel's 128 bytes, cut).
  const std::int64_t tiles = std::int64_t{1} << 31;
  ASSERT_EQ(plan_of(4, 64, 64 * tiles, 0x1000, 0x1000).path, Path::scalar);
  EXPECT_EQ(step08::transpose_elements<4>(out, out, 64, 64 * tiles), cudaErrorInvalidValue);
  ASSERT_EQ(plan_of(1, 128, 128 * tiles, 0x1000, 0x1000).path, Path::vector);
  EXPECT_EQ(step08::transpose_elements<1>(out, out, 128, 128 * tiles), cudaErrorInvalidValue);
  ASSERT_EQ(plan_of(1, 63, 128 * tiles - 1, 0x1000, 0x1000).path, Path::shifted);
  EXPECT_EQ(step08::transpose_elements<1>(out, out, 63, 128 * tiles - 1), cudaErrorInvalidValue);
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

TEST(CpuStep08Variants, EveryTypeHasTheLauncherAndEachOfItsPaths) {
  for (ElemType t : course::all_elem_types()) {
    const std::size_t size = course::elem_size(t);
    const auto v = step08::variants(t);
    const std::size_t shifted = size <= 2 ? 1 : 0;  // the shifted kernel: bytes and halves
    ASSERT_EQ(v.size(), 4u + shifted);
    EXPECT_EQ(v[0].name, "auto");
    const step08::TileSize vt = step08::vector_tile(size);
    EXPECT_EQ(v[1].name, "16B vectors, tile " + step08::tile_text(vt.rows, vt.cols));
    if (shifted) {
      const step08::TileSize st = step08::shift_tile(size);
      EXPECT_EQ(v[2].name, "shifted vectors, tile " + step08::tile_text(st.rows, st.cols));
    }
    EXPECT_EQ(v[2 + shifted].name, "scalar, writes cut at tile edges");
    EXPECT_EQ(v[3 + shifted].name, "scalar, writes cut on sectors");
  }
  const Problem bytes{ElemType::i8, 4095, 4097, 1};
  EXPECT_EQ(step08::auto_variant(ElemType::i8, &bytes).name,
            "auto: shifted vectors, sector-aligned writes");
  EXPECT_EQ(step08::auto_variant(ElemType::i8, &bytes).tile, "256x128");
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

// The CPU tests from here on run host code only (see test_support.cuh): the device pass of
// nvcc skips them. The ones above instantiate no __host__ __device__ code of their own.
#ifndef __CUDA_ARCH__

using step08_test::check_emulated;
using step08_test::emulate_scalar;
using step08_test::emulate_vec;
using step08_test::every_test_shape;
using step08_test::Runner;

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
  EXPECT_EQ(d[0].x, 0x11111111u);
  EXPECT_EQ(d[0].y, 0x22222222u);
  EXPECT_EQ(d[1].x, 0x33333333u);
  EXPECT_EQ(d[1].y, 0x44444444u);
  std::uint32_t w[4];
  step08::Pack<4>::to_units(v, w);
  EXPECT_EQ(w[3], 0x44444444u);
  uint4 q[1];
  step08::Pack<16>::to_units(v, q);
  EXPECT_EQ(q[0].x, 0x11111111u);
  EXPECT_EQ(q[0].w, 0x44444444u);
}

// ---- CPU: the cut -------------------------------------------------------------------------------

// With Cut, the piece of output row o that the tile at input row r0 writes starts on a 32-byte
// sector of the output buffer, whatever the buffer's phase in its sector and the row length; the
// shift is less than a sector, so the kLead rows above the tile cover it.
template <int S>
void check_cut_on_sectors() {
  using Tile = step08::ScalarTile<S, step08::scalar_tile(S), true>;
  SCOPED_TRACE(std::to_string(S) + "-byte elements");
  for (std::int64_t rows : {1, 7, 33, 4095, 4096, 12345, 46341})
    for (int phase = 0; phase < Tile::kSector; ++phase)
      for (std::int64_t o : {0, 1, 2, 3, 31, 1000, 46340}) {
        const int d = Tile::shift(phase, o, rows);
        ASSERT_TRUE(d >= 0 && d < Tile::kSector && d <= Tile::kLead);
        for (std::int64_t r0 : {std::int64_t{0}, std::int64_t{step08::scalar_tile(S)} * 5}) {
          const std::int64_t start = phase + o * rows + r0 - d;  // in elements from a sector
          ASSERT_EQ(start % Tile::kSector, 0)
              << "rows " << rows << ", phase " << phase << ", row " << o << ", r0 " << r0;
        }
      }
  using Uncut = step08::ScalarTile<S, step08::scalar_tile(S), false>;
  EXPECT_EQ(Uncut::shift(1, 5, 4095), 0) << "without the cut nothing moves";
}

TEST(CpuStep08Cut, EveryPieceStartsOnASector) {
  check_cut_on_sectors<1>();
  check_cut_on_sectors<2>();
  check_cut_on_sectors<4>();
  check_cut_on_sectors<8>();
  check_cut_on_sectors<16>();
}

// ---- CPU: the shifted vectors --------------------------------------------------------------

// shift_bytes(lo, hi, m) is bytes m .. m + 15 of lo:hi, for every m (bytes numbered so that a
// wrong word or a wrong byte order shows).
TEST(CpuStep08Shift, ShiftBytesCutsSixteenBytesAtAnyOffset) {
  std::uint8_t bytes[32];
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<std::uint8_t>(0xA0 + i);
  step08::Vec16 lo, hi;
  std::memcpy(lo.w, bytes, 16);
  std::memcpy(hi.w, bytes + 16, 16);
  for (unsigned m = 0; m < 16; ++m) {
    const step08::Vec16 v = step08::shift_bytes(lo, hi, m);
    EXPECT_EQ(std::memcmp(v.w, bytes + m, 16), 0) << "shift by " << m << " bytes";
  }
  EXPECT_EQ(step08::funnel_r(0x11223344u, 0xAABBCCDDu, 8), 0xDD112233u);
}

// At the ends of a buffer the shifted kernel's aligned vectors reach past it: those bytes are
// never read.
TEST(CpuStep08Shift, LoadsOnlyInsideTheBuffer) {
  alignas(16) std::uint8_t mem[48];
  for (int i = 0; i < 48; ++i) mem[i] = static_cast<std::uint8_t>(i + 1);
  const step08::Vec16 v = step08::load16_within(mem + 16, mem + 19, mem + 26);
  for (int b = 0; b < 16; ++b) {
    const unsigned got = (v.w[b / 4] >> (8 * (b % 4))) & 0xFF;
    EXPECT_EQ(got, b >= 3 && b < 10 ? static_cast<unsigned>(17 + b) : 0u) << "byte " << b;
  }
  const step08::Vec16 w = step08::load16_within(mem + 16, mem, mem + 48);
  EXPECT_EQ(w.w[0], 0x14131211u);
}

// A full tile loads with no test, so ShiftTile::full must prove what the tests would check:
// every row a thread loads is in the matrix, and every aligned vector (lane 7's next one too)
// lies inside the input buffer. Here each load of fetch<true> is recomputed and checked, over
// every tile of the launcher's grid, buffers at every phase, with and without the cut.
template <int S>
void check_full_tiles_load_inside(std::int64_t rows, std::int64_t cols, bool cut) {
  constexpr step08::TileSize ts = step08::shift_tile(S);
  using Tile = step08::ShiftTile<S, ts.rows, ts.cols>;
  const int lead = cut ? Tile::kLead : 0;
  const step08::TileGrid grid = step08::make_grid(rows, cols, ts.rows - lead, ts.cols, S);
  for (std::uintptr_t in = 4096; in < 4096 + 16; in += S) {
    SCOPED_TRACE(std::to_string(S) + "-byte " + std::to_string(rows) + " x " +
                 std::to_string(cols) + (cut ? ", cut" : "") + ", input at " +
                 std::to_string(in % 16) + " mod 16");
    const std::uintptr_t end = in + static_cast<std::uintptr_t>(rows * cols * S);
    std::int64_t full_tiles = 0;
    for (std::uint32_t b = 0; b < grid.tiles(); ++b) {
      std::int64_t ty, tx;
      grid.tile(b, &ty, &tx);
      const step08::Corner top{ty * (ts.rows - lead) - lead, tx * ts.cols};
      if (!Tile::full(in, rows, cols, top, ty == grid.tiles_r - 1)) continue;
      ++full_tiles;
      for (unsigned t = 0; t < step08::kThreads; ++t)
        for (int p = 0; p < Tile::P; ++p)
          for (int i = 0; i < Tile::k; ++i) {
            const step08::Slot s = step08::load_slot(Tile::L::kInVecs, t, p);
            const std::int64_t r = top.r0 + s.row * Tile::k + i;
            const std::uintptr_t at = in + static_cast<std::uintptr_t>(
                                               (r * cols + top.c0 + s.vec * Tile::V) * S);
            const std::uintptr_t a = at - at % 16, last = a + (t % 8 == 7 ? 32 : 16);
            ASSERT_TRUE(r >= 0 && r < rows) << "row " << r;
            ASSERT_TRUE(a >= in && last <= end) << "tile " << ty << ", " << tx << ", thread " << t;
          }
    }
    if (grid.tiles_r >= 3 && grid.tiles_c >= 3) EXPECT_GT(full_tiles, 0);
  }
}

TEST(CpuStep08Shift, FullTilesLoadOnlyInsideTheBuffer) {
  std::vector<course::Shape> shapes = {{1024, 389}, {4095, 4097}, {1000, 488}, {700, 300}};
  for (const course::Shape& s : step08_test::misaligned_shapes()) shapes.push_back(s);
  for (const course::Shape& s : shapes)
    for (bool cut : {false, true}) {
      check_full_tiles_load_inside<1>(s.rows, s.cols, cut);
      check_full_tiles_load_inside<2>(s.rows, s.cols, cut);
      if (HasFatalFailure()) return;
    }
}

// The store half's arithmetic, on its own: over every block, thread and pass of the launcher's
// grid, each output element is written exactly once, by the thread that owns it (tile row by
// the cut, vector slot within the piece); every whole vector is on 16 bytes of the output
// buffer, a partial one only at the start or the end of an output row; nothing outside.
template <int S>
void check_shift_owners(std::int64_t rows, std::int64_t cols, std::uintptr_t out) {
  constexpr step08::TileSize ts = step08::shift_tile(S);
  using Tile = step08::ShiftTile<S, ts.rows, ts.cols>;
  SCOPED_TRACE(std::to_string(S) + "-byte " + std::to_string(rows) + " x " +
               std::to_string(cols) + ", output at " + std::to_string(out % 32) + " mod 32");
  const int lead = step08::rows_start_on(32, S, rows, out) ? 0 : Tile::kLead;
  const int phase = static_cast<int>(out / S % Tile::kSector), stride = ts.rows - lead;
  const step08::TileGrid grid = step08::make_grid(rows, cols, stride, ts.cols, S);
  std::vector<std::uint8_t> written(static_cast<std::size_t>(rows * cols), 0);
  std::int64_t full_tiles = 0;
  for (std::uint32_t b = 0; b < grid.tiles(); ++b) {
    std::int64_t ty, tx;
    grid.tile(b, &ty, &tx);
    const step08::Corner top{ty * stride - lead, tx * ts.cols};
    const bool last = ty == grid.tiles_r - 1;
    const bool full = Tile::full(256, rows, cols, top, last);
    full_tiles += full;
    for (unsigned t = 0; t < step08::kThreads; ++t)
      for (int p = 0; p < Tile::L::kStorePasses; ++p) {
        const auto x = Tile::template piece<false>(t, p, rows, cols, top, lead, phase, last);
        if (full) {  // the untested piece of a full tile is the tested one
          const auto y = Tile::template piece<true>(t, p, rows, cols, top, lead, phase, last);
          ASSERT_EQ(y.lo < y.hi, x.lo < x.hi);
          if (x.lo < x.hi) {
            ASSERT_TRUE(y.first == x.first && y.lo == x.lo && y.hi == x.hi && y.c == x.c &&
                        y.smem == x.smem);
          }
        }
        if (x.lo >= x.hi) continue;
        ASSERT_TRUE(x.lo >= 0 && x.hi <= Tile::V);
        const std::int64_t o = (x.first + x.lo) / rows;  // the output row
        const std::int64_t row_start = o * rows;
        ASSERT_EQ(o, top.c0 + x.c);
        ASSERT_EQ((out + x.first * S) % 16, 0u) << "a vector off 16 bytes";
        if (x.lo > 0 || x.hi < Tile::V) {
          ASSERT_TRUE(x.first < row_start || x.first + Tile::V > row_start + rows)
              << "a partial vector inside output row " << o;
        }
        for (std::int64_t e = x.first + x.lo; e < x.first + x.hi; ++e) {
          ASSERT_TRUE(e >= row_start && e < row_start + rows) << "element " << e;
          ASSERT_EQ(written[static_cast<std::size_t>(e)]++, 0) << "element " << e << " twice";
          // The owner, from the cut alone: d(o), then the tile row and the slot in its piece.
          const std::int64_t j = e - row_start;
          const int d = lead == 0 ? 0 : static_cast<int>((phase + o * rows) % Tile::kSector);
          const std::int64_t owner_ty =
              std::min<std::int64_t>((j + d) / stride, grid.tiles_r - 1);
          const std::int64_t slot = (j + d - owner_ty * stride) / Tile::V;
          ASSERT_EQ(owner_ty, ty) << "element " << e;
          ASSERT_EQ(slot, static_cast<std::int64_t>((t + step08::kThreads * p) % Tile::Q));
        }
      }
  }
  const auto missing = std::find(written.begin(), written.end(), 0);
  ASSERT_EQ(missing, written.end()) << "element " << (missing - written.begin()) << " unwritten";
  // Three tile rows and columns or more: the middle tiles take the untested path.
  if (grid.tiles_r >= 3 && grid.tiles_c >= 3) EXPECT_GT(full_tiles, 0);
}

TEST(CpuStep08Shift, EveryOutputElementOnceByItsOwnThread) {
  std::vector<course::Shape> shapes = {{2, 7}, {7, 2}, {1, 300}, {300, 1}};
  for (const course::Shape& s : step08_test::misaligned_shapes()) shapes.push_back(s);
  for (const course::Shape& s : shapes)
    for (std::uintptr_t out : {256, 256 + 2, 256 + 6, 256 + 18}) {
      check_shift_owners<1>(s.rows, s.cols, out);
      check_shift_owners<2>(s.rows, s.cols, out);
      if (HasFatalFailure()) return;
    }
  check_shift_owners<1>(4095, 4097, 256);  // the targets' shapes: many tile rows and columns
  check_shift_owners<2>(4097, 4095, 256 + 2);
}

// The whole kernel, thread by thread, on buffers that start 1 to 15 bytes past 16: every row
// then has its own offset on both sides.
TEST(CpuStep08Emulated, ShiftedVectorsFromAndToBuffersOffSixteenBytes) {
  for (const course::Shape& s : step08_test::misaligned_shapes()) {
    for (std::size_t shift : {1, 2, 5, 14}) {
      check_emulated(step08_test::emulate_shift<1, 256, 128>, ElemType::i8, s.rows, s.cols, shift);
      if (shift % 2 == 0) {
        check_emulated(step08_test::emulate_shift<2, 128, 128>, ElemType::bf16, s.rows, s.cols,
                       shift);
      }
      if (HasFatalFailure()) return;
    }
  }
  // Output rows on sectors (no cut), the input off 16 bytes: the first tile row starts at the
  // buffer's first byte, where its aligned vectors reach before the buffer (the tested path).
  for (std::size_t shift : {1, 15})
    check_emulated(step08_test::emulate_shift<1, 256, 128>, ElemType::i8, 1024, 389, shift, 0);
}

// ---- CPU: the shared-memory layout -----------------------------------------------------------

// The launcher's tile for every element size (the lab checks the other tile shapes it times).
TEST(CpuStep08Layout, EveryTileIsAPermutationAndConflictFree) {
  step08_test::check_layout<1, 128, 128>();
  step08_test::check_layout<2, 128, 128>();
  step08_test::check_layout<4, 64, 64>();
  step08_test::check_layout<8, 32, 32>();
  step08_test::check_layout<16, 16, 16>();
}

// ---- CPU: the kernels' own code, run thread by thread --------------------------------------

// What step08::transpose launches, run on the CPU: the same plan, the same templates.
template <int S>
void emulate_plan(const step08::Plan& plan, const std::uint8_t* in, std::uint8_t* out,
                  std::int64_t rows, std::int64_t cols) {
  constexpr step08::TileSize vt = step08::vector_tile(S);
  switch (plan.path) {
    case step08::Path::copy:
      std::memcpy(out, in, static_cast<std::size_t>(rows * cols) * S);
      return;
    case step08::Path::vector:
      return emulate_vec<S, vt.rows, vt.cols>(in, out, rows, cols);
    case step08::Path::shifted:
      if constexpr (S <= 2) {
        constexpr step08::TileSize st = step08::shift_tile(S);
        return step08_test::emulate_shift<S, st.rows, st.cols>(in, out, rows, cols);
      }
      FAIL() << "the plan takes shifted vectors for " << S << "-byte elements";
      return;
    case step08::Path::scalar:
      return emulate_scalar<S, step08::scalar_tile(S)>(in, out, rows, cols, plan.cut);
  }
}

Runner emulated_launcher(std::size_t size) {
  return [size](const std::uint8_t* in, std::uint8_t* out, std::int64_t rows, std::int64_t cols) {
    step08::Plan plan;
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

TEST(CpuStep08Emulated, LauncherTransposesEveryShapeOfEveryType) {
  std::vector<course::Shape> shapes = every_test_shape();
  for (const course::Shape& s : step08_test::misaligned_shapes()) shapes.push_back(s);
  for (ElemType t : course::all_elem_types()) {
    for (const course::Shape& s : shapes) {
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

// Each path on its own, on every shape it takes: the vector kernel (the launcher's tile) on the
// shapes whose rows are aligned, the scalar kernel with both cuts on all. The launcher never
// takes the vector kernel for 4- and 8-byte elements, nor the scalar kernel on every shape.
template <int S>
void check_every_path(ElemType type) {
  SCOPED_TRACE(std::string("type ") + course::elem_name(type));
  constexpr step08::TileSize vt = step08::vector_tile(S);
  constexpr int T = step08::scalar_tile(S);
  const Runner vector = emulate_vec<S, vt.rows, vt.cols>;
  const Runner edges = [](const std::uint8_t* in, std::uint8_t* out, std::int64_t r,
                          std::int64_t c) { emulate_scalar<S, T>(in, out, r, c, false); };
  const Runner sectors = [](const std::uint8_t* in, std::uint8_t* out, std::int64_t r,
                            std::int64_t c) { emulate_scalar<S, T>(in, out, r, c, true); };
  std::vector<const Runner*> any_shape = {&edges, &sectors};
  Runner shifted;
  if constexpr (S <= 2) {
    constexpr step08::TileSize st = step08::shift_tile(S);
    shifted = step08_test::emulate_shift<S, st.rows, st.cols>;
    any_shape.push_back(&shifted);
  }
  for (const course::Shape& s : every_test_shape()) {
    for (const Runner* run : any_shape) {
      check_emulated(*run, type, s.rows, s.cols);
      if (::testing::Test::HasFatalFailure()) return;
    }
    if (step08::rows_start_on(16, S, s.cols, 0) && step08::rows_start_on(16, S, s.rows, 0)) {
      check_emulated(vector, type, s.rows, s.cols);
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
          ASSERT_TRUE(ty >= 0 && ty < tr && tx >= 0 && tx < tc)
              << tr << "x" << tc << " block " << b;
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

#endif  // __CUDA_ARCH__

}  // namespace
