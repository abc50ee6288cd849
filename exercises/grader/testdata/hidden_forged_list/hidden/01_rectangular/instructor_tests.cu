// Hidden tests of the self-test's forging case: one that passes, one that fails.
#include <gtest/gtest.h>

#include "ex01.cuh"

TEST(CpuHiddenEx01, RefusesNegativeSizes) {
  EXPECT_EQ(ex01::transpose(nullptr, nullptr, -5, -5, nullptr), cudaErrorInvalidValue);
}

TEST(CpuHiddenEx01, AlwaysFails) {
  FAIL() << "the instructor's failing test";
}
