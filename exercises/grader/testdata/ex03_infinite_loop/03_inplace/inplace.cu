// MUTANT (exercise 3): a block whose pair holds a partial tile never leaves its loop. Caught by
// the per-entry time limit (5 s here): "timed out", every process of the sandbox is killed, the
// next entry runs; the sizes that are multiples of 32 pass.
#include "ex03.cuh"

namespace ex03 {

constexpr int kBlockRows = 8;  // a block is 32 x 8 threads, so each thread moves 4 tile rows

// One block per tile, blocks numbered along the rows of tiles: block b is tile (b / T, b % T).
// The blocks below the diagonal have nothing to do (their pair belongs to the block above it);
// they leave at once, which costs only their launch and keeps the arithmetic that of step 02.
std::int64_t blocks_for(std::int64_t n) {
  if (n < 1) return 0;
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  return tiles > kMaxBlocks / tiles ? 0 : tiles * tiles;  // n up to 1,482,880
}

__host__ __device__ TilePair pair_of_block(std::int64_t n, std::int64_t block) {
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  const std::int64_t row = block / tiles, col = block % tiles;
  if (col < row) return {kOutside, kOutside};
  return {row, col};
}

__host__ __device__ std::int64_t element_index(std::int64_t n, std::int64_t tile_row,
                                               std::int64_t tile_col, int i, int j) {
  const std::int64_t r = tile_row * kTile + i, c = tile_col * kTile + j;
  return r < n && c < n ? r * n + c : kOutside;
}

// No __restrict__ on `data`: the kernel reads and writes through the same pointer, and telling
// the compiler otherwise would allow it to serve the reads from a read-only cache.
__global__ void transpose_inplace_tiled(float* data, std::int64_t n) {
  const TilePair p = pair_of_block(n, blockIdx.x);
  if (p.row == kOutside) return;  // the whole block leaves: no one waits at its barrier
  const bool diagonal = p.row == p.col;
  // MUTANT: spins forever when the tile's last element is outside the matrix.
  volatile int spin = 0;
  while (element_index(n, p.row, p.col, kTile - 1, kTile - 1) == kOutside) spin = spin + 1;

  // Two tiles, padded (+1) so that the column-wise reads below are conflict-free (step 03).
  __shared__ float upper[kTile][kTile + 1];  // tile (row, col)
  __shared__ float lower[kTile][kTile + 1];  // its mirror (col, row)
  const int tx = threadIdx.x, ty = threadIdx.y;

  // All of a thread's loads go to registers first, then to the tiles, so that its eight loads
  // are in flight together (step 05). A diagonal tile is read once.
  constexpr int kPasses = kTile / kBlockRows;
  float up[kPasses], low[kPasses];
#pragma unroll
  for (int k = 0; k < kPasses; ++k) {
    const int i = ty + k * kBlockRows;
    const std::int64_t a = element_index(n, p.row, p.col, i, tx);
    const std::int64_t b = element_index(n, p.col, p.row, i, tx);
    if (a != kOutside) up[k] = data[a];
    if (!diagonal && b != kOutside) low[k] = data[b];
  }
#pragma unroll
  for (int k = 0; k < kPasses; ++k) {
    const int i = ty + k * kBlockRows;
    if (element_index(n, p.row, p.col, i, tx) != kOutside) upper[i][tx] = up[k];
    if (!diagonal && element_index(n, p.col, p.row, i, tx) != kOutside) lower[i][tx] = low[k];
  }
  __syncthreads();  // both tiles are in shared memory before anything is overwritten

  // Element (i, tx) of the mirror's place receives element (tx, i) of tile (row, col), and the
  // other way round. A diagonal tile goes back where it was, transposed.
#pragma unroll
  for (int k = 0; k < kPasses; ++k) {
    const int i = ty + k * kBlockRows;
    const std::int64_t a = element_index(n, p.row, p.col, i, tx);
    const std::int64_t b = element_index(n, p.col, p.row, i, tx);
    if (b != kOutside) data[b] = upper[tx][i];
    if (!diagonal && a != kOutside) data[a] = lower[tx][i];
  }
}

cudaError_t transpose_inplace(float* data, std::int64_t n, cudaStream_t stream) {
  const std::int64_t blocks = blocks_for(n);
  if (blocks == 0) return cudaErrorInvalidValue;  // empty, or past gridDim.x's limit
  transpose_inplace_tiled<<<static_cast<unsigned>(blocks), dim3(kTile, kBlockRows), 0, stream>>>(
      data, n);
  return cudaGetLastError();
}

}  // namespace ex03
