// Exercise 03, reference answer - the in-place transpose of a square n x n matrix, for any n.
// One block owns a PAIR of tiles, (ty, tx) above the diagonal and its mirror (tx, ty) below: it
// reads both into shared memory, waits, and writes each one transposed where the other was. No
// other block touches the pair, so no block can read an element another block has already
// overwritten. A diagonal tile is its own mirror: it is read once and written back transposed.
//
//   cmake --build build --target test_ex03_solution && build/bin/test_ex03_solution
#include "ex03.cuh"

namespace ex03 {

constexpr int kTile = 32;      // tiles of 32 x 32 floats
constexpr int kBlockRows = 8;  // a block is 32 x 8 threads, so each thread moves 4 tile rows

// No __restrict__ on `data`: the kernel reads and writes through the same pointer, and telling
// the compiler otherwise would allow it to serve the reads from a read-only cache.
template <int TILE, int BLOCK_ROWS>
__global__ void transpose_inplace_tiled(float* data, std::int64_t n) {
  // The grid covers every (tile row, tile column); the blocks below the diagonal have nothing to
  // do, because their pair belongs to the block above it. They leave at once: half the grid
  // costs a few microseconds, and the index arithmetic stays that of a 2D grid.
  if (blockIdx.x < blockIdx.y) return;
  const bool diagonal = blockIdx.x == blockIdx.y;

  // Two tiles, padded (+1) so that the column-wise reads below are conflict-free (step 03).
  __shared__ float upper[TILE][TILE + 1];  // the tile at rows a0.., columns b0..
  __shared__ float lower[TILE][TILE + 1];  // its mirror at rows b0.., columns a0..
  const std::int64_t a0 = static_cast<std::int64_t>(blockIdx.y) * TILE;
  const std::int64_t b0 = static_cast<std::int64_t>(blockIdx.x) * TILE;
  const int tx = threadIdx.x;

  // All of a thread's loads go to registers first, then to the tiles, so that its eight loads
  // are in flight together (step 05).
  static_assert(TILE % BLOCK_ROWS == 0, "each thread moves whole tile rows");
  constexpr int kPasses = TILE / BLOCK_ROWS;
  const int ty = threadIdx.y;
  float up[kPasses], low[kPasses];
#pragma unroll
  for (int k = 0; k < kPasses; ++k) {
    const int i = ty + k * BLOCK_ROWS;
    if (a0 + i < n && b0 + tx < n) up[k] = data[(a0 + i) * n + b0 + tx];
    if (!diagonal && b0 + i < n && a0 + tx < n) low[k] = data[(b0 + i) * n + a0 + tx];
  }
#pragma unroll
  for (int k = 0; k < kPasses; ++k) {
    const int i = ty + k * BLOCK_ROWS;
    if (a0 + i < n && b0 + tx < n) upper[i][tx] = up[k];
    if (!diagonal && b0 + i < n && a0 + tx < n) lower[i][tx] = low[k];
  }
  __syncthreads();  // both tiles are in shared memory before anything is overwritten

  // The upper tile, transposed, goes where the lower one was (rows b0.., columns a0..), and the
  // lower one, transposed, where the upper one was. A diagonal tile goes back where it was.
#pragma unroll
  for (int k = 0; k < kPasses; ++k) {
    const int i = ty + k * BLOCK_ROWS;
    if (b0 + i < n && a0 + tx < n) data[(b0 + i) * n + a0 + tx] = upper[tx][i];
    if (!diagonal && a0 + i < n && b0 + tx < n) data[(a0 + i) * n + b0 + tx] = lower[tx][i];
  }
}

cudaError_t transpose_inplace(float* data, std::int64_t n, cudaStream_t stream) {
  if (n < 1) return cudaErrorInvalidValue;
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  if (tiles > 65535) return cudaErrorInvalidValue;  // gridDim.y's limit (n up to 2,097,120)
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(tiles));
  transpose_inplace_tiled<kTile, kBlockRows><<<grid, dim3(kTile, kBlockRows), 0, stream>>>(data, n);
  return cudaGetLastError();
}

}  // namespace ex03
