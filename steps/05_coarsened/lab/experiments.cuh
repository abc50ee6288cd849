// Step 05's lab - two things tried on the coarsened tile and not taught in the lesson:
//   - the "diagonal" block order of the early CUDA SDK transpose article, against partition
//     camping: consecutive blocks walk down the diagonals of the tile grid;
//   - the loads written as load-store pairs (one loop, `tile[...] = src[...]`), the first form of
//     the lesson's kernel, against the lesson's "every load into registers first".
// Both are the lesson's kernel (transpose.cuh) with its Order and LOADS_FIRST parameters.
//
//   make step05-lab && ./step05-lab
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "transpose.cuh"

namespace step05_lab {

using step05::kTile;

// Which tile a block transposes; blocks are numbered in one dimension (bid = blockIdx.x) and the
// hardware starts them roughly in that order.
//   rows:     along each row of tiles, as the lesson does (tile row = bid / tiles_x).
//   diagonal: down the diagonals of the tile grid, so blocks running at the same time read from
//             different column bands of the input and write to different row bands of the output.
enum class BlockOrder { rows, diagonal };

// How a thread's loads reach the tile: all into registers first (the lesson), or each load stored
// to shared memory right after it is issued.
enum class Loads { first, pairs };

using step05::TileCoord;

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

// The order as the lesson kernel's Order parameter. The grid holds exactly tiles_x x tiles_y
// blocks, so tiles_y is gridDim.x / tiles_x (one division per block, not per element).
template <BlockOrder ORDER>
struct Ordered {
  __device__ static TileCoord tile(unsigned bid, unsigned tiles_x) {
    return tile_of_block(bid, tiles_x, gridDim.x / tiles_x, ORDER);
  }
};

// The lesson's kernel and launcher, in the given block order and with the given loads.
template <int BLOCK_ROWS, BlockOrder ORDER, Loads LOADS, typename T>
cudaError_t transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream = nullptr) {
  return step05::transpose<BLOCK_ROWS, Ordered<ORDER>, LOADS == Loads::first>(in, out, rows,
                                                                              cols, stream);
}

}  // namespace step05_lab
