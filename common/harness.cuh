/// @file harness.cuh
/// @brief The shared main() of every step: parse, check the device, verify, time, report.
///
/// A step describes itself (StepInfo) and lists its kernels (Variant); run_step does the rest, so
/// that every step is verified and measured the same way:
///   1. parse the command line and check every argument: the options, the step's kernel list for
///      them (its own checks, e.g. step 09's --mode against the shape), --only, a writable --csv
///      (exit 2 on a bad argument, 0 after --help); none of this needs a GPU;
///   2. find a CUDA device that this build's kernels run on (exit 3, with the reason: no driver,
///      no GPU, a driver older than the toolkit, a build for another architecture) and refuse
///      sizes that do not fit in its free memory (exit 2);
///   3. fill the input with fresh bit patterns and transpose it on the CPU;
///   4. time the copy ceiling (and cuBLAS where the step asks) on the same buffers;
///   5. for each kernel: poison the output, run once, compare bit for bit (exit 1 on a mismatch),
///      then time it;
///   6. print the table, and append CSV rows with --csv.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "options.hpp"
#include "problem.hpp"

namespace course {

/// A step's host launcher, in the form the harness calls: device pointers, the problem and a
/// stream. It returns an error (cudaErrorInvalidValue) instead of launching on a shape it does
/// not support, and otherwise the launch's status (cudaGetLastError).
using LaunchFn =
    std::function<cudaError_t(const Problem& p, const void* in, void* out, cudaStream_t stream)>;

/// One kernel of a step, as a row of its table.
struct Variant {
  std::string id;         ///< "read-32x8": stable, lower case; data and markers select by it
  std::string name;       ///< "naive, coalesced read 32x8": what the table shows, free to change
  std::string block;      ///< "32x8"
  std::string tile;       ///< "32x32", or "-"
  LaunchFn launch;        ///< runs the kernel on a problem (see LaunchFn)
  bool in_place = false;  ///< launch(p, buf, buf): the output overwrites the input

  /// A step's kernel: {id, name, block, tile, launch}.
  Variant(std::string id_, std::string name_, std::string block_, std::string tile_, LaunchFn f)
      : id(std::move(id_)), name(std::move(name_)), block(std::move(block_)),
        tile(std::move(tile_)), launch(std::move(f)) {}
  /// A kernel with no id of its own (an exercise's answer): its id is made from its name
  /// (id_from_name).
  Variant(std::string name_, std::string block_, std::string tile_, LaunchFn f)
      : Variant(id_from_name(name_), name_, std::move(block_), std::move(tile_), std::move(f)) {}

  /// "ex01::transpose" -> "ex01-transpose": lower case, every other run of characters a '-'.
  static std::string id_from_name(const std::string& name);
};

/// Builds a step's kernels for the parsed options (most steps ignore the options). It runs before
/// any device is looked for, so it must not touch the GPU; it may throw UsageError for a
/// combination of options the step refuses.
using VariantList = std::function<std::vector<Variant>(const Options&)>;

/// Runs a step as described above and returns the process exit code.
int run_step(int argc, char** argv, const StepInfo& step, const VariantList& variants);

/// What a binary does once its options are parsed and checked; returns the exit code.
using StepBody = std::function<int(const Options&)>;

/// A binary's own checks of its parsed options, which must not touch the GPU: throws UsageError
/// for a combination it refuses.
using ArgumentCheck = std::function<void(const Options&)>;

/// The frame of run_step, for a binary that prints something other than the step table (step
/// 08's access patterns): steps 1 and 2 above, then @p body, its errors turned into exit codes
/// by exit_code_of (errors.hpp); no kernel list, so StepInfo::verifies_kernels is false. @p check,
/// when given, runs right after parsing, before any device is looked for, so that a bad argument
/// gets its exit code 2 on any machine.
int run_main(int argc, char** argv, const StepInfo& step, const StepBody& body,
             const ArgumentCheck& check = nullptr);

/// Runs @p v once on @p p: fills @p out_bytes bytes at @p out with the poison, copies the input
/// into the output first for an in-place kernel, launches, and waits. The output region may be
/// larger than the output (guard bands); the matrix starts at @p out + @p offset. Throws CudaError
/// when the kernel fails; returns the launcher's status when it refuses the shape.
cudaError_t run_poisoned(const Variant& v, const Problem& p, const void* in, void* out,
                         std::size_t out_bytes, std::size_t offset);

}  // namespace course
