// Exercise 03 tests: ex03::transpose_inplace on square matrices of every awkward size. The
// harness copies a fresh random input into the output buffer (poisoned, between guard bands),
// runs the kernel on that buffer alone, and compares bit for bit (common/testing.cuh). A block
// that reads a tile another block has already overwritten, a lost diagonal, a missing edge
// check or a write outside the matrix all show up as a mismatch or a changed guard band.
#include <gtest/gtest.h>

#include "ex03.cuh"
#include "exercise_testing.cuh"

namespace {

const char* const kTodo = "write ex03::transpose_inplace in exercises/03_inplace/inplace.cu";

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

// The launcher checks its arguments before touching the GPU, so this runs anywhere.
TEST(CpuEx03Launcher, RefusesEmptyMatrices) {
  float* data = nullptr;
  ASSERT_PASSES(exercise::refused(ex03::transpose_inplace(data, 0, nullptr),
                                  "ex03::transpose_inplace(n = 0)", kTodo));
  ASSERT_PASSES(exercise::refused(ex03::transpose_inplace(data, -3, nullptr),
                                  "ex03::transpose_inplace(n = -3)", kTodo));
}

}  // namespace
