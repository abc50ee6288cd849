// Step 05 lab tests: every lab kernel on every awkward shape and past the grid's y limit, and
// the block orders as bijections on any grid, computed on the CPU.
#include <gtest/gtest.h>

#include <vector>

#include "testing.cuh"
#include "lab_variants.cuh"

namespace {

using step05_lab::BlockOrder;

class Step05Lab : public ::testing::TestWithParam<course::Variant> {};

TEST_P(Step05Lab, TransposesEveryAwkwardShape) {
  REQUIRE_GPU();
  EXPECT_TRUE(course::check_awkward_shapes(GetParam()));
}

// More tile rows (or columns) than gridDim.y holds: a block order must still cover every tile.
TEST_P(Step05Lab, TransposesPastTheGridYLimit) {
  REQUIRE_GPU();
  const std::int64_t tall = 65536LL * 32 + 1;
  for (const course::Shape s : {course::Shape{tall, 1}, course::Shape{1, tall},
                                course::Shape{tall, 3}}) {
    EXPECT_TRUE(course::check_transpose(GetParam(), {course::ElemType::f32, s.rows, s.cols, 1}));
  }
}

INSTANTIATE_TEST_SUITE_P(Lab, Step05Lab, ::testing::ValuesIn(step05_lab::variants()),
                         course::variant_test_name);

// Every block must get exactly one tile and every tile exactly one block, in both orders, for
// square and rectangular grids alike (a non-bijective order skips tiles and writes others twice).
void expect_bijection(unsigned tiles_x, unsigned tiles_y, BlockOrder order) {
  std::vector<char> seen(static_cast<std::size_t>(tiles_x) * tiles_y, 0);
  for (unsigned bid = 0; bid < tiles_x * tiles_y; ++bid) {
    const step05_lab::TileCoord t = step05_lab::tile_of_block(bid, tiles_x, tiles_y, order);
    ASSERT_LT(t.row, tiles_y) << tiles_x << "x" << tiles_y << " block " << bid;
    ASSERT_LT(t.col, tiles_x) << tiles_x << "x" << tiles_y << " block " << bid;
    char& s = seen[static_cast<std::size_t>(t.row) * tiles_x + t.col];
    ASSERT_EQ(s, 0) << tiles_x << "x" << tiles_y << ": tile (" << t.row << ", " << t.col
                    << ") taken twice, again by block " << bid;
    s = 1;
  }
}

TEST(CpuStep05LabBlockOrder, BothOrdersAreBijectionsOnAnyGrid) {
  for (auto order : {BlockOrder::rows, BlockOrder::diagonal}) {
    for (unsigned x = 1; x <= 40; ++x)
      for (unsigned y = 1; y <= 40; ++y) expect_bijection(x, y, order);
    expect_bijection(1, 3'125'000, order);  // 10^8 x 1
    expect_bijection(3'125'000, 1, order);  // 1 x 10^8
    expect_bijection(256, 1024, order);
  }
}

TEST(CpuStep05LabBlockOrder, DiagonalWalksTheDiagonalsAndMatchesTheSquareFormula) {
  // Square grid: the published form, row = blockIdx.x, col = (blockIdx.x + blockIdx.y) % n.
  const unsigned n = 7;
  for (unsigned by = 0; by < n; ++by) {
    for (unsigned bx = 0; bx < n; ++bx) {
      const step05_lab::TileCoord t =
          step05_lab::tile_of_block(by * n + bx, n, n, BlockOrder::diagonal);
      EXPECT_EQ(t.row, bx);
      EXPECT_EQ(t.col, (bx + by) % n);
    }
  }
  // Consecutive blocks take diagonal neighbours: (0,0), (1,1), (2,2) on a 5 x 3 grid.
  const step05_lab::TileCoord b1 = step05_lab::tile_of_block(1, 5, 3, BlockOrder::diagonal);
  const step05_lab::TileCoord b2 = step05_lab::tile_of_block(2, 5, 3, BlockOrder::diagonal);
  EXPECT_EQ(b1.row, 1u);
  EXPECT_EQ(b1.col, 1u);
  EXPECT_EQ(b2.row, 2u);
  EXPECT_EQ(b2.col, 2u);
}

// The row order must be the lesson's: tile row bid / tiles_x, tile column bid % tiles_x.
TEST(CpuStep05LabBlockOrder, RowsOrderIsTheLessons) {
  for (unsigned bid = 0; bid < 5 * 3; ++bid) {
    const step05_lab::TileCoord t = step05_lab::tile_of_block(bid, 5, 3, BlockOrder::rows);
    EXPECT_EQ(t.row, bid / 5);
    EXPECT_EQ(t.col, bid % 5);
  }
}

TEST(CpuStep05LabLauncher, RefusesWithoutLaunching) {
  float* none = nullptr;
  using step05_lab::Loads;
  EXPECT_EQ((step05_lab::transpose<8, BlockOrder::diagonal, Loads::first>(none, none, 0, 5)),
            cudaErrorInvalidValue);
  EXPECT_EQ((step05_lab::transpose<4, BlockOrder::rows, Loads::pairs>(none, none, 5, 0)),
            cudaErrorInvalidValue);
  EXPECT_EQ((step05_lab::transpose<8, BlockOrder::rows, Loads::pairs>(none, none, 1LL << 31,
                                                                      1LL << 31)),
            cudaErrorInvalidValue);
}

}  // namespace
