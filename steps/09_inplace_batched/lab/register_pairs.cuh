// Step 09 lab - the lesson's tile pairs with both tiles staged through registers instead of
// cp.async: every load of a thread into registers, then every store to shared memory, then the
// barrier. What part 1 says about it is read in the SASS (LAB.md, section 5): held to 32
// registers by the same launch bounds, the compiler interleaves the loads with the shared stores
// and spills, so fewer loads are in flight than the source asks for. Timing it against the
// lesson's kernel tells what that costs.
//
//   make step09-lab && ./step09-lab --rows 16384 --cols 16384 --only "through registers"
//   cuobjdump -sass build/bin/step09-lab | grep -A400 "Function : .*pairs_through_registers"
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "inplace.cuh"  // the lesson's TilePair and upper_pair

namespace step09_lab {

/// The lesson's transpose_inplace_pairs, loads through registers. Threads: TILE x ROWS.
template <typename T, int TILE, int ROWS>
__global__ void __launch_bounds__(TILE * ROWS, 2048 / (TILE * ROWS))
    pairs_through_registers(T* m, std::int64_t n, unsigned pairs_per_matrix) {
  static_assert(TILE % 32 == 0 && TILE % ROWS == 0, "whole warps across a tile row");
  constexpr int kPerThread = TILE / ROWS;
  __shared__ T tile_ij[TILE][TILE + 1];
  __shared__ T tile_ji[TILE][TILE + 1];
  const unsigned matrix = blockIdx.x / pairs_per_matrix;
  const step09::TilePair pair = step09::upper_pair(blockIdx.x - matrix * pairs_per_matrix);
  T* const a = m + static_cast<std::int64_t>(matrix) * n * n;
  const std::int64_t r0 = static_cast<std::int64_t>(pair.i) * TILE;
  const std::int64_t c0 = static_cast<std::int64_t>(pair.j) * TILE;
  const int h = static_cast<int>(n - r0 < TILE ? n - r0 : TILE);
  const int w = static_cast<int>(n - c0 < TILE ? n - c0 : TILE);
  const bool diagonal = pair.i == pair.j;
  const int tx = threadIdx.x, ty = threadIdx.y;

  T v_ij[kPerThread], v_ji[kPerThread];  // every load of this thread, before any store
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
  __syncthreads();  // every element this block overwrites is in shared memory
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int r = ty + k * ROWS;
    if (r < w && tx < h) a[(c0 + r) * n + r0 + tx] = tile_ij[tx][r];
    if (!diagonal && r < h && tx < w) a[(r0 + r) * n + c0 + tx] = tile_ji[tx][r];
  }
}

/// The launcher, with the lesson's refusals: square matrices only, at most 2^31 - 1 blocks.
template <typename T, int TILE, int ROWS>
cudaError_t transpose_inplace_registers(T* m, std::int64_t rows, std::int64_t cols,
                                        std::int64_t batch, cudaStream_t stream = nullptr) {
  if (rows != cols || rows < 1 || batch < 1) return cudaErrorInvalidValue;
  const std::int64_t tiles = (rows + TILE - 1) / TILE;
  if (tiles > 65535) return cudaErrorInvalidValue;
  const std::int64_t pairs = tiles * (tiles + 1) / 2;
  if (pairs > 0x7FFFFFFF / batch) return cudaErrorInvalidValue;
  pairs_through_registers<T, TILE, ROWS>
      <<<static_cast<unsigned>(pairs * batch), dim3(TILE, ROWS), 0, stream>>>(
          m, rows, static_cast<unsigned>(pairs));
  return cudaGetLastError();
}

}  // namespace step09_lab
