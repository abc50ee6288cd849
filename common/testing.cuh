/// @file testing.cuh
/// @brief What the steps' GoogleTest tests share: skipping without a GPU, and one checked run.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "device_info.hpp"
#include "harness.cuh"
#include "problem.hpp"
#include "shapes.hpp"

namespace course {

/// Skips the current test, with the reason, when no CUDA device can be used.
#define REQUIRE_GPU()                                                  \
  do {                                                                 \
    std::string why_no_gpu_;                                           \
    if (!::course::cuda_device_available(&why_no_gpu_)) {              \
      GTEST_SKIP() << "no CUDA device, GPU test not run: " << why_no_gpu_; \
    }                                                                  \
  } while (0)

/// Runs @p v once on @p p and checks it the strict way: a fresh random input; an output
/// filled with poison and framed by guard bands of poison before and after it (a write just
/// outside the matrix changes them); a bitwise comparison with the CPU reference that names the
/// first mismatch. Fails with the shape and the seed when anything is wrong, or when the launcher
/// refuses the shape (pass @p may_refuse to allow that, for kernels with documented limits).
/// A @p shift moves both matrices that many bytes past cudaMalloc's 256-byte alignment, for
/// launchers that must not assume it (a matrix can be a slice of a bigger buffer).
::testing::AssertionResult check_transpose(const Variant& v, const Problem& p,
                                           bool may_refuse = false, std::size_t shift = 0);

/// Runs check_transpose of @p v on every shape of awkward_shapes() (of @p type, @p batch) and
/// stops at the first failure.
::testing::AssertionResult check_awkward_shapes(const Variant& v, ElemType type = ElemType::f32,
                                                std::int64_t batch = 1);

/// How GoogleTest prints a Variant parameter: its name (not its bytes).
inline void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

/// A GoogleTest-safe name for a test parameterized over variants ("naive, coalesced read 32x8"
/// becomes "naive__coalesced_read_32x8"), for INSTANTIATE_TEST_SUITE_P.
std::string variant_test_name(const ::testing::TestParamInfo<Variant>& info);

}  // namespace course
