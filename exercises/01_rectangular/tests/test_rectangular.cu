// Exercise 01 tests. On the CPU (no GPU needed): the three index functions the kernel calls,
// swept over every block and every tile element of awkward shapes (exercises/testing/
// index_checks.hpp): one block per input tile, every element read once and written once, each to
// its transposed place, nothing outside the matrix, 32 neighbours per warp on both sides; and the
// launcher's refusals. On the GPU: ex01::transpose itself, with a fresh random input, a poisoned
// output framed by guard bands, and a bitwise comparison (common/testing.cuh).
// The shapes are picked to catch the three classic mistakes:
//   - a grid sized for the output (blocks counted along the output's rows): tiles of tall or
//     wide matrices are never transposed, and the poison is still there;
//   - the output row length taken as cols instead of rows: right only when rows == cols;
//   - a missing edge check: a write past the end lands in the guard band, a read past a row's end
//     wraps into the next row, whenever a side is not a multiple of 32.
#include <gtest/gtest.h>

#include <string>

#include "ex01.cuh"
#include "exercise_testing.cuh"

namespace {

const char* const kFile = "exercises/01_rectangular/rectangular.cu";
const std::string kTodo = std::string("write ex01::transpose in ") + kFile;
namespace checks = exercise::checks;

// A CPU check's verdict on this exercise's functions.
::testing::AssertionResult cpu(const checks::Verdict& v) {
  return exercise::verdict(v, "ex01", kFile);
}

course::Variant tiled() {
  return {"ex01::transpose", "-", "-",
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return ex01::transpose(static_cast<const float*>(in), static_cast<float*>(out),
                                   p.rows, p.cols, s);
          }};
}

::testing::AssertionResult transposes(const std::vector<course::Shape>& shapes,
                                      const std::string& note = "") {
  return exercise::check_shapes(tiled(), shapes, kTodo, note);
}

// ---- GPU: the kernel itself ----

// Square and a multiple of the tile: the one case every mistake above gets right.
TEST(Ex01, SquareTileMultiples) {
  REQUIRE_GPU();
  EXPECT_PASSES(transposes({{32, 32}, {64, 64}, {96, 96}, {1024, 1024}}));
}

// Tall and wide, with sides that are multiples of 32 and sides that are not.
TEST(Ex01, TallAndWide) {
  REQUIRE_GPU();
  EXPECT_PASSES(transposes({{64, 32}, {32, 64}, {2048, 96}, {96, 2048}, {4096, 64}, {64, 4096},
                            {1000, 50}, {50, 1000}, {1000, 100}, {100, 1000}, {3000, 33},
                            {33, 3000}}));
}

// One row or one column: a tile of which only a single row or column is inside the matrix.
TEST(Ex01, SingleRowOrColumn) {
  REQUIRE_GPU();
  EXPECT_PASSES(transposes({{1, 1}, {1, 2}, {2, 1}, {1, 37}, {37, 1}, {1, 4099}, {4099, 1},
                            {1, 100003}, {100003, 1}}));
}

// Prime sides: nothing divides anything, so no tile lines up with an edge.
TEST(Ex01, PrimeSides) {
  REQUIRE_GPU();
  EXPECT_PASSES(transposes({{3, 5}, {5, 3}, {7, 13}, {13, 7}, {31, 37}, {37, 31}, {127, 131},
                            {257, 509}, {509, 257}, {997, 1009}, {1009, 997}}));
}

// Random shapes whose sides are never multiples of 32: the seed is in the failure message.
TEST(Ex01, RandomShapesNotMultiplesOf32) {
  REQUIRE_GPU();
  const std::uint64_t seed = exercise::shape_seed();
  EXPECT_PASSES(transposes(exercise::random_shapes(seed, 12, 1500), exercise::seed_note(seed)));
}

// The course's list of awkward shapes (common/shapes.hpp), the one every lesson passes.
TEST(Ex01, CourseAwkwardShapes) {
  REQUIRE_GPU();
  EXPECT_PASSES(transposes(course::awkward_shapes()));
}

// ---- CPU: the launcher and the index functions, no GPU needed ----

// The launcher checks its arguments before touching the GPU (and blocks_for accepts a shape that
// fits: a launcher that refused everything would pass vacuously).
TEST(CpuEx01Launcher, RefusesEmptyShapes) {
  ASSERT_PASSES(cpu(checks::accepts_a_real_shape(ex01::blocks_for)));
  const float* in = nullptr;
  float* out = nullptr;
  ASSERT_PASSES(exercise::refused(ex01::transpose(in, out, 0, 5, nullptr),
                                  "ex01::transpose(rows = 0, cols = 5)", kTodo));
  ASSERT_PASSES(exercise::refused(ex01::transpose(in, out, 5, 0, nullptr),
                                  "ex01::transpose(rows = 5, cols = 0)", kTodo));
  ASSERT_PASSES(exercise::refused(ex01::transpose(in, out, -1, 7, nullptr),
                                  "ex01::transpose(rows = -1, cols = 7)", kTodo));
}

// More tiles than gridDim.x holds (2^31 - 1): blocks_for says 0 and the launcher refuses, before
// any launch (the pointers are null: a launch would fail).
TEST(CpuEx01Launcher, RefusesPastTheGridLimit) {
  ASSERT_PASSES(cpu(checks::refuses_past_grid_limit(ex01::blocks_for)));
  EXPECT_PASSES(exercise::launcher_refuses_past_grid_limit(
      [](std::int64_t rows, std::int64_t cols) {
        return ex01::transpose(nullptr, nullptr, rows, cols, nullptr);
      },
      "ex01::transpose", kTodo));
}

TEST(CpuEx01Grid, OneBlockPerInputTile) {
  EXPECT_PASSES(cpu(checks::one_block_per_input_tile(ex01::blocks_for)));
}

TEST(CpuEx01Mapping, ReadsEveryInputElementOnce) {
  EXPECT_PASSES(cpu(checks::reads_every_input_element_once(ex01::input_index)));
}

TEST(CpuEx01Mapping, WritesEveryOutputElementOnce) {
  EXPECT_PASSES(cpu(checks::writes_every_output_element_once(ex01::output_index)));
}

TEST(CpuEx01Mapping, WritesEachElementToItsTransposedPlace) {
  EXPECT_PASSES(cpu(checks::writes_to_transposed_place(ex01::input_index, ex01::output_index)));
}

TEST(CpuEx01Mapping, WarpsReadAndWriteConsecutiveAddresses) {
  EXPECT_PASSES(
      cpu(checks::warps_read_and_write_consecutive(ex01::input_index, ex01::output_index)));
}

}  // namespace
