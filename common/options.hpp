/// @file options.hpp
/// @brief The command-line contract shared by every step binary (host-only).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "problem.hpp"

namespace course {

/// An option that only some steps have, e.g. step 09's `--mode inplace|batched|...`.
struct ExtraOption {
  std::string name;                  ///< without dashes: "mode"
  std::vector<std::string> choices;  ///< the values allowed; the first is the default
  std::string help;                  ///< one line for --help
};

/// What a step tells the shared parser and harness about itself.
struct StepInfo {
  std::string binary;       ///< "step05"
  std::string title;        ///< "coarsened tile: 32x32 tile, 32x8 threads"
  std::string description;  ///< a few lines for --help: the idea of the lesson
  std::vector<ElemType> types = {ElemType::f32};  ///< supported element types; first is default
  bool supports_batch = false;   ///< false: --batch is refused by name
  bool cublas_reference = false; ///< true: time cuBLAS geam and cuBLASLt (peers.cuh) too
  std::int64_t default_rows = 8192;  ///< --rows when not given
  std::int64_t default_cols = 8192;  ///< --cols when not given
  std::vector<ExtraOption> extras;  ///< step-specific options with a fixed set of values
  /// false for a binary that prints a table of its own (run_main, e.g. step08_patterns): it has
  /// no list of kernels to choose from and verifies nothing, so --only, --seed and --no-verify
  /// are refused by name and left out of --help. run_main sets it.
  bool verifies_kernels = true;
};

/// Parsed command line.
struct Options {
  Problem problem;         ///< --rows, --cols, --batch and --type
  int reps = 50;           ///< timed repetitions per kernel; the median and min are reported
  int warmup = 5;          ///< untimed runs before timing
  std::string csv;         ///< append CSV rows here when not empty
  bool verify = true;      ///< --no-verify skips the CPU reference (timing only)
  bool help = false;       ///< --help was given: print usage() and exit 0
  bool list = false;       ///< --list was given: print the types and kernels and exit 0
  std::string only;        ///< run only the kernels whose name contains this text
  std::uint64_t seed = 0;  ///< input pattern seed; fresh unless --seed was given
  bool seed_given = false; ///< --seed was given: `seed` holds it
  std::map<std::string, std::string> extra;  ///< values of the step's ExtraOptions

  /// The value of a step-specific option (its default when not given).
  const std::string& get(const std::string& name) const { return extra.at(name); }
};

/// Parses @p args (without the program name) for @p step. Throws UsageError with one line that
/// names the option and the reason for: an unknown option, a missing or malformed value, a size
/// that is zero, negative, non-numeric or too large, a product of sizes that overflows, an
/// element type or option the step does not support.
Options parse_options(const StepInfo& step, const std::vector<std::string>& args);

/// The --help text: every option, the step's own ones and its types, and the exit codes.
std::string usage(const StepInfo& step);

/// The first lines of --list, what bench.py and the plots' checks read, one fact a line,
/// tab-separated: every element type of the course, its bytes, and whether @p step takes it
/// ("default", "yes" or "no").
std::string list_types(const StepInfo& step);

}  // namespace course
