/// @file cpu_checks.hpp
/// @brief The grader's CPU checks, by name: the course's checks of the index functions
/// (exercises/testing/index_checks.hpp), the launchers' refusals and the swizzle's bank model,
/// combined as the course's CPU tests combine them.
///
/// The worker and the judge run the very same code on different Functions: in the worker each
/// function calls the submission and records its answer; in the judge each function replays a
/// recorded answer. Only the judge's verdict counts.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bank_model.hpp"
#include "index_checks.hpp"
#include "protocol.hpp"

namespace grader {

namespace checks = exercise::checks;
using checks::Verdict;

/// The functions one exercise's checks call. Launch statuses are the launchers' return codes
/// when called with null pointers (a shape they must refuse before any launch).
struct Functions {
  checks::BlocksFor blocks_for;                                     // exercises 1 and 2
  checks::TileIndex input_index, output_index;                      // exercises 1 and 2
  std::function<std::int64_t(std::int64_t, std::int64_t)> launch;   // transpose(null, null, r, c)
  std::function<std::int64_t(int, int)> swizzle;                    // exercise 2, on the host
  checks::BlocksForSquare blocks_for_square;                        // exercise 3
  checks::PairOfBlock pair_of_block;                                // exercise 3
  checks::ElementIndex element_index;                               // exercise 3
  std::function<std::int64_t(std::int64_t)> launch_square;         // transpose_inplace(null, n)
};

/// A CUDA runtime code by name, for the judge's messages (it does not include CUDA).
inline std::string cuda_code_name(std::int64_t code) {
  switch (code) {
    case 0: return "cudaSuccess";
    case 1: return "cudaErrorInvalidValue";
    case 2: return "cudaErrorMemoryAllocation";
    case 3: return "cudaErrorInitializationError";
    case 9: return "cudaErrorInvalidConfiguration";
    case 31: return "cudaErrorNotYetImplemented";
    case 35: return "cudaErrorInsufficientDriver";
    case 98: return "cudaErrorInvalidDeviceFunction";
    case 100: return "cudaErrorNoDevice";
    case 209: return "cudaErrorNoKernelImageForDevice";
    case 700: return "cudaErrorIllegalAddress";
    case 719: return "cudaErrorLaunchFailure";
    default: return "CUDA error " + std::to_string(code);
  }
}

/// A launcher must refuse a shape with cudaErrorInvalidValue, before any launch.
inline Verdict refused(std::int64_t status, const std::string& call, const char* launcher) {
  if (status == kCudaErrorInvalidValue) return Verdict::pass();
  if (status == kCudaErrorNotYetImplemented) return Verdict::not_written(launcher);
  return Verdict::fail(call + " returned " + cuda_code_name(status) +
                       "; expected cudaErrorInvalidValue, returned before any launch");
}

inline std::string shape_call(const std::string& fn, std::int64_t rows, std::int64_t cols) {
  return fn + "(rows = " + std::to_string(rows) + ", cols = " + std::to_string(cols) + ")";
}

/// The launcher of exercise @p exercise, as the learner calls it.
inline std::string launcher_of(int exercise) {
  return exercise == 1 ? "ex01::transpose"
         : exercise == 2 ? "ex02::transpose"
                         : "ex03::transpose_inplace";
}

// ---- exercise 2's swizzle: the bank model on the 32 x 32 values ----

inline Verdict swizzle_check(const std::string& name, const Functions& f) {
  constexpr int n = checks::kTile;
  std::vector<int> s(n * n);
  bool written = false;
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      const std::int64_t v = f.swizzle(r, c);
      s[r * n + c] = v < -1000000 || v > 1000000 ? -1000000 : static_cast<int>(v);
      written = written || v != -1;  // kSwizzleNotImplemented
    }
  }
  if (!written) return Verdict::not_written("swizzle");
  // Every row keeps its 32 elements, once each, inside the row.
  for (int r = 0; r < n; ++r) {
    std::vector<int> owner(n, -1);
    for (int c = 0; c < n; ++c) {
      const int v = s[r * n + c];
      if (v < 0 || v >= n) {
        return Verdict::fail("swizzle(" + std::to_string(r) + ", " + std::to_string(c) +
                             ") = " + std::to_string(v) + " is outside the row, [0, 32)");
      }
      if (owner[v] >= 0) {
        return Verdict::fail("swizzle(" + std::to_string(r) + ", " + std::to_string(owner[v]) +
                             ") and swizzle(" + std::to_string(r) + ", " + std::to_string(c) +
                             ") are both " + std::to_string(v) +
                             ": two elements in one place, one of them lost");
      }
      owner[v] = c;
    }
  }
  if (name == "swizzle_bijection") return Verdict::pass();
  const course::TileLayout layout =
      course::layout_from_swizzle(n, [&s](int r, int c) { return s[r * n + c]; });
  const bool by_row = name == "swizzle_rows";
  const int worst =
      by_row ? course::worst_row_degree(layout, n) : course::worst_column_degree(layout, n);
  if (worst == 1) return Verdict::pass();
  int i = 0;
  while (i + 1 < n && (by_row ? course::row_read_degree(layout, n, i)
                              : course::column_read_degree(layout, n, i)) != worst) {
    ++i;
  }
  return Verdict::fail("a warp accessing tile " + std::string(by_row ? "row " : "column ") +
                       std::to_string(i) + " asks one bank for " + std::to_string(worst) +
                       " different words (" + std::to_string(worst) + "-way bank conflict)\n" +
                       course::bank_map(layout, n, "your swizzle"));
}

// ---- the checks by exercise ----

/// Exercises 1 and 2 (the out-of-place tiled transpose). @p empty: the empty shapes the course's
/// test of that exercise tries.
inline Verdict tile_check(const std::string& name, const Functions& f,
                          const std::string& launcher, const std::vector<course::Shape>& empty,
                          bool* known) {
  *known = true;
  if (name == "refuses_empty" || name == "refuses_past_grid_limit") {  // blocks_for, the launcher
    const bool too_big = name == "refuses_past_grid_limit";
    const Verdict v = too_big ? checks::refuses_past_grid_limit(f.blocks_for)
                              : checks::accepts_a_real_shape(f.blocks_for);
    if (!v.ok) return v;
    for (const course::Shape& s : too_big ? checks::limit_shapes() : empty) {
      const Verdict r = refused(f.launch(s.rows, s.cols), shape_call(launcher, s.rows, s.cols),
                                "transpose");
      if (!r.ok) return r;
    }
    return Verdict::pass();
  }
  if (name == "one_block_per_input_tile") return checks::one_block_per_input_tile(f.blocks_for);
  if (name == "reads_every_input_element_once") {
    return checks::reads_every_input_element_once(f.input_index);
  }
  if (name == "writes_every_output_element_once") {
    return checks::writes_every_output_element_once(f.output_index);
  }
  if (name == "writes_to_transposed_place") {
    return checks::writes_to_transposed_place(f.input_index, f.output_index);
  }
  if (name == "warps_consecutive") {
    return checks::warps_read_and_write_consecutive(f.input_index, f.output_index);
  }
  if (name == "transposes_every_tile_once") {  // all of the above but the refusals, in order
    for (const char* part : {"one_block_per_input_tile", "reads_every_input_element_once",
                             "writes_every_output_element_once", "writes_to_transposed_place",
                             "warps_consecutive"}) {
      const Verdict v = tile_check(part, f, launcher, empty, known);
      if (!v.ok) return v;
    }
    return Verdict::pass();
  }
  if (name == "swizzle_bijection" || name == "swizzle_rows" || name == "swizzle_columns") {
    return swizzle_check(name, f);
  }
  *known = false;
  return Verdict::fail("unknown check " + name);
}

/// Exercise 3 (in place, by pairs of tiles).
inline Verdict square_check(const std::string& name, const Functions& f, bool* known) {
  *known = true;
  if (name == "refuses_empty" || name == "refuses_past_grid_limit") {  // as tile_check's
    const bool too_big = name == "refuses_past_grid_limit";
    const Verdict v = too_big ? checks::square_refuses_past_grid_limit(f.blocks_for_square)
                              : checks::square_accepts_a_real_size(f.blocks_for_square);
    if (!v.ok) return v;
    static const std::vector<std::int64_t> empty{0, -3};
    for (std::int64_t n : too_big ? checks::limit_square_sizes() : empty) {
      const Verdict r = refused(f.launch_square(n), launcher_of(3) + "(n = " + std::to_string(n) +
                                ")", "transpose_inplace");
      if (!r.ok) return r;
    }
    return Verdict::pass();
  }
  if (name == "every_tile_in_one_pair") {
    return checks::every_tile_in_one_pair(f.blocks_for_square, f.pair_of_block);
  }
  if (name == "every_element_in_one_place") {
    return checks::every_element_in_one_place(f.element_index);
  }
  if (name == "mirror_places_transposed") return checks::mirror_places_transposed(f.element_index);
  if (name == "warps_consecutive") return checks::square_warps_consecutive(f.element_index);
  *known = false;
  return Verdict::fail("unknown check " + name);
}

/// Runs check @p name of exercise @p exercise (1, 2 or 3) on @p f.
inline Verdict run_check(int exercise, const std::string& name, const Functions& f, bool* known) {
  switch (exercise) {
    case 1: return tile_check(name, f, launcher_of(1), {{0, 5}, {5, 0}, {-1, 7}}, known);
    case 2: return tile_check(name, f, launcher_of(2), {{0, 5}, {5, 0}}, known);
    case 3: return square_check(name, f, known);
    default: *known = false; return Verdict::fail("unknown exercise");
  }
}

/// Where the learner writes each function, for "not implemented yet" messages.
inline std::string file_of(int exercise, const std::string& function) {
  switch (exercise) {
    case 1: return "exercises/01_rectangular/rectangular.cu";
    case 2:
      return function == "swizzle" ? "exercises/02_swizzle/swizzle.cuh"
                                   : "exercises/02_swizzle/swizzled.cu";
    default: return "exercises/03_inplace/inplace.cu";
  }
}

}  // namespace grader
