// The kernels of step 09's lab, in place on one square float32 matrix, as the harness and the
// tests see them. The lesson's two kernels run first, as the controls every other row is
// compared with in the same process:
//   tile pairs 32x32, 32x8 threads       the lesson's kernels (../inplace.cuh)
//   tile pairs 64x64, 64x8 threads
//   tile pairs 32x32, 32x4 threads       the same kernel, the other bytes in flight per SM
//   tile pairs 64x64, 64x16 threads      (LAB.md: 32x32 against 64x64)
//   tile pairs 64x64, warps on sectors   misaligned rows (sector_pairs.cuh)
//   tile pairs 64x64, 2x2 pairs per block
//   tile pairs 64x64, through registers  loads in registers, not cp.async (register_pairs.cuh)
// A rectangle (--rows != --cols) gets the rectangle's variants instead, the lesson's first, in
// float32 or float64:
//   rectangle, two or three passes             the lesson's routes (../inplace_rect.cuh)
//   rectangle, 16 loads a round in the cycles  the same, fewer loads in flight (its knob k4)
//   rectangle, row tests in the reflection     the same, no mask of rows (its knob mask)
//   rectangle, 4-byte units in the cycles      the same, 128-byte pieces even where rows allow
//                                              16-byte units (its knob wide)
//   rectangle, 512-byte pieces of 4-byte units the same, 4 units a lane (its knob w4)
//   rectangle, cycles cut into runs            the same, more warps: a saved piece a run (its
//                                              hook on the cycles, cut_runs.cuh)
//   rectangle, runs of 512-byte pieces         both
//   rectangle, the same in strips of 64 columns
//                                              both, and the reflection 64 columns wide
//                                              (float32; its knob strip)
//   rectangle, general passes                  the baseline, any gcd (../rect_general.cuh)
//   rectangle, general, reflections in place   its reflections without shared memory
//                                              (rect_direct.cuh)
// No name is part of another, so that --only and a lesson's marker pick exactly one.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cut_runs.cuh"
#include "errors.hpp"
#include "harness.cuh"
#include "inplace.cuh"
#include "rect_direct.cuh"
#include "register_pairs.cuh"
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
      "onto sectors, 2x2 pairs per block, and loads through registers instead of cp.async\n"
      "(float32 only).\n"
      "A rectangle (--rows != --cols) runs the lesson's two or three passes, the same with\n"
      "other values of their knobs (16 loads a round, no mask of rows, 4-byte units in the\n"
      "cycles, 512-byte pieces of them, cycles cut into runs, reflection strips of 64\n"
      "columns), the general passes (four or five, any shape: the baseline) and the same\n"
      "general passes with their column reflections done without shared memory (float64 too).";
  step.types = {course::ElemType::f32, course::ElemType::f64};
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

/// The lesson's 64 x 64 pairs with their loads staged in registers (register_pairs.cuh).
inline course::Variant through_registers() {
  course::Variant v{"pairs-64x64-registers", "tile pairs 64x64, through registers", "64x8",
                    "64x64",
                    [](const course::Problem& p, const void*, void* out, cudaStream_t s) {
                      return transpose_inplace_registers<float, 64, 8>(static_cast<float*>(out),
                                                                       p.rows, p.cols, p.batch, s);
                    }};
  v.in_place = true;
  return v;
}

/// A rectangle in place with its own Plan: `run(matrix, problem, plan, stream)`, a generic
/// lambda, called with the matrix in the problem's type (float32 or float64).
template <typename Plan, typename Run>
course::Variant rect(course::ElemType type, const std::string& id, const std::string& what,
                     const std::string& block, const std::string& tile, Run run) {
  auto plan = std::make_shared<Plan>();
  const bool f64 = type == course::ElemType::f64;
  course::Variant v{id, what, block, tile,
                    [plan, f64, run](const course::Problem& p, const void*, void* out,
                                     cudaStream_t s) {
                      return f64 ? run(static_cast<double*>(out), p, *plan, s)
                                 : run(static_cast<float*>(out), p, *plan, s);
                    }};
  v.in_place = true;
  return v;
}

/// The lesson's rectangle with other values of its knobs (../inplace_rect.cuh's Knobs).
struct Loads16 : step09::Knobs { static constexpr int k4 = 16; };
struct RowTests : step09::Knobs { static constexpr bool mask = false; };
struct Narrow : step09::Knobs { static constexpr bool wide = false; };
struct Pieces512 : Narrow { static constexpr int k4 = 8, w4 = 4; };
struct Cut512 : CutRuns { static constexpr int k4 = 8, w4 = 4; };
struct Strip64 : Cut512 { static constexpr int strip = 64; };

template <typename K>
course::Variant rect_knobs(course::ElemType type, const std::string& id, const std::string& what) {
  return rect<step09::RectPlan>(
      type, id, what, "-", "-",
      [](auto* m, const course::Problem& p, step09::RectPlan& plan, cudaStream_t s) {
        using T = std::remove_pointer_t<decltype(m)>;
        return step09::transpose_inplace_rect<T, K>(m, p.rows, p.cols, plan, s);
      });
}

}  // namespace detail

/// Every kernel of the lab, the controls first.
inline std::vector<course::Variant> variants() {
  using detail::pairs;
  using detail::through_registers;
  return {pairs<32, 8, false, 1, true>("", "32x8 threads"),
          pairs<64, 8, false, 1, true>("", "64x8 threads"),
          pairs<32, 4, false, 1, true>("-32x4", "32x4 threads"),
          pairs<64, 16, false, 1, true>("-64x16", "64x16 threads"),
          pairs<64, 8, true, 1>("-sectors", "warps on sectors"),
          pairs<64, 8, false, 2>("-2x2", "2x2 pairs per block"),
          through_registers()};
}

/// The rectangle's variants, the lesson's routes first (control); each has its own plan.
/// @p lesson, when given, receives the control's plan (main prints its route and scratch).
inline std::vector<course::Variant> rect_variants(
    course::ElemType type = course::ElemType::f32,
    std::shared_ptr<step09::RectPlan>* lesson = nullptr) {
  auto lesson_plan = std::make_shared<step09::RectPlan>();
  if (lesson) *lesson = lesson_plan;
  course::Variant control = step09::rect_variants(type, lesson_plan)[0];
  control.name = "rectangle, two or three passes";
  auto general = detail::rect<step09::GeneralPlan>(
      type, "rect-general", "rectangle, general passes", "32x8", "32x32",
      [](auto* m, const course::Problem& p, step09::GeneralPlan& plan, cudaStream_t s) {
        return step09::transpose_rect_general(m, p.rows, p.cols, plan, s);
      });
  auto direct = detail::rect<step09::GeneralPlan>(
      type, "rect-direct", "rectangle, general, reflections in place", "32x8", "-",
      [](auto* m, const course::Problem& p, step09::GeneralPlan& plan, cudaStream_t s) {
        return transpose_rect_direct(m, p.rows, p.cols, plan, s);
      });
  return {control,
          detail::rect_knobs<detail::Loads16>(type, "rect-loads16",
                                              "rectangle, 16 loads a round in the cycles"),
          detail::rect_knobs<detail::RowTests>(type, "rect-row-tests",
                                               "rectangle, row tests in the reflection"),
          detail::rect_knobs<detail::Narrow>(type, "rect-narrow",
                                             "rectangle, 4-byte units in the cycles"),
          detail::rect_knobs<detail::Pieces512>(type, "rect-512b",
                                                "rectangle, 512-byte pieces of 4-byte units"),
          detail::rect_knobs<CutRuns>(type, "rect-cut", "rectangle, cycles cut into runs"),
          detail::rect_knobs<detail::Cut512>(type, "rect-cut-512b",
                                             "rectangle, runs of 512-byte pieces"),
          detail::rect_knobs<detail::Strip64>(type, "rect-strip64",
                                              "rectangle, the same in strips of 64 columns"),
          general, direct};
}

/// The kernels for a parsed command line: the tile pairs for a square, the rectangle's passes
/// otherwise (sides below 2^31, refused here with the reason before anything touches the device).
inline std::vector<course::Variant> from_options(
    const course::Options& opt, std::shared_ptr<step09::RectPlan>* lesson = nullptr) {
  const course::Problem& p = opt.problem;
  if (p.rows == p.cols && p.type != course::ElemType::f32) {
    throw course::UsageError("--type: the lab's tile pairs are float32 only; a rectangle "
                             "(--rows != --cols) runs in float64 too");
  }
  if (p.rows == p.cols) return variants();
  if (std::min(p.rows, p.cols) > 1 && std::max(p.rows, p.cols) >= (std::int64_t{1} << 31)) {
    throw course::UsageError("--rows x --cols: an in-place rectangle needs sides below 2^31, got " +
                             std::to_string(p.rows) + " x " + std::to_string(p.cols));
  }
  return rect_variants(p.type, lesson);
}

}  // namespace step09_lab
