// Step 01 tests: every variant on every awkward shape, plus the launcher's refusals.
#include <gtest/gtest.h>

#include "testing.cuh"
#include "variants.cuh"

namespace {

class Step01 : public ::testing::TestWithParam<course::Variant> {};

TEST_P(Step01, TransposesEveryAwkwardShape) {
  REQUIRE_GPU();
  EXPECT_TRUE(course::check_awkward_shapes(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Naive, Step01, ::testing::ValuesIn(step01::variants()),
                         course::variant_test_name);

// The launcher checks its preconditions before touching the GPU, so this runs anywhere.
TEST(CpuStep01Launcher, RefusesGridsBeyondCudaLimits) {
  float* none = nullptr;
  // 32x8 blocks over 10^7 rows need 1.25 million blocks in y, past the 65535 limit.
  EXPECT_EQ(step01::transpose(none, none, 10'000'000, 1, step01::Coalesced::read, dim3(32, 8)),
            cudaErrorInvalidValue);
  EXPECT_EQ(step01::transpose(none, none, 0, 5, step01::Coalesced::read, dim3(32, 8)),
            cudaErrorInvalidValue);
  EXPECT_EQ(step01::transpose(none, none, 5, 5, step01::Coalesced::read, dim3(64, 32)),
            cudaErrorInvalidValue);
}

}  // namespace
