// Step 07 tests: every variant on every awkward shape, on shapes that mix float4 tiles with edge
// tiles, and on misaligned pointers; the launcher's refusals; the thread placement, the tile
// order and the bank model of the swizzled tile, computed on the CPU from the functions the
// kernel uses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "bank_model.hpp"
#include "test_banks.hpp"  // worst_read_degree
#include "testing.cuh"
#include "variants.cuh"

namespace {

using step07::kSlots;
using step07::kTile;
using step07::kVectors;

class Step07 : public ::testing::TestWithParam<course::Variant> {};

TEST_P(Step07, TransposesEveryAwkwardShape) {
  REQUIRE_GPU();
  EXPECT_TRUE(course::check_awkward_shapes(GetParam()));
}

// Multiples of 4 (the float4 path is legal) that are not multiples of 64, so whole tiles run
// vectorized next to partial edge tiles; exact multiples of 64; more tile rows than tile columns
// and the reverse, so the order down the columns wraps at both; and shapes where only one side is
// a multiple of 4 (all scalar).
TEST_P(Step07, TransposesVectorShapesWithEdgeTiles) {
  REQUIRE_GPU();
  const course::Shape shapes[] = {{68, 132},  {132, 68},   {4096, 4100}, {4100, 4096},
                                  {128, 192}, {192, 128},  {576, 1088},  {1088, 576},
                                  {130, 256}, {256, 130},  {1000, 1000}, {4, 4},
                                  {8, 36},    {64, 4096},  {4096, 64}};
  for (const course::Shape& s : shapes) {
    ASSERT_TRUE(course::check_transpose(GetParam(), {course::ElemType::f32, s.rows, s.cols, 1}));
  }
}

// Matrices that start 4 or 8 bytes past a 16-byte boundary: the launcher must see it and take
// the scalar path, or the float4 accesses would be misaligned.
TEST_P(Step07, TransposesMisalignedPointers) {
  REQUIRE_GPU();
  for (std::size_t shift : {4, 8}) {
    ASSERT_TRUE(course::check_transpose(GetParam(), {course::ElemType::f32, 128, 192, 1}, false,
                                        shift));
  }
}

INSTANTIATE_TEST_SUITE_P(Tile64, Step07, ::testing::ValuesIn(step07::variants()),
                         course::variant_test_name);

// The launcher checks its preconditions before touching the GPU, so this runs anywhere.
TEST(CpuStep07Launcher, RefusesEmptyMatricesAndTooManyTiles) {
  float* none = nullptr;
  EXPECT_EQ(step07::transpose<256>(none, none, 0, 64), cudaErrorInvalidValue);
  EXPECT_EQ(step07::transpose<256>(none, none, 64, 0), cudaErrorInvalidValue);
  // 2^20 x 2^20 tiles: 2^40 blocks, past the 2^31 - 1 a grid can have.
  const std::int64_t huge = std::int64_t{1} << 26;
  EXPECT_EQ(step07::transpose<512>(none, none, huge, huge), cudaErrorInvalidValue);
}

// place() gives every float4 of the tile to exactly one (thread, k), and a warp's 32 float4s
// are 4 rows x 8 slots: four whole 128-byte lines.
template <int THREADS>
void expect_placement_covers_the_tile() {
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < THREADS; ++t) {
    for (int k = 0; k < kVectors / THREADS; ++k) {
      const step07::Place p = step07::place<THREADS>(t, k);
      ASSERT_GE(p.row, 0);
      ASSERT_LT(p.row, kTile);
      ASSERT_GE(p.slot, 0);
      ASSERT_LT(p.slot, kSlots);
      EXPECT_TRUE(seen.insert({p.row, p.slot}).second)
          << THREADS << " threads: thread " << t << ", k " << k << " repeats a float4";
    }
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kVectors));
  for (int warp = 0; warp < THREADS; warp += 32) {
    for (int k = 0; k < kVectors / THREADS; ++k) {
      std::set<int> rows, lines;
      for (int t = warp; t < warp + 32; ++t) {
        const step07::Place p = step07::place<THREADS>(t, k);
        rows.insert(p.row);
        lines.insert(p.row * 2 + p.slot / 8);  // 8 float4 slots = one 128-byte line
      }
      EXPECT_EQ(rows.size(), 4u);
      EXPECT_EQ(lines.size(), 4u);
    }
  }
}

TEST(CpuStep07Placement, CoversTheTileOnceInWholeLines) {
  expect_placement_covers_the_tile<512>();
  expect_placement_covers_the_tile<256>();
  expect_placement_covers_the_tile<128>();
}

// Down the columns: every tile exactly once, and consecutive blocks go down a whole column of
// tiles before the next column.
TEST(CpuStep07TileOrder, DownTheColumnsVisitsEveryTileOnce) {
  for (auto [x, y] : {std::pair{1u, 1u}, {1u, 9u}, {9u, 1u}, {5u, 8u}, {16u, 17u}, {3u, 23u}}) {
    std::set<std::pair<unsigned, unsigned>> seen;
    for (unsigned b = 0; b < x * y; ++b) {
      const step07::Tile t = step07::tile_of(b, y);
      ASSERT_LT(t.row, y) << "block " << b;
      ASSERT_LT(t.col, x) << "block " << b;
      EXPECT_TRUE(seen.insert({t.row, t.col}).second) << "block " << b << " repeats a tile";
    }
  }
  EXPECT_EQ(step07::tile_of(1, 30).row, 1u);
  EXPECT_EQ(step07::tile_of(1, 30).col, 0u);
  EXPECT_EQ(step07::tile_of(29, 30).row, 29u);
  EXPECT_EQ(step07::tile_of(30, 30).row, 0u);
  EXPECT_EQ(step07::tile_of(30, 30).col, 1u);
}

// The swizzle only permutes whole float4s inside a row, keeping each one contiguous and aligned.
TEST(CpuStep07Banks, SwizzleKeepsFloat4sWholeAndAligned) {
  const auto layout = course::layout_from_swizzle(kTile, [](int r, int c) {
    return static_cast<int>(step07::tile_index(r, c)) - r * kTile;
  });
  EXPECT_TRUE(course::is_row_permutation(layout, kTile));
  for (int r = 0; r < kTile; ++r) {
    for (int c = 0; c < kTile; c += 4) {
      const unsigned first = step07::tile_index(r, c);
      EXPECT_EQ(first % 4, 0u);
      for (int j = 1; j < 4; ++j) EXPECT_EQ(step07::tile_index(r, c + j), first + j);
    }
  }
}

// Worst conflict degree of the float4 stores along tile rows: one 16-byte access per float4,
// served a quarter warp (8 lanes) at a time.
template <int THREADS>
int worst_store_degree() {
  int worst = 0;
  for (int first = 0; first < THREADS; first += 8) {
    for (int k = 0; k < kVectors / THREADS; ++k) {
      std::vector<std::int64_t> words;
      for (int t = first; t < first + 8; ++t) {
        const step07::Place p = step07::place<THREADS>(t, k);
        for (int e = 0; e < 4; ++e) words.push_back(step07::tile_index(p.row, 4 * p.slot + e));
      }
      worst = std::max(worst, course::conflict_degree(words));
    }
  }
  return worst;
}

TEST(CpuStep07Banks, SwizzledTileIsConflictFreeOnTheFloat4Path) {
  EXPECT_EQ(worst_store_degree<512>(), 1);
  EXPECT_EQ(step07::worst_read_degree<512>(step07::tile_index), 1);
  EXPECT_EQ(worst_store_degree<256>(), 1);
  EXPECT_EQ(step07::worst_read_degree<256>(step07::tile_index), 1);
  EXPECT_EQ(worst_store_degree<128>(), 1);
  EXPECT_EQ(step07::worst_read_degree<128>(step07::tile_index), 1);
}

// A layout that looks as good but is not: the unpadded, unswizzled tile has 8-way conflicts on
// the column read (4 rows apart = 256 words = the same bank), so the model can tell them apart.
TEST(CpuStep07Banks, PlainTileWouldConflict) {
  std::vector<std::int64_t> words;
  for (int t = 0; t < 32; ++t) {
    const step07::Place p = step07::place<256>(t, 0);
    words.push_back(static_cast<std::int64_t>(4 * p.slot) * kTile + p.row);
  }
  EXPECT_EQ(course::conflict_degree(words), 8);
}

}  // namespace
