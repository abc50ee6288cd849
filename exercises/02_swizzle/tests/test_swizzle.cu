// Exercise 02 tests. On the CPU, with the bank model (common/bank_model.hpp): the reader's
// swizzle, the very function the kernel calls (swizzle.cuh compiled for the host by
// tests/swizzle_host.cu), keeps every element of a tile row in that row, once, and both a
// row-wise and a column-wise warp access are conflict-free; the index functions pass exercise
// 1's checks (exercises/testing/index_checks.hpp); the launcher refuses what it cannot launch.
// On the GPU: ex02::transpose on square, rectangular and awkward shapes (fresh random input,
// poisoned output, guard bands, bitwise compare).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bank_model.hpp"
#include "ex02.cuh"
#include "exercise_testing.cuh"

namespace {

const char* const kKernelFile = "exercises/02_swizzle/swizzled.cu";
const std::string kTodoKernel = std::string("write ex02::transpose in ") + kKernelFile;
namespace checks = exercise::checks;
const char* const kTodoSwizzle = "write ex02::swizzle in exercises/02_swizzle/swizzle.cuh";
constexpr int kTile = ex02::kTile;

// The skeleton's swizzle answers kSwizzleNotImplemented everywhere.
bool swizzle_written() {
  for (int r = 0; r < kTile; ++r)
    for (int c = 0; c < kTile; ++c)
      if (ex02::swizzle_on_host(r, c) != ex02::kSwizzleNotImplemented) return true;
  return false;
}

course::TileLayout reader_layout() {
  return course::layout_from_swizzle(kTile,
                                     [](int r, int c) { return ex02::swizzle_on_host(r, c); });
}

std::string picture() { return "\n" + course::bank_map(reader_layout(), kTile, "your swizzle"); }

// Every row keeps its 32 elements, once each, inside the row: the first violation, by name.
::testing::AssertionResult is_bijection() {
  if (!swizzle_written()) return exercise::not_implemented(kTodoSwizzle);
  for (int r = 0; r < kTile; ++r) {
    std::vector<int> owner(kTile, -1);  // which column was stored at each place of row r
    for (int c = 0; c < kTile; ++c) {
      const int s = ex02::swizzle_on_host(r, c);
      if (s < 0 || s >= kTile) {
        return ::testing::AssertionFailure() << "swizzle(" << r << ", " << c << ") = " << s
                                             << " is outside the row, [0, " << kTile << ")";
      }
      if (owner[s] >= 0) {
        return ::testing::AssertionFailure()
               << "swizzle(" << r << ", " << owner[s] << ") and swizzle(" << r << ", " << c
               << ") are both " << s << ": two elements in one place, one of them lost";
      }
      owner[s] = c;
    }
  }
  // The bank model's own check must agree with the one above.
  if (!course::is_row_permutation(reader_layout(), kTile)) {
    return ::testing::AssertionFailure() << "the bank model finds a row that is not a permutation";
  }
  return ::testing::AssertionSuccess();
}

// A layout's conflict degree for warps reading rows (by_row) or columns; 1 = conflict-free.
::testing::AssertionResult conflict_free(bool by_row) {
  if (!swizzle_written()) return exercise::not_implemented(kTodoSwizzle);
  ::testing::AssertionResult valid = is_bijection();
  if (!valid) {
    return ::testing::AssertionFailure()
           << "conflict-free does not count for a layout that loses elements: " << valid.message();
  }
  const course::TileLayout layout = reader_layout();
  const int worst = by_row ? course::worst_row_degree(layout, kTile)
                           : course::worst_column_degree(layout, kTile);
  if (worst == 1) return ::testing::AssertionSuccess();
  // Name the first row (or column) that is that bad, and draw the tile.
  int i = 0;
  while (i + 1 < kTile && (by_row ? course::row_read_degree(layout, kTile, i)
                                  : course::column_read_degree(layout, kTile, i)) != worst) {
    ++i;
  }
  return ::testing::AssertionFailure()
         << "a warp accessing tile " << (by_row ? "row " : "column ") << i << " asks one bank for "
         << worst << " different words (" << worst << "-way bank conflict)" << picture();
}

TEST(CpuEx02Swizzle, KeepsEveryElementInItsRow) { EXPECT_PASSES(is_bijection()); }

TEST(CpuEx02Swizzle, RowAccessIsConflictFree) { EXPECT_PASSES(conflict_free(true)); }

TEST(CpuEx02Swizzle, ColumnAccessIsConflictFree) { EXPECT_PASSES(conflict_free(false)); }

// The launcher checks its arguments before touching the GPU, so this runs anywhere.
TEST(CpuEx02Launcher, RefusesEmptyShapes) {
  ASSERT_PASSES(
      exercise::verdict(checks::accepts_a_real_shape(ex02::blocks_for), "ex02", kKernelFile));
  const float* in = nullptr;
  float* out = nullptr;
  ASSERT_PASSES(exercise::refused(ex02::transpose(in, out, 0, 5, nullptr),
                                  "ex02::transpose(rows = 0, cols = 5)", kTodoKernel));
  ASSERT_PASSES(exercise::refused(ex02::transpose(in, out, 5, 0, nullptr),
                                  "ex02::transpose(rows = 5, cols = 0)", kTodoKernel));
}

// More tiles than gridDim.x holds: blocks_for says 0 and the launcher refuses, before any launch.
TEST(CpuEx02Launcher, RefusesPastTheGridLimit) {
  ASSERT_PASSES(
      exercise::verdict(checks::refuses_past_grid_limit(ex02::blocks_for), "ex02", kKernelFile));
  EXPECT_PASSES(exercise::launcher_refuses_past_grid_limit(
      [](std::int64_t rows, std::int64_t cols) {
        return ex02::transpose(nullptr, nullptr, rows, cols, nullptr);
      },
      "ex02::transpose", kTodoKernel));
}

// Exercise 1's checks of the grid and of every thread's reads and writes, on this exercise's
// functions: one block per input tile, every element read once and written once to its
// transposed place, nothing outside the matrices, 32 neighbours per warp on both sides.
TEST(CpuEx02Mapping, TransposesEveryTileOnce) {
  for (const checks::Verdict& v :
       {checks::one_block_per_input_tile(ex02::blocks_for),
        checks::reads_every_input_element_once(ex02::input_index),
        checks::writes_every_output_element_once(ex02::output_index),
        checks::writes_to_transposed_place(ex02::input_index, ex02::output_index),
        checks::warps_read_and_write_consecutive(ex02::input_index, ex02::output_index)}) {
    ASSERT_PASSES(exercise::verdict(v, "ex02", kKernelFile));
  }
}

course::Variant swizzled() {
  return {"ex02::transpose", "-", "-",
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return ex02::transpose(static_cast<const float*>(in), static_cast<float*>(out),
                                   p.rows, p.cols, s);
          }};
}

::testing::AssertionResult transposes(const std::vector<course::Shape>& shapes,
                                      const std::string& note = "") {
  if (!swizzle_written()) return exercise::not_implemented(kTodoSwizzle);
  return exercise::check_shapes(swizzled(), shapes, kTodoKernel, note);
}

TEST(Ex02, SquareTileMultiples) {
  REQUIRE_GPU();
  EXPECT_PASSES(transposes({{32, 32}, {64, 64}, {256, 256}, {1024, 1024}}));
}

TEST(Ex02, TallAndWide) {
  REQUIRE_GPU();
  EXPECT_PASSES(transposes({{2048, 96}, {96, 2048}, {1000, 50}, {50, 1000}, {1, 4099},
                            {4099, 1}, {3000, 33}, {33, 3000}}));
}

TEST(Ex02, RandomShapesNotMultiplesOf32) {
  REQUIRE_GPU();
  const std::uint64_t seed = exercise::shape_seed();
  EXPECT_PASSES(transposes(exercise::random_shapes(seed, 12, 1500), exercise::seed_note(seed)));
}

TEST(Ex02, CourseAwkwardShapes) {
  REQUIRE_GPU();
  EXPECT_PASSES(transposes(course::awkward_shapes()));
}

}  // namespace
