// Step 08's lab tests: the same standards as the lesson's (fresh random inputs, poisoned outputs
// framed by guard bands, bitwise compares, the awkward shapes of common/), for the lab's kernels
// only; the lesson's kernels, which the lab's table also runs, are tested by the step's test.cu.
//   GPU: every lab kernel of every element type on the awkward shapes, aligned shapes with
//        partial tiles, and matrices taller than a group of the tile order; the phases that
//        step08_patterns times.
//   CPU: the lab's tile shapes (every unit stored once, no bank conflicts), the realigned
//        gathers (at most 2-way conflicts), the paired stores' reads (no conflicts), the lab's
//        kernels run thread by thread on every shape they take (the shifted kernel's int8
//        128 x 128 tile too; the paired stores at every output alignment), the scalar kernel on
//        step08_patterns' short groups, and the table's names.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "check.cuh"
#include "device_buffer.cuh"
#include "lab_variants.cuh"
#include "patterns.cuh"
#include "test_support.cuh"
#include "testing.cuh"

namespace {

using course::ElemType;
using course::Problem;
using course::Variant;
using step08_test::Case;

// ---- GPU: every lab kernel, every type -------------------------------------------------------

class Step08Lab : public ::testing::TestWithParam<Case> {};

TEST_P(Step08Lab, TransposesEveryAwkwardShape) {
  REQUIRE_GPU();
  const Case& c = GetParam();
  for (const course::Shape& s : course::awkward_shapes()) {
    ASSERT_TRUE(course::check_transpose(c.variant, Problem{c.type, s.rows, s.cols, 1},
                                        c.may_refuse));
  }
}

TEST_P(Step08Lab, TransposesAlignedShapesWithPartialTiles) {
  REQUIRE_GPU();
  const Case& c = GetParam();
  for (const course::Shape& s : step08_test::aligned_edge_shapes()) {
    ASSERT_TRUE(course::check_transpose(c.variant, Problem{c.type, s.rows, s.cols, 1}));
  }
}

// Taller than one group of the tile order, so that the last, shorter group runs.
TEST_P(Step08Lab, TransposesMatricesTallerThanATileGroup) {
  REQUIRE_GPU();
  const Case& c = GetParam();
  ASSERT_TRUE(course::check_transpose(c.variant, Problem{c.type, 32784, 48, 1}));
  ASSERT_TRUE(course::check_transpose(c.variant, Problem{c.type, 32785, 37, 1}, c.may_refuse));
}

INSTANTIATE_TEST_SUITE_P(Lab, Step08Lab,
                         ::testing::ValuesIn(step08_test::cases_of(step08_lab::lab_variants)),
                         step08_test::case_name);

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
            !step08::rows_start_on(32, S, s.rows, reinterpret_cast<std::uintptr_t>(matrix));
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
                               const auto cut = !step08::rows_start_on(
                                   32, S, p.rows, reinterpret_cast<std::uintptr_t>(out));
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

// ---- CPU: the table ---------------------------------------------------------------------------

// The names the lesson's rows have in the lab's table (the step's test checks them there; they
// are spelled out here so that this test does not compile the lesson's kernels a second time).
std::vector<std::string> lesson_names(ElemType t) {
  const std::size_t size = course::elem_size(t);
  const step08::TileSize vt = step08::vector_tile(size), st = step08::shift_tile(size);
  std::vector<std::string> names = {"auto", "16B vectors, tile " + step08::tile_text(vt.rows, vt.cols)};
  if (size <= 2) names.push_back("shifted vectors, tile " + step08::tile_text(st.rows, st.cols));
  names.push_back("scalar, writes cut at tile edges");
  names.push_back("scalar, writes cut on sectors");
  return names;
}

// Every name of the lab's table distinct, and none contained in an earlier one, so that
// `--only NAME` (and the profiler script, which uses it) picks one kernel.
TEST(CpuStep08LabVariants, EveryRowOfTheTableHasItsOwnName) {
  for (ElemType t : course::all_elem_types()) {
    std::vector<std::string> names = lesson_names(t);
    const auto lab = step08_lab::lab_variants(t);
    ASSERT_FALSE(lab.empty()) << course::elem_name(t);
    for (const Variant& v : lab) names.push_back(v.name);
    for (std::size_t i = 0; i < names.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        EXPECT_EQ(names[j].find(names[i]), std::string::npos)
            << course::elem_name(t) << ": '" << names[i] << "' is part of '" << names[j] << "'";
      }
    }
  }
}

// The CPU tests from here on run host code only (see test_support.cuh): the device pass of
// nvcc skips them. The ones above instantiate no __host__ __device__ code of their own.
#ifndef __CUDA_ARCH__

using step08_test::check_emulated;
using step08_test::emulate_scalar;
using step08_test::emulate_tiles;
using step08_test::emulate_vec;
using step08_test::every_test_shape;
using step08_test::Runner;

// ---- CPU: the lab's tiles --------------------------------------------------------------------

TEST(CpuStep08LabLayout, EveryTileIsAPermutationAndConflictFree) {
  step08_test::check_layout<1, 256, 128>();
  step08_test::check_layout<2, 128, 64>();
  step08_test::check_layout<2, 64, 128>();
  step08_test::check_layout<4, 128, 64>();
  step08_test::check_layout<8, 64, 32>();
  step08_test::check_layout<8, 32, 64>();
  step08_test::check_layout<16, 32, 32>();
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
            EXPECT_EQ(step08_test::degree(addr, S), 1) << "realigned write, pass " << p;
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
            EXPECT_LE(step08_test::degree(addr, S), 2) << "realigned gather, pass " << p;
          }
    }
}

TEST(CpuStep08LabLayout, RealignedRowsStayNearlyConflictFree) {
  check_realigned<4, 64, 64>(4095, 4097);
  check_realigned<4, 64, 64>(12345, 6789);
  check_realigned<4, 64, 64>(4098, 4094);
  check_realigned<4, 64, 64>(46341, 46341);
  check_realigned<8, 64, 32>(4095, 4097);
  check_realigned<8, 64, 32>(1001, 999);
}

// Paired stores (paired.cuh): lane x of a warp reads the two halves of its pair from two array
// rows of one tile column. In first_read's order each of the two reads takes 32 banks; in the
// plain order (even row first in every lane) lanes x and x + 16 would share one, two ways.
TEST(CpuStep08LabLayout, PairedReadsAreConflictFree) {
  using Tile = step08::PairedTile<2, 128, true>;
  constexpr int T = 128;
  static const Tile::Array tile{};
  const auto offset = [](int row, int col) {  // bytes from the start of the tile
    return static_cast<int>(reinterpret_cast<const std::uint8_t*>(&tile[row][col]) -
                            reinterpret_cast<const std::uint8_t*>(&tile));
  };
  for (int d = 0; d < Tile::kSector; ++d)
    for (int i = 0; i < T; ++i)
      for (int j0 : {0, 64, T}) {  // the two halves of a piece, and the last tile row's rest
        const int lanes = j0 < T ? 32 : Tile::kSector / 2;
        std::vector<int> first(32, -1), second(32, -1), plain(32, -1);
        for (int x = 0; x < lanes; ++x) {
          const int row = Tile::kLead - d + j0 + 2 * x, f = Tile::first_read(x);
          first[x] = offset(row + f, i);
          second[x] = offset(row + 1 - f, i);
          plain[x] = offset(row, i);
        }
        SCOPED_TRACE("shift " + std::to_string(d) + ", column " + std::to_string(i) +
                     ", piece element " + std::to_string(j0));
        ASSERT_EQ(step08_test::degree(first, 2), 1);
        ASSERT_EQ(step08_test::degree(second, 2), 1);
        if (lanes == 32) ASSERT_EQ(step08_test::degree(plain, 2), 2);
      }
}

TEST(CpuStep08LabRegisters, ElementsOfAVectorOneByOne) {
  const step08::Vec16 v = {{0x11111111u, 0x22222222u, 0x33333333u, 0x44444444u}};
  EXPECT_EQ(step08::get_element<4>(v, 3), 0x44444444u);
  const uint2 d = step08::get_element<8>(v, 1);
  EXPECT_EQ(d.x, 0x33333333u);
  EXPECT_EQ(d.y, 0x44444444u);
  step08::Vec16 x{};
  step08::set_element<8>(x, 1, make_uint2(0xAu, 0xBu));
  EXPECT_EQ(x.w[2], 0xAu);
  EXPECT_EQ(x.w[3], 0xBu);
  step08::set_element<4>(x, 0, 0xCu);
  EXPECT_EQ(x.w[0], 0xCu);
}

// ---- CPU: the lab's kernels, run thread by thread --------------------------------------------

template <int S, int TR, int TC, bool In, bool Out>
void emulate_realigned(const std::uint8_t* in, std::uint8_t* out, std::int64_t rows,
                       std::int64_t cols) {
  emulate_tiles<step08::RealignedTile<S, TR, TC, In, Out>>(in, out, rows, cols);
}

// Each lab kernel on every shape it takes: the vector tiles on shapes whose rows are aligned;
// the realigned kernel on all (both sides realigned), and with one side realigned where the
// other side's rows are aligned; the 32 x 32 scalar tile, with and without the cut, on all.
template <int S>
void check_lab_paths(ElemType type, const std::vector<Runner>& aligned) {
  SCOPED_TRACE(std::string("type ") + course::elem_name(type));
  std::vector<Runner> any_shape, in_aligned, out_aligned;
  if constexpr (S == 4 || S == 8) {
    constexpr step08::TileSize vt = step08::vector_tile(S);
    any_shape = {emulate_realigned<S, vt.rows, vt.cols, true, true>,
                 [](const std::uint8_t* in, std::uint8_t* out, std::int64_t r, std::int64_t c) {
                   emulate_scalar<S, 32>(in, out, r, c, true);
                 },
                 [](const std::uint8_t* in, std::uint8_t* out, std::int64_t r, std::int64_t c) {
                   emulate_scalar<S, 32>(in, out, r, c, false);
                 }};
    in_aligned = {emulate_realigned<S, vt.rows, vt.cols, false, true>};
    out_aligned = {emulate_realigned<S, vt.rows, vt.cols, true, false>};
  }
  // The shifted kernel's lab rows: three blocks per SM change no arithmetic (the step's test runs
  // the lesson's tile); the 128 x 128 int8 tile and every tile tested are new here.
  if constexpr (S == 1) {
    any_shape = {step08_test::emulate_shift<1, 128, 128>,
                 step08_test::emulate_shift<1, 256, 128, false>};
  }
  if constexpr (S == 2) any_shape = {step08_test::emulate_shift<2, 128, 128, false>};
  std::vector<course::Shape> shapes = every_test_shape();
  for (const course::Shape& s : step08_test::misaligned_shapes()) shapes.push_back(s);
  for (const course::Shape& s : shapes) {
    const bool in_ok = step08::rows_start_on(16, S, s.cols, 0);
    const bool out_ok = step08::rows_start_on(16, S, s.rows, 0);
    std::vector<const std::vector<Runner>*> lists = {&any_shape};
    if (in_ok) lists.push_back(&in_aligned);
    if (out_ok) lists.push_back(&out_aligned);
    if (in_ok && out_ok) lists.push_back(&aligned);
    for (const auto* list : lists) {
      for (const Runner& run : *list) {
        check_emulated(run, type, s.rows, s.cols);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// The paired stores on every shape, with and without the cut, at output buffers starting on
// even and odd halves of their sectors (the piece starts, and so the pairs, move with them); the
// poisoned guard bands and every element compared as for the other paths, and a 4-byte store off
// 4 bytes traps on the CPU as it faults on the GPU.
void check_paired_stores() {
  constexpr int T = step08::scalar_tile(2);
  const Runner cut = [](const std::uint8_t* in, std::uint8_t* out, std::int64_t r,
                        std::int64_t c) {
    step08_test::emulate_scalar_on<2, T, true, step08::PairedTile>(
        step08::make_grid(r, c, T, T, 2), in, out, r, c);
  };
  const Runner edges = [](const std::uint8_t* in, std::uint8_t* out, std::int64_t r,
                          std::int64_t c) {
    step08_test::emulate_scalar_on<2, T, false, step08::PairedTile>(
        step08::make_grid(r, c, T, T, 2), in, out, r, c);
  };
  std::vector<course::Shape> shapes = every_test_shape();
  for (const course::Shape& s : step08_test::misaligned_shapes()) shapes.push_back(s);
  // Past a group of the tile order (tall), and the lesson's odd square.
  for (const course::Shape& s : {course::Shape{32785, 37}, course::Shape{4095, 4097}}) {
    shapes.push_back(s);
  }
  for (const course::Shape& s : shapes)
    for (std::size_t shift : {0, 2, 6, 16, 30}) {  // bytes: output phases even and odd
      for (const Runner* run : {&cut, &edges}) {
        check_emulated(*run, ElemType::f16, s.rows, s.cols, shift);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
}

TEST(CpuStep08LabEmulated, EveryLabPathOnEveryShapeItTakes) {
  check_lab_paths<1>(ElemType::i8, {Runner(emulate_vec<1, 256, 128>)});
  check_lab_paths<2>(ElemType::f16,
                     {Runner(emulate_vec<2, 128, 64>), Runner(emulate_vec<2, 64, 128>)});
  check_paired_stores();
  check_lab_paths<4>(ElemType::f32, {Runner(emulate_vec<4, 128, 64>)});
  check_lab_paths<8>(ElemType::f64,
                     {Runner(emulate_vec<8, 64, 32>), Runner(emulate_vec<8, 32, 64>)});
  check_lab_paths<16>(ElemType::b128, {Runner(emulate_vec<16, 32, 32>)});
}

// step08_patterns' second tile order, groups of 8 tile rows: still a transpose of every shape.
template <int S>
void check_short_groups(ElemType type) {
  constexpr int T = step08::scalar_tile(S);
  for (const course::Shape& s : every_test_shape()) {
    const Runner run = [](const std::uint8_t* in, std::uint8_t* out, std::int64_t r,
                          std::int64_t c) {
      const step08::TileGrid grid = step08::grid_with_group(r, c, S, 8);
      if (step08::rows_start_on(32, S, r, reinterpret_cast<std::uintptr_t>(out))) {
        step08_test::emulate_scalar_on<S, T, false>(grid, in, out, r, c);
      } else {
        step08_test::emulate_scalar_on<S, T, true>(grid, in, out, r, c);
      }
    };
    check_emulated(run, type, s.rows, s.cols);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(CpuStep08LabPatterns, ScalarKernelOnGroupsOfEightTileRowsTransposes) {
  check_short_groups<4>(ElemType::f32);
  check_short_groups<8>(ElemType::f64);
}

#endif  // __CUDA_ARCH__

}  // namespace
