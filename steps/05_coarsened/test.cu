// Step 05 tests: every BLOCK_ROWS on every awkward shape and past the grid's y limit, the
// swizzle's banks, and the launcher's limits.
#include <gtest/gtest.h>

#include "bank_model.hpp"
#include "testing.cuh"
#include "variants.cuh"

namespace {

class Step05 : public ::testing::TestWithParam<course::Variant> {};

TEST_P(Step05, TransposesEveryAwkwardShape) {
  REQUIRE_GPU();
  EXPECT_TRUE(course::check_awkward_shapes(GetParam()));
}

// More tile rows (or columns) than a 2D grid's y dimension holds (65535): the blocks are
// numbered in one dimension, so these work too.
TEST_P(Step05, TransposesPastTheGridYLimit) {
  REQUIRE_GPU();
  const std::int64_t tall = 65536LL * 32 + 1;
  for (const course::Shape s : {course::Shape{tall, 1}, course::Shape{1, tall},
                                course::Shape{tall, 3}}) {
    EXPECT_TRUE(course::check_transpose(GetParam(), {course::ElemType::f32, s.rows, s.cols, 1}));
  }
}

INSTANTIATE_TEST_SUITE_P(Coarsened, Step05, ::testing::ValuesIn(step05::variants()),
                         course::variant_test_name);

TEST(CpuStep05Swizzle, IsAConflictFreeRowPermutation) {
  const course::TileLayout layout = course::layout_from_swizzle(32, step05::swizzle);
  EXPECT_TRUE(course::is_row_permutation(layout, 32));
  EXPECT_EQ(course::worst_row_degree(layout, 32), 1);
  EXPECT_EQ(course::worst_column_degree(layout, 32), 1);
}

// The launcher checks its preconditions before touching the GPU, so these run anywhere.
TEST(CpuStep05Launcher, CountsTilesForEveryShapeAGridCanHold) {
  EXPECT_EQ(step05::tile_blocks(1, 1, 32), 1);
  EXPECT_EQ(step05::tile_blocks(33, 65, 32), 2 * 3);
  EXPECT_EQ(step05::tile_blocks(100'000'000, 1, 32), 3'125'000);
  EXPECT_EQ(step05::tile_blocks(1, 100'000'000, 32), 3'125'000);
  EXPECT_EQ(step05::tile_blocks(1LL << 31, 1LL << 31, 32), 0);
  EXPECT_EQ(step05::tile_blocks(0, 5, 32), 0);
}

TEST(CpuStep05Launcher, RefusesWithoutLaunching) {
  float* none = nullptr;
  EXPECT_EQ(step05::transpose<8>(none, none, 0, 5), cudaErrorInvalidValue);
  EXPECT_EQ(step05::transpose<4>(none, none, 5, 0), cudaErrorInvalidValue);
  EXPECT_EQ(step05::transpose<32>(none, none, 1LL << 31, 1LL << 31), cudaErrorInvalidValue);
}

}  // namespace
