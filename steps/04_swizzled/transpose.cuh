// Step 04 - the swizzled tile: no padding; instead, element (r, c) of the tile is stored in
// column c ^ r of row r. Since step 03: the tile is back to `tile[TILE][TILE]`, and both shared
// accesses go through swizzle(). Within a row the XOR only permutes the columns, so the tile
// still holds every element exactly once; down a column it sends each row to a different bank,
// so the transposed read is conflict-free, and every tile row stays aligned to 128 bytes.
//
//   make step04 && ./step04
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace step04 {

constexpr int kTile = 32;

// The column of row @p row where element (row, col) of the tile is stored. For a fixed row,
// col -> col ^ k is its own inverse, hence a bijection of 0..TILE-1 (TILE a power of two, so the
// XOR never leaves the row). For a fixed col, rows 0..31 give 32 different values col ^ row,
// i.e. 32 different banks. The general form is col ^ (row % 32), for 32 banks; the kernel only
// asks for rows 0..31 (a thread's ty or tx), so the `% 32` is left out: at one element per
// thread every instruction shows, and a signed `row % 32` costs five (lab/ measures the forms).
// The CPU test checks this very function with the bank model (common/bank_model.hpp), whose
// maps `bankmap` prints.
__host__ __device__ __forceinline__ int swizzle(int row, int col) { return col ^ row; }

// Blocks are numbered in one dimension (gridDim.x holds 2^31-1 of them; gridDim.y only 65535).
template <typename T, int TILE>
__global__ void __launch_bounds__(TILE * TILE)
transpose_swizzled(const T* __restrict__ in, T* __restrict__ out, std::int64_t rows,
                   std::int64_t cols, unsigned tiles_x) {
  static_assert((TILE & (TILE - 1)) == 0, "the XOR stays inside a row only for a power of two");
  __shared__ T tile[TILE][TILE];  // no padding: rows stay 128-byte aligned
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x / tiles_x) * TILE;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.x % tiles_x) * TILE;
  const int tx = threadIdx.x, ty = threadIdx.y;

  // Read a tile row per warp, coalesced. The warp stores one tile row: the XOR permutes the 32
  // words of that row among themselves, so the store is still one word per bank.
  std::int64_t r = row0 + ty, c = col0 + tx;
  if (r < rows && c < cols) tile[ty][swizzle(ty, tx)] = in[r * cols + c];

  __syncthreads();

  // Write: element (tx, ty) of the tile, found where the read stored it. Thread tx reads word
  // tx * 32 + (ty ^ tx), in bank ty ^ tx: 32 threads, 32 banks.
  r = col0 + ty;  // an output row (< cols)
  c = row0 + tx;  // an output column (< rows)
  if (r < cols && c < rows) out[r * rows + c] = tile[tx][swizzle(tx, ty)];
}

// Blocks needed for a rows x cols matrix in TILE x TILE tiles, or 0 when the shape is empty or
// the count passes gridDim.x's limit (2^31 - 1, far beyond any device memory).
inline std::int64_t tile_blocks(std::int64_t rows, std::int64_t cols, int tile) {
  if (rows < 1 || cols < 1) return 0;
  const std::int64_t tiles_x = (cols + tile - 1) / tile, tiles_y = (rows + tile - 1) / tile;
  constexpr std::int64_t kMaxBlocks = 0x7FFFFFFF;
  return tiles_y > kMaxBlocks / tiles_x ? 0 : tiles_x * tiles_y;
}

// One 32x32-thread block per 32x32 tile of the input; cudaErrorInvalidValue, without launching,
// on an empty shape or one with more tiles than a grid can hold.
template <typename T>
cudaError_t transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream = nullptr) {
  const std::int64_t blocks = tile_blocks(rows, cols, kTile);
  if (blocks == 0) return cudaErrorInvalidValue;
  const auto tiles_x = static_cast<unsigned>((cols + kTile - 1) / kTile);
  transpose_swizzled<T, kTile><<<static_cast<unsigned>(blocks), dim3(kTile, kTile), 0, stream>>>(
      in, out, rows, cols, tiles_x);
  return cudaGetLastError();
}

}  // namespace step04
