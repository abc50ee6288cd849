// Step 07 tests: every variant on every awkward shape and on shapes that mix float4 tiles with
// edge tiles; the launcher's refusals; the thread placement, the tile order and the bank model
// of both shared layouts, computed on the CPU from the functions the kernel uses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "bank_model.hpp"
#include "testing.cuh"
#include "variants.cuh"

namespace {

using step07::kSlots;
using step07::kTile;
using step07::kVectors;
using step07::Smem;

class Step07 : public ::testing::TestWithParam<course::Variant> {};

TEST_P(Step07, TransposesEveryAwkwardShape) {
  REQUIRE_GPU();
  EXPECT_TRUE(course::check_awkward_shapes(GetParam()));
}

// Multiples of 4 (the float4 path is legal) that are not multiples of 64, so whole tiles run
// vectorized next to partial edge tiles; exact multiples of 64; 9 tile rows, so the last band of
// 8 is a short one; and shapes where only one side is a multiple of 4 (all scalar).
TEST_P(Step07, TransposesVectorShapesWithEdgeTiles) {
  REQUIRE_GPU();
  const course::Shape shapes[] = {{68, 132},  {132, 68},   {4096, 4100}, {4100, 4096},
                                  {128, 192}, {192, 128},  {576, 1088},  {1088, 576},
                                  {130, 256}, {256, 130},  {1000, 1000}, {4, 4},
                                  {8, 36},    {64, 4096}};
  for (const course::Shape& s : shapes) {
    ASSERT_TRUE(course::check_transpose(GetParam(), {course::ElemType::f32, s.rows, s.cols, 1}));
  }
}

INSTANTIATE_TEST_SUITE_P(Tile64, Step07, ::testing::ValuesIn(step07::variants()),
                         course::variant_test_name);

// The launcher checks its preconditions before touching the GPU, so this runs anywhere.
TEST(CpuStep07Launcher, RefusesEmptyMatricesAndTooManyTiles) {
  float* none = nullptr;
  EXPECT_EQ((step07::transpose<256, Smem::swizzled>(none, none, 0, 64)), cudaErrorInvalidValue);
  EXPECT_EQ((step07::transpose<256, Smem::padded>(none, none, 64, 0)), cudaErrorInvalidValue);
  // 2^20 x 2^20 tiles: 2^40 blocks, past the 2^31 - 1 a grid can have.
  const std::int64_t huge = std::int64_t{1} << 26;
  EXPECT_EQ((step07::transpose<512, Smem::swizzled, 8>(none, none, huge, huge)),
            cudaErrorInvalidValue);
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

// Smem::quads: every float4 of the tile is in exactly one quad row of one (thread, j), and for
// each of a quad's 4 rows a warp loads 2 rows x 16 slots: four whole 128-byte lines.
template <int THREADS>
void expect_quads_cover_the_tile() {
  constexpr int kQuads = kVectors / 4 / THREADS;
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < THREADS; ++t) {
    for (int j = 0; j < kQuads; ++j) {
      const step07::Place q = step07::quad<THREADS>(t, j);
      ASSERT_EQ(q.row % 4, 0);
      ASSERT_LT(q.row, kTile);
      ASSERT_LT(q.slot, kSlots);
      for (int i = 0; i < 4; ++i) {
        EXPECT_TRUE(seen.insert({q.row + i, q.slot}).second)
            << THREADS << " threads: thread " << t << ", quad " << j << " repeats a float4";
      }
    }
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kVectors));
  for (int warp = 0; warp < THREADS; warp += 32) {
    for (int j = 0; j < kQuads; ++j) {
      std::set<int> lines;
      for (int t = warp; t < warp + 32; ++t) {
        const step07::Place q = step07::quad<THREADS>(t, j);
        lines.insert(q.row * 2 + q.slot / 8);
      }
      EXPECT_EQ(lines.size(), 4u);
    }
  }
}

TEST(CpuStep07Placement, QuadsCoverTheTileOnceInWholeLines) {
  expect_quads_cover_the_tile<256>();
  expect_quads_cover_the_tile<128>();
}

// Both tile orders visit every tile exactly once, also when the last band is short.
template <int BAND, int CHUNK = 1>
void expect_every_tile_once(unsigned tiles_x, unsigned tiles_y) {
  std::set<std::pair<unsigned, unsigned>> seen;
  for (unsigned b = 0; b < tiles_x * tiles_y; ++b) {
    const step07::Tile t = step07::tile_of<BAND, CHUNK>(b, tiles_x, tiles_y);
    ASSERT_LT(t.row, tiles_y) << "block " << b;
    ASSERT_LT(t.col, tiles_x) << "block " << b;
    EXPECT_TRUE(seen.insert({t.row, t.col}).second) << "block " << b << " repeats a tile";
  }
}

TEST(CpuStep07TileOrder, EveryTileOnce) {
  for (auto [x, y] : {std::pair{1u, 1u}, {1u, 9u}, {9u, 1u}, {5u, 8u}, {16u, 17u}, {3u, 23u}}) {
    expect_every_tile_once<0>(x, y);
    expect_every_tile_once<1>(x, y);
    expect_every_tile_once<8>(x, y);
    expect_every_tile_once<8, 8>(x, y);
    expect_every_tile_once<16, 16>(x, y);
    expect_every_tile_once<4, 3>(x, y);
  }
  // In a square, consecutive blocks go along the square's row first, then down.
  const auto square = [](unsigned b) { return step07::tile_of<8, 8>(b, 100, 100); };
  EXPECT_EQ(square(1).col, 1u);
  EXPECT_EQ(square(8).row, 1u);
  EXPECT_EQ(square(8).col, 0u);
  EXPECT_EQ(square(64).col, 8u);
  // In a band, consecutive blocks go down the band's tile rows first.
  EXPECT_EQ(step07::tile_of<8>(1, 100, 100).row, 1u);
  EXPECT_EQ(step07::tile_of<8>(1, 100, 100).col, 0u);
  EXPECT_EQ(step07::tile_of<8>(8, 100, 100).col, 1u);
  // Down the columns: consecutive blocks go down a whole column of tiles first.
  EXPECT_EQ(step07::tile_of<0>(1, 100, 30).row, 1u);
  EXPECT_EQ(step07::tile_of<0>(29, 100, 30).row, 29u);
  EXPECT_EQ(step07::tile_of<0>(30, 100, 30).row, 0u);
  EXPECT_EQ(step07::tile_of<0>(30, 100, 30).col, 1u);
}

// The swizzle only permutes whole float4s inside a row, keeping each one contiguous and aligned.
TEST(CpuStep07Banks, SwizzleKeepsFloat4sWholeAndAligned) {
  const auto layout = course::layout_from_swizzle(
      kTile, [](int r, int c) { return step07::tile_index<Smem::swizzled>(r, c) - r * kTile; });
  EXPECT_TRUE(course::is_row_permutation(layout, kTile));
  for (int r = 0; r < kTile; ++r) {
    for (int c = 0; c < kTile; c += 4) {
      const int first = step07::tile_index<Smem::swizzled>(r, c);
      EXPECT_EQ(first % 4, 0);
      for (int j = 1; j < 4; ++j) EXPECT_EQ((step07::tile_index<Smem::swizzled>(r, c + j)), first + j);
    }
  }
}

// Worst conflict degree of the float4 path's shared accesses along tile rows (the stores, and
// for Smem::quads the loads on the way out). Swizzled and quads: one 16-byte access per float4,
// served a quarter warp (8 lanes) at a time. Padded: four 4-byte stores, a warp each.
template <int THREADS, Smem S>
int worst_store_degree() {
  constexpr bool kFloat4 = S != Smem::padded;  // one 16-byte access per float4
  int worst = 0;
  for (int warp = 0; warp < THREADS; warp += 32) {
    for (int k = 0; k < kVectors / THREADS; ++k) {
      const int group = kFloat4 ? 8 : 32;
      for (int first = warp; first < warp + 32; first += group) {
        for (int j = 0; j < (kFloat4 ? 1 : 4); ++j) {
          std::vector<std::int64_t> words;
          for (int t = first; t < first + group; ++t) {
            const step07::Place p = step07::place<THREADS>(t, k);
            if (kFloat4) {
              for (int e = 0; e < 4; ++e) {
                words.push_back(step07::tile_index<S>(p.row, 4 * p.slot + e));
              }
            } else {
              words.push_back(step07::tile_index<S>(p.row, 4 * p.slot + j));
            }
          }
          worst = std::max(worst, course::conflict_degree(words));
        }
      }
    }
  }
  return worst;
}

// The column reads: for each j, lane t reads tile row 4*slot + j of column `row`.
template <int THREADS, Smem S>
int worst_read_degree() {
  int worst = 0;
  for (int warp = 0; warp < THREADS; warp += 32) {
    for (int k = 0; k < kVectors / THREADS; ++k) {
      for (int j = 0; j < 4; ++j) {
        std::vector<std::int64_t> words;
        for (int t = warp; t < warp + 32; ++t) {
          const step07::Place p = step07::place<THREADS>(t, k);
          words.push_back(step07::tile_index<S>(4 * p.slot + j, p.row));
        }
        worst = std::max(worst, course::conflict_degree(words));
      }
    }
  }
  return worst;
}

// Smem::quads: the turned quads go in as float4s, column e of quad j at tile row 4*slot + e,
// slot row / 4; a quarter warp (8 lanes) at a time.
template <int THREADS>
int worst_quad_store_degree() {
  int worst = 0;
  for (int first = 0; first < THREADS; first += 8) {
    for (int j = 0; j < kVectors / 4 / THREADS; ++j) {
      for (int e = 0; e < 4; ++e) {
        std::vector<std::int64_t> words;
        for (int t = first; t < first + 8; ++t) {
          const step07::Place q = step07::quad<THREADS>(t, j);
          for (int i = 0; i < 4; ++i) {
            words.push_back(step07::tile_index<Smem::quads>(4 * q.slot + e, q.row + i));
          }
        }
        worst = std::max(worst, course::conflict_degree(words));
      }
    }
  }
  return worst;
}

TEST(CpuStep07Banks, EveryLayoutIsConflictFreeOnTheFloat4Path) {
  EXPECT_EQ((worst_store_degree<512, Smem::swizzled>()), 1);
  EXPECT_EQ((worst_read_degree<512, Smem::swizzled>()), 1);
  EXPECT_EQ((worst_store_degree<256, Smem::swizzled>()), 1);
  EXPECT_EQ((worst_read_degree<256, Smem::swizzled>()), 1);
  EXPECT_EQ((worst_store_degree<128, Smem::swizzled>()), 1);
  EXPECT_EQ((worst_read_degree<128, Smem::swizzled>()), 1);
  EXPECT_EQ((worst_store_degree<256, Smem::padded>()), 1);
  EXPECT_EQ((worst_read_degree<256, Smem::padded>()), 1);
  EXPECT_EQ((worst_store_degree<256, Smem::quads>()), 1);  // the loads on the way out
  EXPECT_EQ((worst_quad_store_degree<256>()), 1);
  EXPECT_EQ((worst_store_degree<128, Smem::quads>()), 1);
  EXPECT_EQ((worst_quad_store_degree<128>()), 1);
}

// The quads' stores would conflict without the swizzle: 8 lanes write column e of 8 quads side
// by side, tile rows 4 apart, all at the same slot.
TEST(CpuStep07Banks, QuadStoresNeedTheSwizzle) {
  std::vector<std::int64_t> words;
  for (int t = 0; t < 8; ++t) {
    const step07::Place q = step07::quad<256>(t, 0);
    for (int i = 0; i < 4; ++i) words.push_back(4 * q.slot * kTile + q.row + i);
  }
  EXPECT_EQ(course::conflict_degree(words), 8);
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
