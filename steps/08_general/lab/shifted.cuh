// Step 08's lab - the shifted vector kernel (transpose_shift.cuh) with other settings than the
// lesson's: three blocks per SM instead of the two its ~100 registers per thread allow (the
// compiler then spills a few bytes), for int8 the 128 x 128 tile of the aligned kernel, whose
// 32 lead rows are a quarter of the tile instead of an eighth, and every tile tested (the kernel
// before its full tiles skipped the tests).
//
//   make step08-lab && ./step08-lab --type i8 --rows 4095 --cols 4097 --only shifted
#pragma once

#include <cstdint>

#include "transpose.cuh"

namespace step08 {

/// The lesson's launch_shift with launch bounds of MinBlocks blocks per SM, on the problems the
/// lesson's launcher gives it: the writes cut on sectors where output rows start off them.
template <int S, int TR, int TC, int MinBlocks, bool Untested = true>
cudaError_t launch_shift_bounded(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                                 cudaStream_t stream) {
  const auto o = reinterpret_cast<std::uintptr_t>(out);
  if (!valid_problem(S, rows, cols, reinterpret_cast<std::uintptr_t>(in), o)) {
    return cudaErrorInvalidValue;
  }
  return launch_shift<S, TR, TC, MinBlocks, Untested>(in, out, rows, cols,
                                                      !rows_start_on(32, S, rows, o), stream);
}

}  // namespace step08
