// Step 05 - the coarsened tile: the same 32x32 swizzled tile as step 04, moved by fewer threads.
// Since step 04: the block is 32 x BLOCK_ROWS threads instead of 32 x 32, and each thread loops
// over TILE / BLOCK_ROWS rows of the tile (4 with the classic 32x8). A thread now has several
// independent loads in flight before the barrier, and the per-tile work (the block's index
// arithmetic, the barrier) is shared by more elements. BLOCK_ROWS is a template parameter, so one
// table compares 32, 16, 8 and 4. (The "diagonal" block order of older articles is measured in
// lab/, not here.)
//
//   make step05 && ./step05
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace step05 {

constexpr int kTile = 32;

// Element (row, col) of the tile is stored in column col ^ row: a permutation of each row, and
// 32 different banks down each column. Rows are 0..31 here, so no `% 32` (step 04 explains).
__host__ __device__ __forceinline__ int swizzle(int row, int col) { return col ^ row; }

struct TileCoord {
  unsigned row, col;  // in tiles
};

// Which tile block `bid` moves: along each row of tiles. Blocks are numbered in one dimension
// (gridDim.x holds 2^31-1 of them; gridDim.y only 65535). The kernel's Order parameter is where
// lab/ tries another order; LOADS_FIRST = false is where it tries the loads written as pairs.
struct RowOrder {
  __device__ static TileCoord tile(unsigned bid, unsigned tiles_x) {
    return {bid / tiles_x, bid % tiles_x};
  }
};

template <typename T, int TILE, int BLOCK_ROWS, class Order = RowOrder, bool LOADS_FIRST = true>
__global__ void __launch_bounds__(TILE * BLOCK_ROWS)
transpose_coarsened(const T* __restrict__ in, T* __restrict__ out, std::int64_t rows,
                    std::int64_t cols, unsigned tiles_x) {
  static_assert(TILE % BLOCK_ROWS == 0, "each thread moves TILE / BLOCK_ROWS whole tile rows");
  static_assert((TILE & (TILE - 1)) == 0, "the XOR stays inside a row only for a power of two");
  __shared__ T tile[TILE][TILE];
  const TileCoord t = Order::tile(blockIdx.x, tiles_x);
  const std::int64_t row0 = static_cast<std::int64_t>(t.row) * TILE;
  const std::int64_t col0 = static_cast<std::int64_t>(t.col) * TILE;
  const int tx = threadIdx.x, ty = threadIdx.y;

  // Read: warp ty takes tile rows ty, ty + BLOCK_ROWS, ...; each pass is one coalesced row.
  // All of a thread's loads go to registers first and only then to shared memory: written as
  // load-store pairs, the compiler may wait for each load before issuing the next, and a
  // transpose lives on loads in flight. The trip count is a constant, so the loops unroll and v
  // stays in registers. The thread's first element and its column test are worked out once;
  // pass k is then k * BLOCK_ROWS rows further down.
  constexpr int kPasses = TILE / BLOCK_ROWS;
  const T* src = in + (row0 + ty) * cols + col0 + tx;
  const bool col_in = col0 + tx < cols;
  if constexpr (LOADS_FIRST) {
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
  } else {  // the load-store pairs the lab times against it
#pragma unroll
    for (int k = 0; k < kPasses; ++k) {
      const int y = ty + k * BLOCK_ROWS;
      if (col_in && row0 + y < rows) tile[y][swizzle(y, tx)] = src[k * BLOCK_ROWS * cols];
    }
  }

  __syncthreads();

  // Write: the tile's column y becomes output row col0 + y, coalesced along tx.
  T* dst = out + (col0 + ty) * rows + row0 + tx;  // output row col0 + ty, column row0 + tx
  const bool out_col_in = row0 + tx < rows;
#pragma unroll
  for (int k = 0; k < kPasses; ++k) {
    const int y = ty + k * BLOCK_ROWS;
    if (out_col_in && col0 + y < cols) dst[k * BLOCK_ROWS * rows] = tile[tx][swizzle(tx, y)];
  }
}

// Blocks needed for a rows x cols matrix in TILE x TILE tiles, or 0 when the shape is empty or
// the count passes gridDim.x's limit (2^31 - 1, far beyond any device memory).
inline std::int64_t tile_blocks(std::int64_t rows, std::int64_t cols, int tile) {
  if (rows < 1 || cols < 1) return 0;
  const std::int64_t tiles_x = (cols + tile - 1) / tile, tiles_y = (rows + tile - 1) / tile;
  constexpr std::int64_t kMaxBlocks = 0x7FFFFFFF;
  return tiles_y > kMaxBlocks / tiles_x ? 0 : tiles_x * tiles_y;
}

// One 32 x BLOCK_ROWS block per 32x32 tile of the input. cudaErrorInvalidValue, without launching,
// on an empty shape or one with more tiles than a grid can hold.
template <int BLOCK_ROWS, class Order = RowOrder, bool LOADS_FIRST = true, typename T>
cudaError_t transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream = nullptr) {
  const std::int64_t blocks = tile_blocks(rows, cols, kTile);
  if (blocks == 0) return cudaErrorInvalidValue;
  const auto tiles_x = static_cast<unsigned>((cols + kTile - 1) / kTile);
  transpose_coarsened<T, kTile, BLOCK_ROWS, Order, LOADS_FIRST>
      <<<static_cast<unsigned>(blocks), dim3(kTile, BLOCK_ROWS), 0, stream>>>(in, out, rows, cols,
                                                                             tiles_x);
  return cudaGetLastError();
}

}  // namespace step05
