// Step 09 lab tests: every lab kernel in place on the awkward square sizes, on matrices that do
// not start on a sector (warps on sectors reads the address), in batches (groups of pairs
// cross matrix boundaries in blockIdx.x), and the CPU-checkable pieces: the sector offset, the
// launchers' refusals, the names and the command line. The rectangle's variants run on every
// awkward shape.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lab_variants.cuh"
#include "options.hpp"
#include "testing.cuh"

namespace {

using course::ElemType;
using course::Problem;
using course::Variant;

class Step09Lab : public ::testing::TestWithParam<Variant> {};

TEST_P(Step09Lab, TransposesAwkwardSquareSizes) {
  REQUIRE_GPU();
  for (std::int64_t n : course::awkward_square_sizes()) {
    ASSERT_TRUE(course::check_transpose(GetParam(), Problem{ElemType::f32, n, n, 1}));
  }
}

// A matrix that starts 4, 12 or 28 bytes into a sector: every row's offset d changes, and the
// sector variant must follow the address, not assume cudaMalloc's alignment.
TEST_P(Step09Lab, TransposesMatricesThatStartInsideASector) {
  REQUIRE_GPU();
  for (std::size_t shift : {4u, 12u, 28u}) {
    for (std::int64_t n : {7, 33, 65, 127, 129, 257, 1031}) {
      ASSERT_TRUE(course::check_transpose(GetParam(), Problem{ElemType::f32, n, n, 1}, false,
                                          shift));
    }
  }
}

TEST_P(Step09Lab, TransposesBatches) {
  REQUIRE_GPU();
  for (std::int64_t n : {1, 33, 64, 65, 129, 200}) {
    for (std::int64_t b : {2, 3, 7}) {
      ASSERT_TRUE(course::check_transpose(GetParam(), Problem{ElemType::f32, n, n, b}));
    }
  }
}

TEST_P(Step09Lab, TransposesTheLabSizesLarge) {
  REQUIRE_GPU();
  for (std::int64_t n : {8191, 8192}) {
    ASSERT_TRUE(course::check_transpose(GetParam(), Problem{ElemType::f32, n, n, 1}));
  }
}

INSTANTIATE_TEST_SUITE_P(Lab, Step09Lab, ::testing::ValuesIn(step09_lab::variants()),
                         course::variant_test_name);

class Step09LabRect : public ::testing::TestWithParam<Variant> {};

TEST_P(Step09LabRect, TransposesAwkwardShapes) {
  REQUIRE_GPU();
  ASSERT_TRUE(course::check_awkward_shapes(GetParam(), ElemType::f32));
}

TEST_P(Step09LabRect, TransposesTheLabShapesLarge) {
  REQUIRE_GPU();
  for (const course::Shape& s : std::vector<course::Shape>{{8191, 4097}, {8192, 4096},
                                                           {10000, 1000}, {3, 70001}}) {
    ASSERT_TRUE(course::check_transpose(GetParam(), Problem{ElemType::f32, s.rows, s.cols, 1}));
  }
}

INSTANTIATE_TEST_SUITE_P(LabRect, Step09LabRect, ::testing::ValuesIn(step09_lab::rect_variants()),
                         course::variant_test_name);

// ---------------------------------------------------------------------------------------------
// CPU tests: no GPU needed.

// sector_offset works from the low 32 bits of the element index; it must agree with the full
// 64-bit index past 2^32 elements, for any base address and both element sizes.
TEST(CpuStep09LabSectorOffset, AgreesWithTheFullIndex) {
  for (std::uint64_t base : {0ULL, 4ULL, 12ULL, 1ULL << 40, (1ULL << 40) + 20}) {
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{8191},
                           std::int64_t{46341}, std::int64_t{65535} * 64}) {
      for (std::int64_t row : {std::int64_t{0}, std::int64_t{1}, std::int64_t{3}, n / 2, n - 1}) {
        for (std::int64_t col : {std::int64_t{0}, std::int64_t{5}, n - 1}) {
          const auto* f = reinterpret_cast<const float*>(base);
          const auto* d = reinterpret_cast<const double*>(base);
          const std::uint64_t at = static_cast<std::uint64_t>(row * n + col);
          EXPECT_EQ(step09_lab::sector_offset(f, n, row, col),
                    static_cast<int>((base / 4 + at) % 8))
              << "float n " << n << " at (" << row << ", " << col << ")";
          EXPECT_EQ(step09_lab::sector_offset(d, n, row, col),
                    static_cast<int>((base / 8 + at) % 4))
              << "double n " << n << " at (" << row << ", " << col << ")";
        }
      }
    }
  }
}

// The launchers check before launching, so this runs anywhere.
TEST(CpuStep09LabLaunchers, RefuseWhatTheyCannotDo) {
  float* none = nullptr;
  using step09_lab::transpose_inplace_lab;
  EXPECT_EQ((transpose_inplace_lab<float, 64, 8, true, 1>(none, 4, 5, 1)), cudaErrorInvalidValue);
  EXPECT_EQ((transpose_inplace_lab<float, 64, 8, false, 2>(none, 0, 0, 1)),
            cudaErrorInvalidValue);
  EXPECT_EQ((transpose_inplace_lab<float, 64, 8, false, 2>(none, 1, 1, 1LL << 31)),
            cudaErrorInvalidValue);
  EXPECT_EQ((step09_lab::transpose_inplace_registers<float, 64, 8>(none, 1, 1, 1LL << 31)),
            cudaErrorInvalidValue);
  // Groups of 2 x 2 tiles of 64: 65535 groups per side is the most a grid holds.
  EXPECT_EQ((transpose_inplace_lab<float, 64, 8, false, 2>(none, 65536LL * 128 + 1,
                                                           65536LL * 128 + 1, 1)),
            cudaErrorInvalidValue);
  for (const Variant& v : step09_lab::variants()) {
    EXPECT_EQ(v.launch(Problem{ElemType::f32, 48, 32, 1}, none, none, nullptr),
              cudaErrorInvalidValue)
        << v.name;
  }
}

// Every kernel is in place, and no name is part of another: --only, the profiler script and
// the notebook's markers pick exactly one kernel by its name.
TEST(CpuStep09LabVariants, InPlaceAndNamedApart) {
  std::vector<Variant> list = step09_lab::variants();
  ASSERT_EQ(list.size(), 7u);
  for (const Variant& v : step09_lab::rect_variants()) list.push_back(v);
  for (const Variant& v : list) {
    EXPECT_TRUE(v.in_place) << v.name;
    for (const Variant& w : list) {
      if (&v != &w) EXPECT_EQ(w.name.find(v.name), std::string::npos) << v.name << " / " << w.name;
    }
  }
}

std::vector<Variant> from_args(const std::vector<std::string>& args) {
  return step09_lab::from_options(course::parse_options(step09_lab::info(), args));
}

TEST(CpuStep09LabOptions, CommandLineContract) {
  using course::UsageError;
  EXPECT_EQ(from_args({"--rows", "8191", "--cols", "8192"}).size(), 10u);  // the rectangle's
  EXPECT_EQ(from_args({"--rows", "8191", "--cols", "8192", "--type", "f64"}).size(), 10u);
  EXPECT_THROW(from_args({"--rows", "2", "--cols", "3000000000"}), UsageError);
  EXPECT_THROW(from_args({"--rows", "64", "--cols", "64", "--batch", "2"}), UsageError);
  EXPECT_THROW(from_args({"--type", "f64"}), UsageError);
  EXPECT_THROW(from_args({"--mode", "inplace"}), UsageError);
  EXPECT_EQ(from_args({"--rows", "8191", "--cols", "8191"}).size(), 7u);
  try {
    from_args({"--rows", "4", "--cols", "3000000000"});
    FAIL() << "a side past 2^31 was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
  }
}

}  // namespace
