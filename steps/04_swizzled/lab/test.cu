// Step 04 lab tests: every form on every awkward shape, and every form's layout through the CPU
// bank model: a permutation of each row, one bank per thread along rows and down columns.
#include <gtest/gtest.h>

#include "bank_model.hpp"
#include "testing.cuh"
#include "lab_variants.cuh"

namespace {

using step04_lab::Form;

class Step04Lab : public ::testing::TestWithParam<course::Variant> {};

TEST_P(Step04Lab, TransposesEveryAwkwardShape) {
  REQUIRE_GPU();
  EXPECT_TRUE(course::check_awkward_shapes(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Lab, Step04Lab, ::testing::ValuesIn(step04_lab::variants()),
                         course::variant_test_name);

// The three swizzles give the same column for every row the kernel uses (0..31): the lab
// compares instructions, not layouts.
TEST(CpuStep04LabForms, SwizzlesAgreeOnRowsOfOneTile) {
  for (int r = 0; r < 32; ++r) {
    for (int c = 0; c < 32; ++c) {
      const int lesson = step04_lab::column<Form::xor_row>(r, c);
      EXPECT_EQ(step04_lab::column<Form::and_31>(r, c), lesson) << r << ", " << c;
      EXPECT_EQ(step04_lab::column<Form::mod_32>(r, c), lesson) << r << ", " << c;
    }
  }
}

template <Form F>
void expect_conflict_free() {
  const course::TileLayout layout =
      course::layout_from_swizzle(32, [](int r, int c) { return step04_lab::column<F>(r, c); });
  EXPECT_TRUE(course::is_row_permutation(layout, 32));
  EXPECT_EQ(course::worst_row_degree(layout, 32), 1);
  EXPECT_EQ(course::worst_column_degree(layout, 32), 1);
}

TEST(CpuStep04LabForms, EverySwizzleIsAConflictFreeRowPermutation) {
  expect_conflict_free<Form::xor_row>();
  expect_conflict_free<Form::and_31>();
  expect_conflict_free<Form::mod_32>();
}

TEST(CpuStep04LabLauncher, RefusesWithoutLaunching) {
  float* none = nullptr;
  EXPECT_EQ(step04_lab::transpose<Form::mod_32>(none, none, 0, 5), cudaErrorInvalidValue);
  EXPECT_EQ(step04_lab::transpose<Form::padded>(none, none, 1LL << 31, 1LL << 31),
            cudaErrorInvalidValue);
}

}  // namespace
