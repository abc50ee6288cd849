// Exercise 03 tests. On the CPU (no GPU needed): the functions the kernel calls, swept over
// every block, tile and tile element of awkward sizes (exercises/testing/index_checks.hpp):
// every tile in exactly one block's pair, a diagonal tile alone, every element in exactly one
// tile place, each mirror place the transposed one, nothing outside the matrix, 32 neighbours
// per warp; and the launcher's refusals.
// On the GPU: ex03::transpose_inplace on square matrices of every awkward size. The harness
// copies a fresh random input into the output buffer (poisoned, between guard bands),
// runs the kernel on that buffer alone, and compares bit for bit (common/testing.cuh). A block
// that reads a tile another block has already overwritten, a lost diagonal, a missing edge
// check or a write outside the matrix all show up as a mismatch or a changed guard band.
#include <gtest/gtest.h>

#include <string>

#include "ex03.cuh"
#include "exercise_testing.cuh"

namespace {

const char* const kFile = "exercises/03_inplace/inplace.cu";
const std::string kTodo = std::string("write ex03::transpose_inplace in ") + kFile;
namespace checks = exercise::checks;

// A CPU check's verdict on this exercise's functions.
::testing::AssertionResult cpu(const checks::Verdict& v) {
  return exercise::verdict(v, "ex03", kFile);
}

// pair_of_block as the checks take it.
checks::Pair pair_of_block(std::int64_t n, std::int64_t block) {
  const ex03::TilePair p = ex03::pair_of_block(n, block);
  return {p.row, p.col};
}

course::Variant in_place() {
  course::Variant v{"ex03::transpose_inplace", "-", "-",
                    [](const course::Problem& p, const void*, void* out, cudaStream_t s) {
                      if (p.rows != p.cols) return cudaErrorInvalidValue;  // square only
                      return ex03::transpose_inplace(static_cast<float*>(out), p.rows, s);
                    }};
  v.in_place = true;
  return v;
}

::testing::AssertionResult transposes(const std::vector<std::int64_t>& sizes) {
  return exercise::check_shapes(in_place(), exercise::squares(sizes), kTodo);
}

// ---- GPU: the kernel itself ----

// Up to two tiles a side: the diagonal tile alone, then the first off-diagonal pairs.
TEST(Ex03, SmallSizes) {
  REQUIRE_GPU();
  EXPECT_PASSES(transposes({1, 2, 3, 7, 16, 31, 32, 33, 63, 64}));
}

// Whole tiles only: no edge checks needed, many pairs.
TEST(Ex03, TileMultiples) {
  REQUIRE_GPU();
  EXPECT_PASSES(transposes({96, 128, 256, 512, 1024, 2048}));
}

// The course's square sizes for in-place kernels (common/shapes.hpp).
TEST(Ex03, CourseAwkwardSizes) {
  REQUIRE_GPU();
  EXPECT_PASSES(transposes(course::awkward_square_sizes()));
}

// Random sizes that are never multiples of 32: the seed is in the failure message.
TEST(Ex03, RandomSizesNotMultiplesOf32) {
  REQUIRE_GPU();
  const std::uint64_t seed = exercise::shape_seed();
  EXPECT_PASSES(exercise::check_shapes(in_place(), exercise::random_squares(seed, 10, 1500), kTodo,
                                       exercise::seed_note(seed)));
}

// Odd sizes in the thousands: thousands of tile pairs in flight at once (64 MiB at 4099).
TEST(Ex03, ThousandsOfTilePairs) {
  REQUIRE_GPU();
  EXPECT_PASSES(transposes({2047, 2049, 4099}));
}

// ---- CPU: the launcher and the index functions, no GPU needed ----

// The launcher checks its arguments before touching the GPU.
TEST(CpuEx03Launcher, RefusesEmptyMatrices) {
  ASSERT_PASSES(cpu(checks::square_accepts_a_real_size(ex03::blocks_for)));
  float* data = nullptr;
  ASSERT_PASSES(exercise::refused(ex03::transpose_inplace(data, 0, nullptr),
                                  "ex03::transpose_inplace(n = 0)", kTodo));
  ASSERT_PASSES(exercise::refused(ex03::transpose_inplace(data, -3, nullptr),
                                  "ex03::transpose_inplace(n = -3)", kTodo));
}

// More blocks than gridDim.x holds: blocks_for says 0 and the launcher refuses, before any
// launch (the pointer is null: a launch would fail).
TEST(CpuEx03Launcher, RefusesPastTheGridLimit) {
  ASSERT_PASSES(cpu(checks::square_refuses_past_grid_limit(ex03::blocks_for)));
  for (std::int64_t n : checks::limit_square_sizes()) {
    ASSERT_PASSES(exercise::refused(ex03::transpose_inplace(nullptr, n, nullptr),
                                    "ex03::transpose_inplace(n = " + std::to_string(n) + ")",
                                    kTodo));
  }
}

TEST(CpuEx03Pairs, EveryTileInExactlyOnePair) {
  EXPECT_PASSES(cpu(checks::every_tile_in_one_pair(ex03::blocks_for, pair_of_block)));
}

TEST(CpuEx03Tiles, EveryElementInExactlyOnePlace) {
  EXPECT_PASSES(cpu(checks::every_element_in_one_place(ex03::element_index)));
}

TEST(CpuEx03Tiles, MirrorPlacesAreTransposed) {
  EXPECT_PASSES(cpu(checks::mirror_places_transposed(ex03::element_index)));
}

TEST(CpuEx03Tiles, WarpsAccessConsecutiveAddresses) {
  EXPECT_PASSES(cpu(checks::square_warps_consecutive(ex03::element_index)));
}

}  // namespace
