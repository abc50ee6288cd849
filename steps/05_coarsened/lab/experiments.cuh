// Step 05's lab - two things tried on the coarsened tile and not taught in the lesson:
//   - the "diagonal" block order of the early CUDA SDK transpose article, against partition
//     camping: consecutive blocks walk down the diagonals of the tile grid;
//   - the loads written as load-store pairs (one loop, `tile[...] = src[...]`), the first form of
//     the lesson's kernel, against the lesson's "every load into registers first".
// Everything else is the lesson's kernel (transpose.cuh, whose swizzle and tile_blocks it uses).
//
//   make step05-lab && ./step05-lab
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "transpose.cuh"

namespace step05_lab {

using step05::kTile;
using step05::swizzle;

// Which tile a block transposes; blocks are numbered in one dimension (bid = blockIdx.x) and the
// hardware starts them roughly in that order.
//   rows:     along each row of tiles, as the lesson does (tile row = bid / tiles_x).
//   diagonal: down the diagonals of the tile grid, so blocks running at the same time read from
//             different column bands of the input and write to different row bands of the output.
enum class BlockOrder { rows, diagonal };

// How a thread's loads reach the tile: all into registers first (the lesson), or each load stored
// to shared memory right after it is issued.
enum class Loads { first, pairs };

struct TileCoord {
  unsigned row, col;  // in tiles
};

// The diagonal order for ANY tiles_x x tiles_y grid: tile row = bid % tiles_y and tile column =
// (bid / tiles_y + tile row) % tiles_x. A bijection: from (row, col), q = (col - row) mod tiles_x
// and bid = q * tiles_y + row is the only block that maps there. (The short form of old articles,
// row = blockIdx.x and col = (blockIdx.x + blockIdx.y) % gridDim.x, is valid for square grids
// only.)
__host__ __device__ inline TileCoord tile_of_block(unsigned bid, unsigned tiles_x,
                                                   unsigned tiles_y, BlockOrder order) {
  if (order == BlockOrder::rows) return {bid / tiles_x, bid % tiles_x};
  const unsigned row = bid % tiles_y;
  return {row, (bid / tiles_y + row) % tiles_x};  // < tiles_x + tiles_y <= 2^31: no overflow
}

template <typename T, int BLOCK_ROWS, BlockOrder ORDER, Loads LOADS>
__global__ void __launch_bounds__(kTile * BLOCK_ROWS)
transpose_lab(const T* __restrict__ in, T* __restrict__ out, std::int64_t rows,
              std::int64_t cols, unsigned tiles_x, unsigned tiles_y) {
  constexpr int kPasses = kTile / BLOCK_ROWS;
  __shared__ T tile[kTile][kTile];
  const TileCoord t = tile_of_block(blockIdx.x, tiles_x, tiles_y, ORDER);
  const std::int64_t row0 = static_cast<std::int64_t>(t.row) * kTile;
  const std::int64_t col0 = static_cast<std::int64_t>(t.col) * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;

  const T* src = in + (row0 + ty) * cols + col0 + tx;
  const bool col_in = col0 + tx < cols;
  if constexpr (LOADS == Loads::pairs) {
#pragma unroll
    for (int k = 0; k < kPasses; ++k) {
      const int y = ty + k * BLOCK_ROWS;
      if (col_in && row0 + y < rows) tile[y][swizzle(y, tx)] = src[k * BLOCK_ROWS * cols];
    }
  } else {
    T v[kPasses];
#pragma unroll
    for (int k = 0; k < kPasses; ++k) {
      if (col_in && row0 + ty + k * BLOCK_ROWS < rows) v[k] = src[k * BLOCK_ROWS * cols];
    }
#pragma unroll
    for (int k = 0; k < kPasses; ++k) {
      const int y = ty + k * BLOCK_ROWS;
      if (col_in && row0 + y < rows) tile[y][swizzle(y, tx)] = v[k];
    }
  }

  __syncthreads();

  T* dst = out + (col0 + ty) * rows + row0 + tx;
  const bool out_col_in = row0 + tx < rows;
#pragma unroll
  for (int k = 0; k < kPasses; ++k) {
    const int y = ty + k * BLOCK_ROWS;
    if (out_col_in && col0 + y < cols) dst[k * BLOCK_ROWS * rows] = tile[tx][swizzle(tx, y)];
  }
}

// One 32 x BLOCK_ROWS block per 32x32 tile, as the lesson's launcher; cudaErrorInvalidValue,
// without launching, on an empty shape or one with more tiles than a grid can hold.
template <int BLOCK_ROWS, BlockOrder ORDER, Loads LOADS, typename T>
cudaError_t transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream = nullptr) {
  const std::int64_t blocks = step05::tile_blocks(rows, cols, kTile);
  if (blocks == 0) return cudaErrorInvalidValue;
  const auto tiles_x = static_cast<unsigned>((cols + kTile - 1) / kTile);
  const auto tiles_y = static_cast<unsigned>((rows + kTile - 1) / kTile);
  transpose_lab<T, BLOCK_ROWS, ORDER, LOADS>
      <<<static_cast<unsigned>(blocks), dim3(kTile, BLOCK_ROWS), 0, stream>>>(in, out, rows, cols,
                                                                             tiles_x, tiles_y);
  return cudaGetLastError();
}

}  // namespace step05_lab
