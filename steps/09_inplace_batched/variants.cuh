// The kernels of step 09 as the harness and the tests see them, one list per --mode (the parts
// of the lesson: 1 README.md, squares in place; 2 BATCHED.md; 3 RECTANGLES.md and 4 COPRIME.md,
// rectangles):
//   inplace          one square matrix in its own buffer      "in-place tile pairs ..."
//                    one rectangle in its own buffer          "in-place rectangle ..."
//   batched          B matrices, out of place                 "batched ..."
//   inplace-batched  B square matrices, each in its own place "in-place batched ..."
// Names start with those words so that a lesson table can pick a family by substring.
#pragma once

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "batched.cuh"
#include "errors.hpp"
#include "groups.cuh"
#include "harness.cuh"
#include "inplace.cuh"
#include "inplace_rect.cuh"

namespace step09 {

enum class Mode { inplace, batched, inplace_batched };

/// The step's description for the shared parser: types f32 and f64, --batch, --mode.
inline course::StepInfo info() {
  course::StepInfo step;
  step.binary = "step09";
  step.title = "in-place and batched transposes";
  step.description =
      "In place: a square matrix is transposed in its own buffer, one block per pair of tiles\n"
      "(i, j) and (j, i) of the upper triangle; a rectangle in two passes (c x c squares, then\n"
      "pieces along cycles) where gcd(rows, cols) >= 32, in three (rows, columns, rows) where\n"
      "gcd = 1, and by the general passes otherwise. Batched: many matrices stored back to\n"
      "back are transposed in one launch, by tiles numbered across the batch or by whole small\n"
      "matrices grouped per block. --mode inplace-batched takes square matrices only\n"
      "(--rows = --cols).";
  step.types = {course::ElemType::f32, course::ElemType::f64};
  step.supports_batch = true;
  step.cublas_reference = true;
  step.extras = {{"mode",
                  {"inplace", "batched", "inplace-batched"},
                  "one matrix in place; B matrices; B square matrices in place"}};
  return step;
}

namespace detail {

inline std::string square(int tile) { return std::to_string(tile) + "x" + std::to_string(tile); }

/// Tile pairs, in place: one matrix (mode inplace) or a batch (the same kernel).
template <typename T, int TILE, int ROWS>
course::Variant pairs(const std::string& prefix) {
  course::Variant v{(prefix == "in-place" ? "pairs-" : "batch-pairs-") + square(TILE),
                    prefix + " tile pairs " + square(TILE),
                    std::to_string(TILE) + "x" + std::to_string(ROWS), square(TILE),
                    [](const course::Problem& p, const void*, void* out, cudaStream_t s) {
                      return transpose_inplace<T, TILE, ROWS>(static_cast<T*>(out), p.rows,
                                                              p.cols, p.batch, s);
                    }};
  v.in_place = true;
  return v;
}

template <typename T, int TILE, int ROWS>
course::Variant tiles() {
  return {"tiles", "batched tiles " + square(TILE),
          std::to_string(TILE) + "x" + std::to_string(ROWS), square(TILE),
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose_batched<T, TILE, ROWS>(static_cast<const T*>(in),
                                                    static_cast<T*>(out), p.rows, p.cols,
                                                    p.batch, s);
          }};
}

/// Whole matrices per block; in place it takes square matrices only, like every in-place mode
/// (the kernel itself would also do rectangular ones: "What to try" in BATCHED.md).
template <typename T>
course::Variant whole(bool in_place) {
  course::Variant v{in_place ? "batch-whole" : "whole",
                    in_place ? "in-place batched whole matrices" : "batched whole matrices", "256",
                    "-",
                    [in_place](const course::Problem& p, const void* in, void* out,
                               cudaStream_t s) {
                      if (in_place && p.rows != p.cols) return cudaErrorInvalidValue;
                      return transpose_grouped<T>(static_cast<const T*>(in), static_cast<T*>(out),
                                                  p.rows, p.cols, p.batch, s);
                    }};
  v.in_place = in_place;
  return v;
}

/// A rectangle in place (inplace_rect.cuh). @p plan keeps what the first call for a shape
/// makes (the route and its cycle table, device memory), so that the timed calls only launch.
template <typename T>
course::Variant rect(std::shared_ptr<RectPlan> plan) {
  course::Variant v{"rect", "in-place rectangle, two or three passes", "-", "-",
                    [plan](const course::Problem& p, const void*, void* out, cudaStream_t s) {
                      return transpose_inplace_rect<T>(static_cast<T*>(out), p.rows, p.cols,
                                                       *plan, s);
                    }};
  v.in_place = true;
  return v;
}

// f32 gets 64 x 64 tiles too (rows of 256 bytes); f64 has 256-byte rows at 32 x 32 already,
// and two 64 x 64 f64 tiles would not fit in the 48 KB of static shared memory.
template <typename T>
std::vector<course::Variant> typed(Mode mode) {
  if constexpr (sizeof(T) == 4) {
    switch (mode) {
      case Mode::inplace:
        return {pairs<T, 32, 8>("in-place"), pairs<T, 64, 8>("in-place")};
      case Mode::batched:
        return {tiles<T, 64, 4>(), whole<T>(false)};
      case Mode::inplace_batched:
        return {pairs<T, 32, 8>("in-place batched"), pairs<T, 64, 8>("in-place batched"),
                whole<T>(true)};
    }
  } else {
    switch (mode) {
      case Mode::inplace:
        return {pairs<T, 32, 8>("in-place")};
      case Mode::batched:
        return {tiles<T, 32, 8>(), whole<T>(false)};
      case Mode::inplace_batched:
        return {pairs<T, 32, 8>("in-place batched"), whole<T>(true)};
    }
  }
  return {};
}

}  // namespace detail

/// The kernels of one mode for one element type (f32 or f64).
inline std::vector<course::Variant> variants(Mode mode, course::ElemType type) {
  if (type == course::ElemType::f64) return detail::typed<double>(mode);
  return detail::typed<float>(mode);
}

/// The rectangle kernel of --mode inplace for one element type, with its own @p plan.
inline std::vector<course::Variant> rect_variants(course::ElemType type,
                                                  std::shared_ptr<RectPlan> plan) {
  if (type == course::ElemType::f64) return {detail::rect<double>(std::move(plan))};
  return {detail::rect<float>(std::move(plan))};
}

/// The kernels for a parsed command line: --mode inplace takes a square (tile pairs) or a
/// rectangle (passes); the other refusals come here, with the reason, before anything is
/// allocated (the launchers refuse too, for other callers). @p plan, when given, receives the
/// rectangle kernel's plan, so that main can say how much scratch it used.
inline std::vector<course::Variant> from_options(const course::Options& opt,
                                                 std::shared_ptr<RectPlan>* plan = nullptr) {
  const std::string& name = opt.get("mode");
  const Mode mode = name == "inplace"   ? Mode::inplace
                    : name == "batched" ? Mode::batched
                                        : Mode::inplace_batched;
  const course::Problem& p = opt.problem;
  if (mode == Mode::inplace_batched && p.rows != p.cols) {
    throw course::UsageError("--mode " + name + ": an in-place batch needs square matrices, got " +
                             std::to_string(p.rows) + " x " + std::to_string(p.cols) +
                             " (make --rows equal --cols, or use --mode batched)");
  }
  if (mode == Mode::inplace && p.batch != 1) {
    throw course::UsageError("--batch: --mode inplace transposes one matrix; use --mode "
                             "inplace-batched for " + std::to_string(p.batch) + " matrices");
  }
  if (mode == Mode::inplace && p.rows != p.cols) {
    const std::int64_t big = std::int64_t{1} << 31;
    if (std::min(p.rows, p.cols) > 1 && std::max(p.rows, p.cols) >= big) {
      throw course::UsageError("--rows x --cols: an in-place rectangle needs sides below 2^31, "
                               "got " + std::to_string(p.rows) + " x " + std::to_string(p.cols));
    }
    auto made = std::make_shared<RectPlan>();
    if (plan) *plan = made;
    return rect_variants(p.type, made);
  }
  return variants(mode, p.type);
}

/// The line main prints under the table after a rectangle ran in place: the route it took and
/// the device memory it used besides the matrix, also in elements of the longer side.
inline std::string scratch_note(const RectPlan& plan, const course::Problem& p) {
  if (plan.m == 0 || plan.route == Route::none) {
    return "note: in-place rectangle: a 1 x N or N x 1 matrix is its own transpose in memory; "
           "nothing was launched";
  }
  const char* route = plan.route == Route::blocks ? "c x c squares, then pieces (2 passes)"
                      : plan.route == Route::gcd1 ? "gcd 1: rows, columns, then rows (3 passes)"
                                                  : "the general passes (4 or 5)";
  const double bytes = static_cast<double>(plan.bytes());
  const double side = static_cast<double>(std::max(p.rows, p.cols) * course::elem_size(p.type));
  char line[240];
  std::snprintf(line, sizeof line,
                "note: in-place rectangle: %s, %u cycles, %.1f KB of scratch = %.2f x max(rows, "
                "cols) elements",
                route, plan.cycles, bytes / 1e3, bytes / side);
  return line;
}

}  // namespace step09
