// Step 07's lab - two controls that move one float per access, as steps 02-05 did:
//  * scalar_tile64: the lesson's 64 x 64 tile and order (down the columns), registers first, but
//    4-byte loads and stores through a padded tile. Does this step need its float4s at all?
//  * clone: modelled on what Nsight Compute shows of cublasSgeam's transpose: one 64 x 64 tile
//    per block of 32 x 8 threads on a 2D grid that walks down the columns, and shared memory for
//    a 32 x 65 float tile, so the 64 x 64 tile goes through it in two halves.
// Both check every access, so they need no separate edge path.
//
//   make step07-lab && ./step07-lab --only "one float"
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "transpose.cuh"

namespace step07lab {

// One float per access, THREADS threads per 64 x 64 tile, every load before any store.
template <int THREADS>
__global__ void __launch_bounds__(THREADS)
    scalar_tile64(const float* __restrict__ in, float* __restrict__ out, std::int64_t rows,
                  std::int64_t cols, unsigned tiles_y) {
  constexpr int kTile = step07::kTile, kPerThread = kTile * kTile / THREADS;
  __shared__ float tile[kTile][kTile + 1];  // padded: a column read hits 32 different banks
  const step07::Tile t = step07::tile_of(blockIdx.x, tiles_y);
  const std::int64_t r0 = static_cast<std::int64_t>(t.row) * kTile;
  const std::int64_t c0 = static_cast<std::int64_t>(t.col) * kTile;
  const unsigned tile_rows = rows - r0 < kTile ? static_cast<unsigned>(rows - r0) : kTile;
  const unsigned tile_cols = cols - c0 < kTile ? static_cast<unsigned>(cols - c0) : kTile;
  // Element k of thread t: tile row (t + k * THREADS) / 64, column t % 64. A warp reads 128
  // contiguous bytes of one input row, then writes 128 contiguous bytes of one output row.
  const unsigned x = threadIdx.x % kTile, y = threadIdx.x / kTile;
  constexpr unsigned kRowsPerPass = THREADS / kTile;
  float v[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const unsigned r = y + k * kRowsPerPass;
    if (r < tile_rows && x < tile_cols) v[k] = in[(r0 + r) * cols + c0 + x];
  }
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const unsigned r = y + k * kRowsPerPass;
    if (r < tile_rows && x < tile_cols) tile[r][x] = v[k];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const unsigned c = y + k * kRowsPerPass;  // output row c0 + c, column r0 + x
    if (x < tile_rows && c < tile_cols) out[(c0 + c) * rows + r0 + x] = tile[x][c];
  }
}

template <int THREADS>
cudaError_t transpose_scalar(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                             cudaStream_t stream = nullptr) {
  static_assert(THREADS % step07::kTile == 0 && THREADS <= 1024, "whole tile rows per pass");
  const step07::Grid g = step07::grid_for(in, out, rows, cols);  // its float4 flag unused here
  if (g.blocks == 0) return cudaErrorInvalidValue;
  scalar_tile64<THREADS><<<g.blocks, THREADS, 0, stream>>>(in, out, rows, cols, g.tiles_y);
  return cudaGetLastError();
}

// The clone: blockIdx.x numbers the tile rows, so consecutive blocks go down a column of tiles.
// ROW_HALVES: the first half is the tile's top 32 input rows (64 floats each), the second its
// bottom 32; otherwise the halves are its left and right 32 columns. Either way each thread moves
// 8 floats per half, loads first, through half[32][65].
template <bool ROW_HALVES>
__global__ void __launch_bounds__(256)
    clone_tile64(const float* __restrict__ in, float* __restrict__ out, std::int64_t rows,
                 std::int64_t cols) {
  __shared__ float half[32][65];
  const int tx = threadIdx.x, ty = threadIdx.y;  // 32 x 8
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * 64;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.y) * 64;
  for (int h = 0; h < 2; ++h) {
    float v[8];
    if constexpr (ROW_HALVES) {
      const std::int64_t rh = r0 + 32 * h;  // input rows rh .. rh + 31, columns c0 .. c0 + 63
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const std::int64_t r = rh + ty + 8 * (k / 2), c = c0 + tx + 32 * (k % 2);
        if (r < rows && c < cols) v[k] = in[r * cols + c];
      }
#pragma unroll
      for (int k = 0; k < 8; ++k) half[ty + 8 * (k / 2)][tx + 32 * (k % 2)] = v[k];
      __syncthreads();
      // Output rows c0 .. c0 + 63 receive 32 floats each, columns rh .. rh + 31.
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const std::int64_t orow = c0 + ty + 8 * k, ocol = rh + tx;
        if (orow < cols && ocol < rows) out[orow * rows + ocol] = half[tx][ty + 8 * k];
      }
    } else {
      const std::int64_t ch = c0 + 32 * h;  // input columns ch .. ch + 31, rows r0 .. r0 + 63
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const std::int64_t r = r0 + ty + 8 * k, c = ch + tx;
        if (r < rows && c < cols) v[k] = in[r * cols + c];
      }
#pragma unroll
      for (int k = 0; k < 8; ++k) half[tx][ty + 8 * k] = v[k];  // half[column][row]
      __syncthreads();
      // Output rows ch .. ch + 31 receive 64 floats each, columns r0 .. r0 + 63.
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const std::int64_t orow = ch + ty + 8 * (k / 2), ocol = r0 + tx + 32 * (k % 2);
        if (orow < cols && ocol < rows) {
          out[orow * rows + ocol] = half[ty + 8 * (k / 2)][tx + 32 * (k % 2)];
        }
      }
    }
    __syncthreads();  // the second half reuses the tile
  }
}

// A 2D grid: tile rows along x (up to 2^31 - 1), tile columns along y (up to 65535, i.e.
// cols <= 4,194,240); larger shapes are refused with cudaErrorInvalidValue.
template <bool ROW_HALVES>
cudaError_t transpose_clone(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                            cudaStream_t stream = nullptr) {
  if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
  const std::int64_t tiles_x = (cols + 63) / 64, tiles_y = (rows + 63) / 64;
  if (tiles_x > 65535 || tiles_y > 0x7FFFFFFF) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(tiles_y), static_cast<unsigned>(tiles_x));
  clone_tile64<ROW_HALVES><<<grid, dim3(32, 8), 0, stream>>>(in, out, rows, cols);
  return cudaGetLastError();
}

}  // namespace step07lab
