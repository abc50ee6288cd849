// Hidden tests of the self-test: what an instructor's HIDDEN=dir can hold, and how the grader
// reports a test that passes, fails, throws, crashes or never ends (each in its own process).
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <stdexcept>
#include <thread>

#include "ex01.cuh"
#include "exercise_testing.cuh"

namespace {

course::Variant tiled() {
  return {"ex01::transpose", "-", "-",
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return ex01::transpose(static_cast<const float*>(in), static_cast<float*>(out),
                                   p.rows, p.cols, s);
          }};
}

TEST(HiddenEx01, PrimeRowsOfThree) {
  REQUIRE_GPU();
  EXPECT_PASSES(exercise::check_shapes(tiled(), {{65521, 3}, {3, 65521}}, "ex01::transpose"));
}

TEST(CpuHiddenEx01, RefusesNegativeSizes) {
  EXPECT_EQ(ex01::transpose(nullptr, nullptr, -5, -5, nullptr), cudaErrorInvalidValue);
}

// "*Hidden*Large*" matches a rule of the manifest: 2 points instead of 1.
TEST(CpuHiddenEx01, LargeNegativeSizes) {
  EXPECT_EQ(ex01::transpose(nullptr, nullptr, -(1LL << 40), 7, nullptr), cudaErrorInvalidValue);
}

TEST(CpuHiddenGrader, FailsWithAMessage) { FAIL() << "a failure the student reads"; }

TEST(CpuHiddenGrader, Throws) { throw std::runtime_error("an exception from the test"); }

TEST(CpuHiddenGrader, Crashes) { std::raise(SIGSEGV); }

TEST(CpuHiddenGrader, NeverEnds) {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

}  // namespace
