// Step 09, part 2 - many matrices in one launch (BATCHED.md), one tile per block. What changed
// since step 08: B matrices of rows x cols, stored back to back, are transposed by one launch.
// Every tile of every matrix gets a block, numbered along one axis:
//   blockIdx.x = (matrix * tile_rows + tile_row) * tile_cols + tile_col,
// so the batch is not bound by gridDim.y or gridDim.z (65535): only by 2^31 - 1 blocks in all.
// For f32 the tile is 64 x 64 (rows of 256 bytes); a 64 x 64 matrix is then exactly one block.
//
//   make step09 && ./step09 --mode batched --rows 128 --cols 128 --batch 4096
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace step09 {

/// Transposes one TILE x TILE tile of one matrix of the batch per block. Threads: TILE x ROWS;
/// launch bounds for a full SM of threads (2048), i.e. at most 32 registers per thread, which
/// cp.async makes possible without serialising the loads.
template <typename T, int TILE, int ROWS>
__global__ void __launch_bounds__(TILE * ROWS, 2048 / (TILE * ROWS))
    transpose_batched_tiles(const T* __restrict__ in, T* __restrict__ out, std::int64_t rows,
                            std::int64_t cols, unsigned tile_cols, unsigned tiles_per_matrix) {
  static_assert(TILE % 32 == 0 && TILE % ROWS == 0, "whole warps across a tile row");
  constexpr int kPerThread = TILE / ROWS;
  __shared__ T tile[TILE][TILE + 1];  // +1: a column read hits 32 different banks

  // Unfold the block number once per block; 32-bit divisions, since blockIdx.x < 2^31.
  const unsigned matrix = blockIdx.x / tiles_per_matrix;
  const unsigned t = blockIdx.x - matrix * tiles_per_matrix;
  const unsigned tile_row = t / tile_cols;
  const unsigned tile_col = t - tile_row * tile_cols;
  const std::int64_t offset = static_cast<std::int64_t>(matrix) * rows * cols;
  const T* const src = in + offset;  // input: rows x cols
  T* const dst = out + offset;       // output: cols x rows, same place in the output buffer
  const std::int64_t r0 = static_cast<std::int64_t>(tile_row) * TILE;
  const std::int64_t c0 = static_cast<std::int64_t>(tile_col) * TILE;
  const int h = static_cast<int>(rows - r0 < TILE ? rows - r0 : TILE);
  const int w = static_cast<int>(cols - c0 < TILE ? cols - c0 : TILE);
  const int tx = threadIdx.x, ty = threadIdx.y;

  // Global to shared with cp.async, as in inplace.cuh: all copies in flight, no registers held.
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int r = ty + k * ROWS;
    if (r < h && tx < w) {
      __pipeline_memcpy_async(&tile[r][tx], &src[(r0 + r) * cols + c0 + tx], sizeof(T));
    }
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int r = ty + k * ROWS;  // row of the output tile = column of the input tile
    if (r < w && tx < h) dst[(c0 + r) * rows + r0 + tx] = tile[tx][r];
  }
}

/// Transposes @p batch matrices of @p rows x @p cols stored back to back. Returns
/// cudaErrorInvalidValue without launching when the tiles of the whole batch need more than
/// 2^31 - 1 blocks (whole-matrix groups, groups.cuh, take such batches of tiny matrices).
template <typename T, int TILE, int ROWS>
cudaError_t transpose_batched(const T* in, T* out, std::int64_t rows, std::int64_t cols,
                              std::int64_t batch, cudaStream_t stream = nullptr) {
  if (rows < 1 || cols < 1 || batch < 1) return cudaErrorInvalidValue;
  const std::int64_t tile_rows = (rows + TILE - 1) / TILE, tile_cols = (cols + TILE - 1) / TILE;
  if (tile_cols > 0x7FFFFFFF / tile_rows) return cudaErrorInvalidValue;
  const std::int64_t tiles = tile_rows * tile_cols;
  if (tiles > 0x7FFFFFFF / batch) return cudaErrorInvalidValue;
  transpose_batched_tiles<T, TILE, ROWS>
      <<<static_cast<unsigned>(tiles * batch), dim3(TILE, ROWS), 0, stream>>>(
          in, out, rows, cols, static_cast<unsigned>(tile_cols), static_cast<unsigned>(tiles));
  return cudaGetLastError();
}

}  // namespace step09
