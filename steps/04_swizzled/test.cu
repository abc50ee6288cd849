// Step 04 tests: the kernel on every awkward shape, plus the launcher's limits.
#include <gtest/gtest.h>

#include "bank_model.hpp"
#include "testing.cuh"
#include "variants.cuh"

namespace {

class Step04 : public ::testing::TestWithParam<course::Variant> {};

TEST_P(Step04, TransposesEveryAwkwardShape) {
  REQUIRE_GPU();
  EXPECT_TRUE(course::check_awkward_shapes(GetParam()));
}

// More tile rows (or columns) than a 2D grid's y dimension holds (65535): the blocks are
// numbered in one dimension, so these work too.
TEST_P(Step04, TransposesPastTheGridYLimit) {
  REQUIRE_GPU();
  const std::int64_t tall = 65536LL * 32 + 1;
  for (const course::Shape s : {course::Shape{tall, 1}, course::Shape{1, tall},
                                course::Shape{tall, 3}}) {
    EXPECT_TRUE(course::check_transpose(GetParam(), {course::ElemType::f32, s.rows, s.cols, 1}));
  }
}

INSTANTIATE_TEST_SUITE_P(Swizzled, Step04, ::testing::ValuesIn(step04::variants()),
                         course::variant_test_name);

// The launcher checks its preconditions before touching the GPU, so this runs anywhere.
TEST(CpuStep04Launcher, CountsTilesForEveryShapeAGridCanHold) {
  EXPECT_EQ(step04::tile_blocks(1, 1, 32), 1);
  EXPECT_EQ(step04::tile_blocks(33, 65, 32), 2 * 3);
  // 10^8 x 1 and 1 x 10^8: 3,125,000 tiles, past gridDim.y (65535) but fine in gridDim.x.
  EXPECT_EQ(step04::tile_blocks(100'000'000, 1, 32), 3'125'000);
  EXPECT_EQ(step04::tile_blocks(1, 100'000'000, 32), 3'125'000);
  // 2^31 x 2^31 elements would need 2^52 tiles: refused, and the count must not overflow.
  EXPECT_EQ(step04::tile_blocks(1LL << 31, 1LL << 31, 32), 0);
  EXPECT_EQ(step04::tile_blocks(0, 5, 32), 0);
  EXPECT_EQ(step04::tile_blocks(5, -1, 32), 0);
}

// The kernel's own swizzle(), run through the bank model: a permutation of every tile row (so
// the tile stores each element once), and one bank per thread both along a row and down a column.
TEST(CpuStep04Swizzle, IsAConflictFreeRowPermutation) {
  for (int n : {32, 64}) {
    const course::TileLayout layout = course::layout_from_swizzle(n, step04::swizzle);
    EXPECT_TRUE(course::is_row_permutation(layout, n)) << n;
    EXPECT_EQ(course::worst_row_degree(layout, n), 1) << n;
    EXPECT_EQ(course::worst_column_degree(layout, n), 1) << n;
  }
}

TEST(CpuStep04Launcher, RefusesWithoutLaunching) {
  float* none = nullptr;
  EXPECT_EQ(step04::transpose(none, none, 0, 5), cudaErrorInvalidValue);
  EXPECT_EQ(step04::transpose(none, none, 5, 0), cudaErrorInvalidValue);
  EXPECT_EQ(step04::transpose(none, none, 1LL << 31, 1LL << 31), cudaErrorInvalidValue);
}

}  // namespace
