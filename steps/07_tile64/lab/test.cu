// Step 07's lab tests: every lab variant on every awkward shape and on shapes that mix float4
// tiles with edge tiles; the tile orders; the quads' placement; the bank model of every layout on
// the float4 path and of the one-float controls; and the pointer chase's chain (all on the CPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "bank_model.hpp"
#include "chase.hpp"
#include "test_banks.hpp"
#include "testing.cuh"
#include "lab_variants.cuh"

namespace {

using step07lab::kSlots;
using step07lab::kTile;
using step07lab::kVectors;
using step07lab::Smem;

class Step07Lab : public ::testing::TestWithParam<course::Variant> {};

TEST_P(Step07Lab, TransposesEveryAwkwardShape) {
  REQUIRE_GPU();
  EXPECT_TRUE(course::check_awkward_shapes(GetParam()));
}

// As in the lesson's tests, plus 9 and 17 tile rows, so the last band of 8 and the last square
// of 16 are short ones, and shifted pointers, so the float4 path must be refused.
TEST_P(Step07Lab, TransposesVectorShapesWithEdgeTiles) {
  REQUIRE_GPU();
  const course::Shape shapes[] = {{68, 132},   {132, 68},  {4096, 4100}, {4100, 4096},
                                  {128, 192},  {192, 128}, {576, 1088},  {1088, 576},
                                  {1088, 1100}, {130, 256}, {256, 130},  {1000, 1000},
                                  {4, 4},      {8, 36},    {64, 4096},   {4096, 64}};
  for (const course::Shape& s : shapes) {
    ASSERT_TRUE(course::check_transpose(GetParam(), {course::ElemType::f32, s.rows, s.cols, 1}));
  }
  ASSERT_TRUE(course::check_transpose(GetParam(), {course::ElemType::f32, 128, 192, 1}, false, 4));
}

INSTANTIATE_TEST_SUITE_P(Lab, Step07Lab, ::testing::ValuesIn(step07lab::variants()),
                         course::variant_test_name);

TEST(CpuStep07LabLaunchers, RefuseEmptyMatricesAndTooBigGrids) {
  float* none = nullptr;
  EXPECT_EQ((step07lab::transpose<256, Smem::padded>(none, none, 0, 64)), cudaErrorInvalidValue);
  EXPECT_EQ((step07lab::transpose<256, Smem::quads>(none, none, 64, 0)), cudaErrorInvalidValue);
  const std::int64_t huge = std::int64_t{1} << 26;  // 2^40 tiles
  EXPECT_EQ((step07lab::transpose<512, Smem::swizzled, 8>(none, none, huge, huge)),
            cudaErrorInvalidValue);
  EXPECT_EQ(step07lab::transpose_scalar<512>(none, none, huge, huge), cudaErrorInvalidValue);
  EXPECT_EQ(step07lab::transpose_scalar<256>(none, none, 1, 0), cudaErrorInvalidValue);
  // The clone's 2D grid has at most 65535 tile columns: 4,194,240 columns.
  EXPECT_EQ(step07lab::transpose_clone<true>(none, none, 64, 4194241), cudaErrorInvalidValue);
  EXPECT_EQ(step07lab::transpose_clone<false>(none, none, 0, 64), cudaErrorInvalidValue);
}

// Every order visits every tile exactly once, also when the last band or chunk is short.
template <int BAND, int CHUNK = 1>
void expect_every_tile_once(unsigned tiles_x, unsigned tiles_y) {
  std::set<std::pair<unsigned, unsigned>> seen;
  for (unsigned b = 0; b < tiles_x * tiles_y; ++b) {
    const step07::Tile t = step07lab::tile_of<BAND, CHUNK>(b, tiles_x, tiles_y);
    ASSERT_LT(t.row, tiles_y) << "block " << b;
    ASSERT_LT(t.col, tiles_x) << "block " << b;
    EXPECT_TRUE(seen.insert({t.row, t.col}).second) << "block " << b << " repeats a tile";
  }
}

TEST(CpuStep07LabTileOrder, EveryTileOnce) {
  for (auto [x, y] : {std::pair{1u, 1u}, {1u, 9u}, {9u, 1u}, {5u, 8u}, {16u, 17u}, {3u, 23u}}) {
    expect_every_tile_once<0>(x, y);
    expect_every_tile_once<1>(x, y);
    expect_every_tile_once<8>(x, y);
    expect_every_tile_once<8, 8>(x, y);
    expect_every_tile_once<16, 16>(x, y);
    expect_every_tile_once<4, 3>(x, y);
  }
  // Plain: along the tile rows. Squares: along a square's row first, then down. Bands: down the
  // band's tile rows first.
  EXPECT_EQ((step07lab::tile_of<1>(1, 100, 100).col), 1u);
  EXPECT_EQ((step07lab::tile_of<1>(100, 100, 100).row), 1u);
  const auto square = [](unsigned b) { return step07lab::tile_of<8, 8>(b, 100, 100); };
  EXPECT_EQ(square(1).col, 1u);
  EXPECT_EQ(square(8).row, 1u);
  EXPECT_EQ(square(8).col, 0u);
  EXPECT_EQ(square(64).col, 8u);
  EXPECT_EQ((step07lab::tile_of<8>(1, 100, 100).row), 1u);
  EXPECT_EQ((step07lab::tile_of<8>(8, 100, 100).col), 1u);
  EXPECT_EQ((step07lab::tile_of<0>(30, 100, 30).col), 1u);
}

// The signed and the unsigned swizzle are the same layout: only their instructions differ.
TEST(CpuStep07LabBanks, SignedSwizzleIsTheLessonsLayout) {
  for (int r = 0; r < kTile; ++r) {
    for (int c = 0; c < kTile; ++c) {
      ASSERT_EQ(step07lab::tile_index<Smem::signed_swizzle>(r, c),
                step07lab::tile_index<Smem::swizzled>(r, c));
    }
  }
}

// Smem::quads: every float4 of the tile is in exactly one quad row of one (thread, j), and for
// each of a quad's 4 rows a warp loads 2 rows x 16 slots: four whole 128-byte lines.
template <int THREADS>
void expect_quads_cover_the_tile() {
  constexpr int kQuads = kVectors / 4 / THREADS;
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < THREADS; ++t) {
    for (int j = 0; j < kQuads; ++j) {
      const step07::Place q = step07lab::quad<THREADS>(t, j);
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
        const step07::Place q = step07lab::quad<THREADS>(t, j);
        lines.insert(q.row * 2 + q.slot / 8);
      }
      EXPECT_EQ(lines.size(), 4u);
    }
  }
}

TEST(CpuStep07LabPlacement, QuadsCoverTheTileOnceInWholeLines) {
  expect_quads_cover_the_tile<256>();
  expect_quads_cover_the_tile<128>();
}

// Worst conflict degree of the float4 path's shared accesses along tile rows (the stores, and
// for Smem::quads the loads on the way out). One 16-byte access per float4 is served a quarter
// warp (8 lanes) at a time; the padded tile's four 4-byte stores a warp at a time.
template <int THREADS, Smem S>
int worst_row_degree() {
  constexpr bool kFloat4 = S != Smem::padded;
  constexpr int kGroup = kFloat4 ? 8 : 32;
  int worst = 0;
  for (int first = 0; first < THREADS; first += kGroup) {
    for (int k = 0; k < kVectors / THREADS; ++k) {
      for (int j = 0; j < (kFloat4 ? 1 : 4); ++j) {
        std::vector<std::int64_t> words;
        for (int t = first; t < first + kGroup; ++t) {
          const step07::Place p = step07::place<THREADS>(t, k);
          for (int e = kFloat4 ? 0 : j; e < (kFloat4 ? 4 : j + 1); ++e) {
            words.push_back(step07lab::tile_index<S>(p.row, 4 * p.slot + e));
          }
        }
        worst = std::max(worst, course::conflict_degree(words));
      }
    }
  }
  return worst;
}

// The column reads, in the lesson's bank model (test_banks.hpp), on layout S.
template <int THREADS, Smem S>
int worst_column_degree() {
  return step07::worst_read_degree<THREADS>(step07lab::tile_index<S>);
}

// Smem::quads: the turned quads go in as float4s, column e of quad j at tile row 4 * slot + e,
// slot row / 4; a quarter warp (8 lanes) at a time.
template <int THREADS>
int worst_quad_store_degree() {
  int worst = 0;
  for (int first = 0; first < THREADS; first += 8) {
    for (int j = 0; j < kVectors / 4 / THREADS; ++j) {
      for (int e = 0; e < 4; ++e) {
        std::vector<std::int64_t> words;
        for (int t = first; t < first + 8; ++t) {
          const step07::Place q = step07lab::quad<THREADS>(t, j);
          for (int i = 0; i < 4; ++i) {
            words.push_back(step07lab::tile_index<Smem::quads>(4 * q.slot + e, q.row + i));
          }
        }
        worst = std::max(worst, course::conflict_degree(words));
      }
    }
  }
  return worst;
}

TEST(CpuStep07LabBanks, EveryLayoutIsConflictFreeOnTheFloat4Path) {
  EXPECT_EQ((worst_row_degree<256, Smem::padded>()), 1);
  EXPECT_EQ((worst_column_degree<256, Smem::padded>()), 1);
  EXPECT_EQ((worst_row_degree<256, Smem::signed_swizzle>()), 1);
  EXPECT_EQ((worst_column_degree<256, Smem::signed_swizzle>()), 1);
  EXPECT_EQ((worst_row_degree<256, Smem::quads>()), 1);  // the loads on the way out
  EXPECT_EQ(worst_quad_store_degree<256>(), 1);
  EXPECT_EQ((worst_row_degree<128, Smem::quads>()), 1);
  EXPECT_EQ(worst_quad_store_degree<128>(), 1);
}

// The quads' stores would conflict without the swizzle: 8 lanes write column e of 8 quads side
// by side, tile rows 4 apart, all at the same slot.
TEST(CpuStep07LabBanks, QuadStoresNeedTheSwizzle) {
  std::vector<std::int64_t> words;
  for (int t = 0; t < 8; ++t) {
    const step07::Place q = step07lab::quad<256>(t, 0);
    for (int i = 0; i < 4; ++i) words.push_back(4 * q.slot * kTile + q.row + i);
  }
  EXPECT_EQ(course::conflict_degree(words), 8);
}

// The one-float controls: the scalar kernel's warp reads (and writes) one 32-float stretch of a
// padded row, and reads a column of it back; the clone's half[32][65] is read and written along
// rows and along columns. Every such warp access finds 32 different banks.
TEST(CpuStep07LabBanks, OneFloatControlsAreConflictFree) {
  const course::TileLayout padded64 = course::padded_layout(kTile);
  EXPECT_EQ(course::worst_row_degree(padded64, kTile), 1);
  EXPECT_EQ(course::worst_column_degree(padded64, kTile), 1);
  // half[32][65] as the clone uses it: element (r, c) at word r * 65 + c.
  const auto half = [](int r, int c) { return static_cast<std::int64_t>(r) * 65 + c; };
  for (int fixed = 0; fixed < 64; ++fixed) {
    std::vector<std::int64_t> along_row, down_column;
    for (int lane = 0; lane < 32; ++lane) {
      along_row.push_back(half(fixed % 32, lane + 32 * (fixed / 32)));
      down_column.push_back(half(lane, fixed));
    }
    EXPECT_EQ(course::conflict_degree(along_row), 1);
    EXPECT_EQ(course::conflict_degree(down_column), 1);
  }
}

// The chain is one cycle through every line, so a walk never returns to a line it has read.
void expect_one_cycle(const std::vector<std::uint32_t>& next) {
  std::vector<bool> seen(next.size(), false);
  std::uint32_t line = 0;
  for (std::size_t n = 0; n < next.size(); ++n) {
    ASSERT_LT(line, next.size());
    ASSERT_FALSE(seen[line]) << "line " << line << " visited twice after " << n << " loads";
    seen[line] = true;
    line = next[line];
  }
  EXPECT_EQ(line, 0u) << "the walk does not close the cycle";
}

TEST(CpuStep07LabLatency, ChainIsOneCycleThroughEveryLine) {
  for (auto how : {step07lab::Chase::in_page, step07lab::Chase::random}) {
    for (std::size_t lines : {1u, 2u, 3u, 16384u, 40000u}) {
      const auto order = step07lab::chase_order(lines, how, 7);
      expect_one_cycle(step07lab::chase_next(order));
    }
  }
}

// In-page: the first 16384 lines visited (one 2 MiB page) are exactly the first page's lines,
// in an order that is not the address order; random: the lines wander across pages at once.
TEST(CpuStep07LabLatency, InPageStaysOnOnePageAtATime) {
  constexpr std::size_t kPerPage = step07lab::kPageBytes / step07lab::kLineBytes;
  const auto order = step07lab::chase_order(3 * kPerPage, step07lab::Chase::in_page, 11);
  for (std::size_t i = 0; i < order.size(); ++i) ASSERT_EQ(order[i] / kPerPage, i / kPerPage);
  EXPECT_FALSE(std::is_sorted(order.begin(), order.begin() + kPerPage));
  const auto wild = step07lab::chase_order(3 * kPerPage, step07lab::Chase::random, 11);
  std::set<std::uint32_t> pages;
  for (std::size_t i = 0; i < 64; ++i) pages.insert(wild[i] / kPerPage);
  EXPECT_EQ(pages.size(), 3u);
  EXPECT_THROW(step07lab::chase_order(0, step07lab::Chase::random, 1), std::invalid_argument);
}

}  // namespace
