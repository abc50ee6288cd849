// Step 06 tests: every variant on every awkward shape and on shapes that take the vector path
// next to edge tiles; the launcher's refusals; and the bank model of both tile layouts, computed
// on the CPU from the very index function the kernel uses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "bank_model.hpp"
#include "testing.cuh"
#include "variants.cuh"

namespace {

using step06::kTile;
using step06::Layout;
using step06::tile_index;

class Step06 : public ::testing::TestWithParam<course::Variant> {};

TEST_P(Step06, TransposesEveryAwkwardShape) {
  REQUIRE_GPU();
  EXPECT_TRUE(course::check_awkward_shapes(GetParam()));
}

// Rows and columns that are multiples of 4 (the vector path is legal) but not of the tile, so
// full tiles run vectorized next to partial edge tiles; and shapes where only float2 is legal.
TEST_P(Step06, TransposesVectorShapesWithEdgeTiles) {
  REQUIRE_GPU();
  const course::Shape shapes[] = {{68, 132},  {132, 68},  {4096, 4100}, {4100, 4096}, {96, 160},
                                  {256, 512}, {130, 192}, {192, 130},   {4, 4},       {8, 36}};
  for (const course::Shape& s : shapes) {
    ASSERT_TRUE(course::check_transpose(GetParam(), {course::ElemType::f32, s.rows, s.cols, 1}));
  }
}

INSTANTIATE_TEST_SUITE_P(Vectorized, Step06, ::testing::ValuesIn(step06::variants()),
                         course::variant_test_name);

// The launcher checks its preconditions before touching the GPU, so this runs anywhere.
TEST(CpuStep06Launcher, RefusesEmptyMatricesAndGridsBeyondCudaLimits) {
  float* none = nullptr;
  // 32-row tiles over 3 million rows need 93,750 blocks in y, past the 65535 limit.
  EXPECT_EQ((step06::transpose<4, 4, Layout::swizzled>(none, none, 3'000'000, 1)),
            cudaErrorInvalidValue);
  EXPECT_EQ((step06::transpose<2, 8, Layout::padded>(none, none, 0, 5)), cudaErrorInvalidValue);
  EXPECT_EQ((step06::transpose<1, 4, Layout::swizzled>(none, none, 5, 0)), cudaErrorInvalidValue);
}

TEST(CpuStep06Launcher, VectorAlignmentFollowsTheVectorWidth) {
  alignas(16) static float buffer[8];
  EXPECT_TRUE(step06::vector_aligned<4>(buffer));
  EXPECT_FALSE(step06::vector_aligned<4>(buffer + 2));
  EXPECT_TRUE(step06::vector_aligned<2>(buffer + 2));
  EXPECT_FALSE(step06::vector_aligned<2>(buffer + 1));
  EXPECT_TRUE(step06::vector_aligned<1>(buffer + 1));
}

// The swizzle only permutes whole vectors inside a row: every element is stored once, in its
// own row, and each vector stays contiguous and aligned, so one vector store can write it.
template <int VEC>
void expect_whole_vectors() {
  const auto layout = course::layout_from_swizzle(
      kTile, [](int r, int c) { return tile_index<VEC, Layout::swizzled>(r, c) - r * kTile; });
  EXPECT_TRUE(course::is_row_permutation(layout, kTile)) << "VEC " << VEC;
  for (int r = 0; r < kTile; ++r) {
    for (int c = 0; c < kTile; c += VEC) {
      const int first = tile_index<VEC, Layout::swizzled>(r, c);
      EXPECT_EQ(first % VEC, 0) << "row " << r << ", col " << c;
      for (int j = 1; j < VEC; ++j) {
        EXPECT_EQ((tile_index<VEC, Layout::swizzled>(r, c + j)), first + j);
      }
    }
  }
}

TEST(CpuStep06Banks, SwizzleKeepsVectorsWholeAndAligned) {
  expect_whole_vectors<1>();
  expect_whole_vectors<2>();
  expect_whole_vectors<4>();
}

// The worst conflict degree of the fast path's shared stores: thread t of the block stores VEC
// words at (ty + k*stride, tx*VEC). A 64-bit access is served per half warp and a 128-bit one per
// quarter warp, so conflicts are counted inside those groups of 32/VEC lanes.
template <int VEC, int RPT, Layout L>
int worst_store_degree() {
  constexpr int kLanesX = kTile / VEC, kStride = kTile / RPT, kThreads = kLanesX * kStride;
  constexpr int kGroup = 32 / VEC;
  int worst = 0;
  for (int first = 0; first < kThreads; first += kGroup) {
    for (int k = 0; k < RPT; ++k) {
      std::vector<std::int64_t> words;
      for (int t = first; t < first + kGroup; ++t) {
        const int tx = t % kLanesX, ty = t / kLanesX;
        for (int j = 0; j < VEC; ++j) {
          words.push_back(tile_index<VEC, L>(ty + k * kStride, tx * VEC + j));
        }
      }
      worst = std::max(worst, course::conflict_degree(words));
    }
  }
  return worst;
}

// The same for the column reads: for each j, warp lane t reads (tx*VEC + j, ty + k*stride).
template <int VEC, int RPT, Layout L>
int worst_read_degree() {
  constexpr int kLanesX = kTile / VEC, kStride = kTile / RPT, kThreads = kLanesX * kStride;
  int worst = 0;
  for (int warp = 0; warp < kThreads; warp += 32) {
    for (int k = 0; k < RPT; ++k) {
      for (int j = 0; j < VEC; ++j) {
        std::vector<std::int64_t> words;
        for (int t = warp; t < warp + 32; ++t) {
          const int tx = t % kLanesX, ty = t / kLanesX;
          words.push_back(tile_index<VEC, L>(tx * VEC + j, ty + k * kStride));
        }
        worst = std::max(worst, course::conflict_degree(words));
      }
    }
  }
  return worst;
}

TEST(CpuStep06Banks, SwizzledTileIsConflictFreeForEveryVariant) {
  EXPECT_EQ((worst_store_degree<1, 4, Layout::swizzled>()), 1);
  EXPECT_EQ((worst_read_degree<1, 4, Layout::swizzled>()), 1);
  EXPECT_EQ((worst_store_degree<2, 1, Layout::swizzled>()), 1);
  EXPECT_EQ((worst_read_degree<2, 1, Layout::swizzled>()), 1);
  EXPECT_EQ((worst_store_degree<2, 8, Layout::swizzled>()), 1);
  EXPECT_EQ((worst_read_degree<2, 8, Layout::swizzled>()), 1);
  EXPECT_EQ((worst_store_degree<4, 1, Layout::swizzled>()), 1);
  EXPECT_EQ((worst_read_degree<4, 1, Layout::swizzled>()), 1);
  EXPECT_EQ((worst_store_degree<4, 4, Layout::swizzled>()), 1);
  EXPECT_EQ((worst_read_degree<4, 4, Layout::swizzled>()), 1);
  EXPECT_EQ((worst_store_degree<4, 8, Layout::swizzled>()), 1);
  EXPECT_EQ((worst_read_degree<4, 8, Layout::swizzled>()), 1);
}

// Padding by one vector: the vector stores are fine, the column reads are VEC-way conflicts.
TEST(CpuStep06Banks, PaddedTileConflictsOnColumnReadsByTheVectorWidth) {
  EXPECT_EQ((worst_store_degree<2, 4, Layout::padded>()), 1);
  EXPECT_EQ((worst_read_degree<2, 4, Layout::padded>()), 2);
  EXPECT_EQ((worst_store_degree<4, 4, Layout::padded>()), 1);
  EXPECT_EQ((worst_read_degree<4, 4, Layout::padded>()), 4);
}

// A swizzle that ignores the vector width (step 04's c ^ r) would split vectors: it must fail
// the whole-vector check, which is why the XOR here acts on vector slots, not on columns.
TEST(CpuStep06Banks, ElementSwizzleWouldSplitVectors) {
  int split = 0;
  for (int r = 0; r < kTile; ++r) {
    for (int c = 0; c < kTile; c += 4) {
      const int first = c ^ r;
      for (int j = 1; j < 4; ++j) split += ((c + j) ^ r) != first + j;
    }
  }
  EXPECT_GT(split, 0);
}

}  // namespace
