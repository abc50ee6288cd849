// Step 09 lab - the lesson's tile pairs with both tiles staged through registers instead of
// cp.async: every load of a thread into registers, then every store to shared memory, then the
// barrier. What part 1 says about it is read in the SASS (LAB.md, section 5): held to 32
// registers by the same launch bounds, the compiler interleaves the loads with the shared stores
// and spills, so fewer loads are in flight than the source asks for. Timing it against the
// lesson's kernel tells what that costs. The kernel is the lesson's transpose_inplace_pairs with
// REGISTERS = true; this file holds the hook it then calls for its step 1.
//
//   make step09-lab && ./step09-lab --rows 16384 --cols 16384 --only "through registers"
//   cuobjdump -sass build/bin/step09-lab | grep -A400 "Function : .*transpose_inplace_pairs.*Lb1E"
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "inplace.cuh"

namespace step09 {

/// Step 1 of transpose_inplace_pairs<T, TILE, ROWS, true>: both tiles into shared memory through
/// registers, every load of this thread before any store.
template <typename T, int TILE, int ROWS, typename Tile>
__device__ void stage_through_registers(const T* a, std::int64_t n, std::int64_t r0,
                                        std::int64_t c0, int h, int w, bool diagonal,
                                        Tile& tile_ij, Tile& tile_ji) {
  constexpr int kPerThread = TILE / ROWS;
  const int tx = threadIdx.x, ty = threadIdx.y;
  T v_ij[kPerThread], v_ji[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int r = ty + k * ROWS;
    if (r < h && tx < w) v_ij[k] = a[(r0 + r) * n + c0 + tx];
    if (!diagonal && r < w && tx < h) v_ji[k] = a[(c0 + r) * n + r0 + tx];
  }
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int r = ty + k * ROWS;
    if (r < h && tx < w) tile_ij[r][tx] = v_ij[k];
    if (!diagonal && r < w && tx < h) tile_ji[r][tx] = v_ji[k];
  }
}

}  // namespace step09

namespace step09_lab {

/// The lesson's launcher, refusals included, on the kernel that stages through registers.
template <typename T, int TILE, int ROWS>
cudaError_t transpose_inplace_registers(T* m, std::int64_t rows, std::int64_t cols,
                                        std::int64_t batch, cudaStream_t stream = nullptr) {
  return step09::transpose_inplace<T, TILE, ROWS, true>(m, rows, cols, batch, stream);
}

}  // namespace step09_lab
