// The kernels of step 09's lab, in place on one square float32 matrix, as the harness and the
// tests see them. The lesson's two kernels run first, as the controls every other row is
// compared with in the same process:
//   tile pairs 32x32, 32x8 threads       the lesson's kernels (../inplace.cuh)
//   tile pairs 64x64, 64x8 threads
//   tile pairs 32x32, 32x4 threads       the same kernel, the other bytes in flight per SM
//   tile pairs 64x64, 64x16 threads      (LAB.md: 32x32 against 64x64)
//   tile pairs 64x64, warps on sectors   misaligned rows (sector_pairs.cuh)
//   tile pairs 64x64, 2x2 pairs per block
// A rectangle (--rows != --cols) gets the rectangle's two variants instead, the lesson's first:
//   rectangle, reflections in shared memory   the lesson's passes (../inplace_rect.cuh)
//   rectangle, reflections in place            pair swaps without shared memory (rect_direct.cuh)
// No name is part of another, so that --only and a lesson's marker pick exactly one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "errors.hpp"
#include "harness.cuh"
#include "inplace.cuh"
#include "rect_direct.cuh"
#include "sector_pairs.cuh"
#include "variants.cuh"

namespace step09_lab {

/// The lab's description for the shared parser: float32, one square matrix, no --batch.
inline course::StepInfo info() {
  course::StepInfo step;
  step.binary = "step09-lab";
  step.title = "step 09's lab: in-place tile pairs tried and not taught";
  step.description =
      "The lesson's in-place tile pairs (32x32 and 64x64) beside the variants tried on them:\n"
      "other thread counts per tile (bytes in flight against row-piece width), warps shifted\n"
      "onto sectors, and 2x2 pairs per block. A rectangle (--rows != --cols) runs the lesson's\n"
      "in-place passes beside the same passes with their column reflections done without\n"
      "shared memory.";
  step.types = {course::ElemType::f32};
  step.cublas_reference = true;
  return step;
}

namespace detail {

inline std::string shape(int a, int b) { return std::to_string(a) + "x" + std::to_string(b); }

/// One variant; Lesson: the lesson's own kernel, otherwise sector_pairs.cuh's.
template <int TILE, int ROWS, bool Sectors = false, int G = 1, bool Lesson = false>
course::Variant pairs(const std::string& id, const std::string& what) {
  course::Variant v{"pairs-" + shape(TILE, TILE) + id,
                    "tile pairs " + shape(TILE, TILE) + ", " + what, shape(TILE, ROWS),
                    shape(TILE, TILE),
                    [](const course::Problem& p, const void*, void* out, cudaStream_t s) {
                      float* const m = static_cast<float*>(out);
                      if constexpr (Lesson) {
                        return step09::transpose_inplace<float, TILE, ROWS>(m, p.rows, p.cols,
                                                                            p.batch, s);
                      } else {
                        return transpose_inplace_lab<float, TILE, ROWS, Sectors, G>(
                            m, p.rows, p.cols, p.batch, s);
                      }
                    }};
  v.in_place = true;
  return v;
}

}  // namespace detail

/// Every kernel of the lab, the controls first.
inline std::vector<course::Variant> variants() {
  using detail::pairs;
  return {pairs<32, 8, false, 1, true>("", "32x8 threads"),
          pairs<64, 8, false, 1, true>("", "64x8 threads"),
          pairs<32, 4, false, 1, true>("-32x4", "32x4 threads"),
          pairs<64, 16, false, 1, true>("-64x16", "64x16 threads"),
          pairs<64, 8, true, 1>("-sectors", "warps on sectors"),
          pairs<64, 8, false, 2>("-2x2", "2x2 pairs per block")};
}

/// The rectangle's variants, the lesson's passes first (control); each has its own plan.
inline std::vector<course::Variant> rect_variants() {
  auto lesson = step09::rect_variants(course::ElemType::f32, std::make_shared<step09::RectPlan>());
  lesson[0].name = "rectangle, reflections in shared memory";
  auto plan = std::make_shared<step09::RectPlan>();
  course::Variant direct{"rect-direct", "rectangle, reflections in place", "32x8", "-",
                         [plan](const course::Problem& p, const void*, void* out, cudaStream_t s) {
                           return transpose_rect_direct<float>(static_cast<float*>(out), p.rows,
                                                               p.cols, *plan, s);
                         }};
  direct.in_place = true;
  return {lesson[0], direct};
}

/// The kernels for a parsed command line: the tile pairs for a square, the rectangle's passes
/// otherwise (sides below 2^31, refused here with the reason before anything touches the device).
inline std::vector<course::Variant> from_options(const course::Options& opt) {
  const course::Problem& p = opt.problem;
  if (p.rows == p.cols) return variants();
  if (std::min(p.rows, p.cols) > 1 && std::max(p.rows, p.cols) >= (std::int64_t{1} << 31)) {
    throw course::UsageError("--rows x --cols: an in-place rectangle needs sides below 2^31, got " +
                             std::to_string(p.rows) + " x " + std::to_string(p.cols));
  }
  return rect_variants();
}

}  // namespace step09_lab
