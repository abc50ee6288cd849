// Exercise 01, reference answer - a tiled transpose of ANY shape: tall, wide, 1 x N, N x 1,
// primes. The tiled kernel of steps 03 and 05 (padded tile, 32 x 8 threads, 4 rows per thread)
// with the three things a rectangular shape needs: a grid sized for the INPUT's tiles, an output
// row length of `rows`, and a bounds check on both sides of the copy.
//
//   cmake --build build --target test_ex01_solution && build/bin/test_ex01_solution
#include "ex01.cuh"

namespace ex01 {

constexpr int kTile = 32;      // a tile is 32 x 32 floats: one warp spans one tile row
constexpr int kBlockRows = 8;  // a block is 32 x 8 threads, so each thread moves 4 tile rows

// Block (blockIdx.x, blockIdx.y) owns the input tile at columns col0.. and rows row0...
template <int TILE, int BLOCK_ROWS>
__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out,
                                std::int64_t rows, std::int64_t cols) {
  // The +1 puts the elements of a tile column in 32 different banks (step 03).
  __shared__ float tile[TILE][TILE + 1];
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.x) * TILE;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.y) * TILE;
  const int tx = threadIdx.x;

  // Read: a warp takes 32 neighbours of one input row. Both indices are checked: the tile may
  // hang over the bottom (r) and the right (c) edge. All of a thread's loads go to registers
  // first, then to the tile, so that they are in flight together (step 05).
  static_assert(TILE % BLOCK_ROWS == 0, "each thread moves whole tile rows");
  constexpr int kPasses = TILE / BLOCK_ROWS;
  const int ty = threadIdx.y;
  const std::int64_t c_in = col0 + tx;
  float v[kPasses];
#pragma unroll
  for (int k = 0; k < kPasses; ++k) {
    const std::int64_t r = row0 + ty + k * BLOCK_ROWS;
    if (r < rows && c_in < cols) v[k] = in[r * cols + c_in];
  }
#pragma unroll
  for (int k = 0; k < kPasses; ++k) {
    const int i = ty + k * BLOCK_ROWS;
    if (row0 + i < rows && c_in < cols) tile[i][tx] = v[k];
  }

  __syncthreads();  // the writes below read elements that other warps stored

  // Write: the tile lands at output rows col0.. and output columns row0... An output row is
  // `rows` elements long (not `cols`: the classic mistake that only square matrices forgive).
#pragma unroll
  for (int k = 0; k < kPasses; ++k) {
    const int i = ty + k * BLOCK_ROWS;
    const std::int64_t r = col0 + i, c = row0 + tx;  // output row (< cols), column (< rows)
    if (r < cols && c < rows) out[r * rows + c] = tile[tx][i];
  }
}

cudaError_t transpose(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream) {
  if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
  // One block per INPUT tile: x along the input's columns, y along its rows. Sizing the grid
  // for the output (x from rows, y from cols) leaves tiles of any non-square matrix undone.
  const std::int64_t tiles_x = (cols + kTile - 1) / kTile, tiles_y = (rows + kTile - 1) / kTile;
  if (tiles_x > 0x7FFFFFFF || tiles_y > 65535) return cudaErrorInvalidValue;  // grid limits
  const dim3 grid(static_cast<unsigned>(tiles_x), static_cast<unsigned>(tiles_y));
  transpose_tiled<kTile, kBlockRows><<<grid, dim3(kTile, kBlockRows), 0, stream>>>(in, out, rows,
                                                                                   cols);
  return cudaGetLastError();
}

}  // namespace ex01
