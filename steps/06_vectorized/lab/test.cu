// Step 06 lab tests: every lab kernel on every awkward shape and on rows = 4 (mod 8); where each
// thread works, and which output bytes a pair of lanes writes, computed on the CPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <utility>

#include "testing.cuh"
#include "lab_variants.cuh"

namespace {

class Step06Lab : public ::testing::TestWithParam<course::Variant> {};

TEST_P(Step06Lab, TransposesEveryAwkwardShape) {
  REQUIRE_GPU();
  EXPECT_TRUE(course::check_awkward_shapes(GetParam()));
}

// The float4 path with rows = 4 (mod 8), where half the output rows start mid-sector, next to
// rows = 0 (mod 8), and a tall shape with rows % 4 != 0 (the scalar path).
TEST_P(Step06Lab, TransposesRowsFourModEight) {
  REQUIRE_GPU();
  for (const course::Shape s : {course::Shape{100, 68}, course::Shape{104, 68},
                                course::Shape{8196, 36}, course::Shape{4097, 40}}) {
    EXPECT_TRUE(course::check_transpose(GetParam(), {course::ElemType::f32, s.rows, s.cols, 1}));
  }
}

INSTANTIATE_TEST_SUITE_P(Lab, Step06Lab, ::testing::ValuesIn(step06_lab::variants()),
                         course::variant_test_name);

// Every (column, group of 4 rows) of a block's 32 x 32 piece is taken by exactly one thread.
template <int LANES>
void expect_every_place_once() {
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < 256; ++t) {
    const step06_lab::Place p = step06_lab::place<LANES>(t);
    ASSERT_GE(p.col, 0);
    ASSERT_LT(p.col, 32);
    ASSERT_GE(p.group, 0);
    ASSERT_LT(p.group, 8);
    EXPECT_TRUE(seen.insert({p.col, p.group}).second) << "LANES " << LANES << ", thread " << t;
  }
  EXPECT_EQ(seen.size(), 256u);
}

TEST(CpuStep06LabPlace, EveryColumnAndRowGroupOnce) {
  expect_every_place_once<1>();
  expect_every_place_once<2>();
}

// The 32-byte sectors one warp's float4 stores touch, for a block at the origin of a matrix of
// @p rows rows (output row c starts at float c * rows); counts how many of them it writes whole.
template <int LANES>
std::pair<int, int> sectors_touched_and_whole(std::int64_t rows, int warp) {
  std::set<std::int64_t> touched;
  std::set<std::int64_t> bytes;
  for (int lane = 0; lane < 32; ++lane) {
    const step06_lab::Place p = step06_lab::place<LANES>(warp * 32 + lane);
    const std::int64_t first = (p.col * rows + 4 * p.group) * 4;  // byte offset of the float4
    for (int b = 0; b < 16; ++b) {
      bytes.insert(first + b);
      touched.insert((first + b) / 32);
    }
  }
  int whole = 0;
  for (std::int64_t s : touched) {
    bool all = true;
    for (int b = 0; b < 32 && all; ++b) all = bytes.count(s * 32 + b) > 0;
    whole += all;
  }
  return {static_cast<int>(touched.size()), whole};
}

TEST(CpuStep06LabSectors, OneLaneHalfWritesThirtyTwoSectors) {
  for (int warp = 0; warp < 8; ++warp) {
    EXPECT_EQ(sectors_touched_and_whole<1>(8192, warp), std::make_pair(32, 0)) << warp;
  }
}

TEST(CpuStep06LabSectors, TwoLanesWriteWholeSectorsOnlyWhenRowsAreAMultipleOfEight) {
  for (int warp = 0; warp < 8; ++warp) {
    // rows % 8 == 0: 16 output columns x one whole sector each.
    EXPECT_EQ(sectors_touched_and_whole<2>(8192, warp), std::make_pair(16, 16)) << warp;
    // rows % 8 == 4: the 8 odd output rows start mid-sector, their pairs straddle two sectors.
    EXPECT_EQ(sectors_touched_and_whole<2>(8196, warp), std::make_pair(24, 8)) << warp;
  }
}

TEST(CpuStep06LabLauncher, RefusesEmptyMatricesAndGridsBeyondCudaLimits) {
  float* none = nullptr;
  EXPECT_EQ(step06_lab::transpose_no_smem<1>(none, none, 3'000'000, 1), cudaErrorInvalidValue);
  EXPECT_EQ(step06_lab::transpose_no_smem<2>(none, none, 0, 7), cudaErrorInvalidValue);
}

}  // namespace
