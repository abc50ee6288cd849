// Step 05 tests: every BLOCK_ROWS and block order on every awkward shape, the block orders as
// bijections on any grid, and the launcher's limits.
#include <gtest/gtest.h>

#include <vector>

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
// numbered in one dimension, so these work too, in both block orders.
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

// Every block must get exactly one tile and every tile exactly one block, in both orders, for
// square and rectangular grids alike (a non-bijective order skips tiles and writes others twice).
void expect_bijection(unsigned tiles_x, unsigned tiles_y, step05::BlockOrder order) {
  std::vector<char> seen(static_cast<std::size_t>(tiles_x) * tiles_y, 0);
  for (unsigned bid = 0; bid < tiles_x * tiles_y; ++bid) {
    const step05::TileCoord t = step05::tile_of_block(bid, tiles_x, tiles_y, order);
    ASSERT_LT(t.row, tiles_y) << tiles_x << "x" << tiles_y << " block " << bid;
    ASSERT_LT(t.col, tiles_x) << tiles_x << "x" << tiles_y << " block " << bid;
    char& s = seen[static_cast<std::size_t>(t.row) * tiles_x + t.col];
    ASSERT_EQ(s, 0) << tiles_x << "x" << tiles_y << ": tile (" << t.row << ", " << t.col
                    << ") taken twice, again by block " << bid;
    s = 1;
  }
}

TEST(CpuStep05BlockOrder, BothOrdersAreBijectionsOnAnyGrid) {
  for (auto order : {step05::BlockOrder::rows, step05::BlockOrder::diagonal}) {
    for (unsigned x = 1; x <= 40; ++x)
      for (unsigned y = 1; y <= 40; ++y) expect_bijection(x, y, order);
    expect_bijection(1, 3'125'000, order);  // 10^8 x 1
    expect_bijection(3'125'000, 1, order);  // 1 x 10^8
    expect_bijection(256, 1024, order);
  }
}

TEST(CpuStep05BlockOrder, DiagonalWalksTheDiagonalsAndMatchesTheSquareFormula) {
  // Square grid: the published form, row = blockIdx.x, col = (blockIdx.x + blockIdx.y) % n.
  const unsigned n = 7;
  for (unsigned by = 0; by < n; ++by) {
    for (unsigned bx = 0; bx < n; ++bx) {
      const step05::TileCoord t =
          step05::tile_of_block(by * n + bx, n, n, step05::BlockOrder::diagonal);
      EXPECT_EQ(t.row, bx);
      EXPECT_EQ(t.col, (bx + by) % n);
    }
  }
  // Consecutive blocks take diagonal neighbours: (0,0), (1,1), (2,2) on a 5 x 3 grid.
  const step05::TileCoord b1 = step05::tile_of_block(1, 5, 3, step05::BlockOrder::diagonal);
  const step05::TileCoord b2 = step05::tile_of_block(2, 5, 3, step05::BlockOrder::diagonal);
  EXPECT_EQ(b1.row, 1u);
  EXPECT_EQ(b1.col, 1u);
  EXPECT_EQ(b2.row, 2u);
  EXPECT_EQ(b2.col, 2u);
}

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
  using step05::BlockOrder;
  EXPECT_EQ((step05::transpose<8, BlockOrder::rows>(none, none, 0, 5)), cudaErrorInvalidValue);
  EXPECT_EQ((step05::transpose<4, BlockOrder::diagonal>(none, none, 5, 0)),
            cudaErrorInvalidValue);
  EXPECT_EQ((step05::transpose<32, BlockOrder::rows>(none, none, 1LL << 31, 1LL << 31)),
            cudaErrorInvalidValue);
}

}  // namespace
