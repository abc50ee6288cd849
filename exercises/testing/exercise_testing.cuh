/// @file exercise_testing.cuh
/// @brief What the exercise tests share, on top of common/testing.cuh: a readable failure for a
/// function that is not written yet or a kernel that crashed (instead of an exception), the CPU
/// checks' verdicts as test results, and shape lists drawn at random from a seed that the
/// failure message prints.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "errors.hpp"
#include "host_data.hpp"
#include "index_checks.hpp"
#include "testing.cuh"

namespace exercise {

/// Fails the current test with @p result's message alone (no "Value of: ..." around it), so a
/// learner and the grader read one line: what went wrong, on which shape, with which seed.
#define EXPECT_PASSES(result)                                           \
  do {                                                                  \
    const ::testing::AssertionResult exercise_result_ = (result);       \
    if (!exercise_result_) ADD_FAILURE() << exercise_result_.message(); \
  } while (0)

/// The same, but ends the test at the first failure (GoogleTest's ASSERT_ semantics).
#define ASSERT_PASSES(result)                                           \
  do {                                                                  \
    const ::testing::AssertionResult exercise_result_ = (result);       \
    if (!exercise_result_) FAIL() << exercise_result_.message();        \
  } while (0)

/// The failure for a launcher that still returns the skeleton's cudaErrorNotYetImplemented.
inline ::testing::AssertionResult not_implemented(const std::string& what_to_write) {
  return ::testing::AssertionFailure() << "not implemented yet: " << what_to_write;
}

/// A CPU check's verdict (index_checks.hpp) as a test result: its message, or "not implemented
/// yet: write <ns>::<function> in <file>" when a function still returns kNotImplemented.
inline ::testing::AssertionResult verdict(const checks::Verdict& v, const std::string& ns,
                                          const std::string& file) {
  if (v.ok) return ::testing::AssertionSuccess();
  if (!v.todo.empty()) return not_implemented("write " + ns + "::" + v.todo + " in " + file);
  return ::testing::AssertionFailure() << v.message;
}

/// course::check_transpose (fresh random input, poisoned output between guard bands, bitwise
/// compare), where a CUDA error becomes a failure that names the shape instead of an exception:
/// "not implemented yet" for the skeleton, the error (e.g. an illegal address) otherwise.
inline ::testing::AssertionResult check(const course::Variant& v, const course::Problem& p,
                                        const std::string& what_to_write) {
  try {
    return course::check_transpose(v, p);
  } catch (const course::CudaError& e) {
    const std::string what = e.what();
    if (what.find("cudaErrorNotYetImplemented") != std::string::npos) {
      return not_implemented(what_to_write);
    }
    return ::testing::AssertionFailure() << v.name << " on " << p.describe() << ": " << what;
  }
}

/// check() on each shape (f32, one matrix); stops at the first failure. @p note is appended to
/// a failure message (e.g. the seed the shapes came from).
inline ::testing::AssertionResult check_shapes(const course::Variant& v,
                                               const std::vector<course::Shape>& shapes,
                                               const std::string& what_to_write,
                                               const std::string& note = "") {
  for (const course::Shape& s : shapes) {
    const course::Problem p{course::ElemType::f32, s.rows, s.cols, 1};
    ::testing::AssertionResult r = check(v, p, what_to_write);
    if (!r) return r << note;
  }
  return ::testing::AssertionSuccess();
}

/// Square shapes n x n, for in-place kernels.
inline std::vector<course::Shape> squares(const std::vector<std::int64_t>& sizes) {
  std::vector<course::Shape> shapes;
  for (std::int64_t n : sizes) shapes.push_back({n, n});
  return shapes;
}

/// The seed of the random shapes: EXERCISE_SEED from the environment when set (to rerun a
/// failure), a fresh one otherwise.
inline std::uint64_t shape_seed() {
  if (const char* s = std::getenv("EXERCISE_SEED")) return std::strtoull(s, nullptr, 10);
  return course::fresh_seed();
}

/// A side in [1, max_side] that is not a multiple of 32, the tile: every tile row and column
/// of the matrix has a partial tile at its end.
inline std::int64_t awkward_side(std::mt19937_64& rng, std::int64_t max_side) {
  std::uniform_int_distribution<std::int64_t> side(1, max_side);
  std::int64_t n = side(rng);
  while (n % 32 == 0) n = side(rng);
  return n;
}

/// @p count random shapes with sides in [1, max_side], neither a multiple of 32.
inline std::vector<course::Shape> random_shapes(std::uint64_t seed, int count,
                                                std::int64_t max_side) {
  std::mt19937_64 rng(seed);
  std::vector<course::Shape> shapes;
  for (int i = 0; i < count; ++i) {
    const std::int64_t rows = awkward_side(rng, max_side);
    shapes.push_back({rows, awkward_side(rng, max_side)});
  }
  return shapes;
}

/// @p count random square shapes with sides in [1, max_side], not multiples of 32.
inline std::vector<course::Shape> random_squares(std::uint64_t seed, int count,
                                                 std::int64_t max_side) {
  std::mt19937_64 rng(seed);
  std::vector<course::Shape> shapes;
  for (int i = 0; i < count; ++i) {
    const std::int64_t n = awkward_side(rng, max_side);
    shapes.push_back({n, n});
  }
  return shapes;
}

/// What a failure on random shapes adds, so that the same shapes can be drawn again.
inline std::string seed_note(std::uint64_t seed) {
  return " [random shapes from seed " + std::to_string(seed) + "; rerun them with EXERCISE_SEED=" +
         std::to_string(seed) + "]";
}

/// Checks that a launcher refused a shape: cudaErrorInvalidValue, returned without launching.
inline ::testing::AssertionResult refused(cudaError_t status, const std::string& call,
                                          const std::string& what_to_write) {
  if (status == cudaErrorInvalidValue) return ::testing::AssertionSuccess();
  if (status == cudaErrorNotYetImplemented) return not_implemented(what_to_write);
  return ::testing::AssertionFailure()
         << call << " returned " << cudaGetErrorName(status)
         << "; expected cudaErrorInvalidValue, returned before any launch";
}

/// Checks that a launcher refuses every shape of checks::limit_shapes() (more tiles than a
/// one-dimensional grid holds) without launching. @p launch calls it with null pointers: a launch
/// would fail, so only a refusal before any CUDA call passes. @p name names it ("ex01::transpose").
inline ::testing::AssertionResult launcher_refuses_past_grid_limit(
    const std::function<cudaError_t(std::int64_t rows, std::int64_t cols)>& launch,
    const std::string& name, const std::string& what_to_write) {
  for (const course::Shape& s : checks::limit_shapes()) {
    ::testing::AssertionResult r =
        refused(launch(s.rows, s.cols),
                name + "(rows = " + std::to_string(s.rows) + ", cols = " + std::to_string(s.cols) +
                    ")",
                what_to_write);
    if (!r) return r;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace exercise
