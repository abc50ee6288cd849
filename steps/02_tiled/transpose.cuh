// Step 02 - the tiled transpose: a block stages a 32x32 tile in shared memory, so that both
// global sides are coalesced. Since step 01: the block reads a tile row by row, waits, and writes
// the tile's columns as rows of the output. The price: reading a column of the shared tile puts
// all 32 threads of a warp on one bank (32-way conflict), which step 03 removes.
//
//   make step02 && ./step02
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace step02 {

constexpr int kTile = 32;  // one warp wide: a warp reads one 128-byte row segment of a tile

// Blocks are numbered in one dimension, tile by tile along each row of tiles. A 2D grid would
// stop at 65535 tile rows (gridDim.y's limit), i.e. 2,097,120 matrix rows; gridDim.x goes to
// 2^31-1, more tiles than any device memory holds.
template <typename T, int TILE>
__global__ void __launch_bounds__(TILE * TILE)
transpose_tiled(const T* __restrict__ in, T* __restrict__ out, std::int64_t rows,
                std::int64_t cols, unsigned tiles_x) {
  __shared__ T tile[TILE][TILE];
  // The block's tile: input rows row0.., input columns col0...
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x / tiles_x) * TILE;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.x % tiles_x) * TILE;
  const int tx = threadIdx.x, ty = threadIdx.y;

  // Read: a warp (fixed ty, tx = 0..31) reads 32 neighbours of one input row: coalesced.
  std::int64_t r = row0 + ty, c = col0 + tx;
  if (r < rows && c < cols) tile[ty][tx] = in[r * cols + c];

  __syncthreads();  // the write below reads elements that other warps stored

  // Write. Swap 1, the block coordinates: this tile lands at output rows col0.., columns row0...
  // Swap 2, the tile indices: thread (tx, ty) writes output (col0 + ty, row0 + tx), which is
  // input (row0 + tx, col0 + ty), i.e. tile[tx][ty]. Consecutive tx are consecutive output
  // columns: coalesced. But tile[tx][ty] walks down a column of the tile: 32 words that are
  // 32 words apart, all in one bank.
  r = col0 + ty;  // an output row (< cols)
  c = row0 + tx;  // an output column (< rows)
  if (r < cols && c < rows) out[r * rows + c] = tile[tx][ty];
}

// Blocks needed for a rows x cols matrix in TILE x TILE tiles, or 0 when the shape is empty or
// the count passes gridDim.x's limit (2^31 - 1, far beyond any device memory).
inline std::int64_t tile_blocks(std::int64_t rows, std::int64_t cols, int tile) {
  if (rows < 1 || cols < 1) return 0;
  const std::int64_t tiles_x = (cols + tile - 1) / tile, tiles_y = (rows + tile - 1) / tile;
  constexpr std::int64_t kMaxBlocks = 0x7FFFFFFF;
  return tiles_y > kMaxBlocks / tiles_x ? 0 : tiles_x * tiles_y;
}

// Launches one 32x32-thread block per 32x32 tile of the INPUT (edge tiles are partial and
// bounds-checked). Returns cudaErrorInvalidValue, without launching, on an empty shape or one
// with more tiles than a grid can hold.
template <typename T>
cudaError_t transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream = nullptr) {
  const std::int64_t blocks = tile_blocks(rows, cols, kTile);
  if (blocks == 0) return cudaErrorInvalidValue;
  const auto tiles_x = static_cast<unsigned>((cols + kTile - 1) / kTile);
  transpose_tiled<T, kTile><<<static_cast<unsigned>(blocks), dim3(kTile, kTile), 0, stream>>>(
      in, out, rows, cols, tiles_x);
  return cudaGetLastError();
}

}  // namespace step02
