// MUTANT (exercise 2): no __syncthreads() between the tile's store and load. The output is often
// right anyway (a warp waits on its own loads), so the tests may pass; racecheck sees the
// shared-memory hazards, and a memory error zeroes the GPU tests.
#include "ex02.cuh"
#include "swizzle.cuh"

namespace ex02 {

namespace {

// The tile of block b: blocks go along each row of tiles, tiles_x = ceil(cols / 32) to a row.
struct TileStart {
  std::int64_t row0, col0;  // the tile's first input row and column
};

__host__ __device__ TileStart tile_of(std::int64_t cols, std::int64_t block) {
  const std::int64_t tiles_x = (cols + kTile - 1) / kTile;
  return {block / tiles_x * kTile, block % tiles_x * kTile};
}

}  // namespace

std::int64_t blocks_for(std::int64_t rows, std::int64_t cols) {
  if (rows < 1 || cols < 1) return 0;
  const std::int64_t tiles_x = (cols + kTile - 1) / kTile, tiles_y = (rows + kTile - 1) / kTile;
  return tiles_y > kMaxBlocks / tiles_x ? 0 : tiles_x * tiles_y;
}

__host__ __device__ std::int64_t input_index(std::int64_t rows, std::int64_t cols,
                                             std::int64_t block, int i, int j) {
  const TileStart t = tile_of(cols, block);
  const std::int64_t r = t.row0 + i, c = t.col0 + j;
  return r < rows && c < cols ? r * cols + c : kOutside;
}

__host__ __device__ std::int64_t output_index(std::int64_t rows, std::int64_t cols,
                                              std::int64_t block, int i, int j) {
  const TileStart t = tile_of(cols, block);
  const std::int64_t r = t.col0 + i, c = t.row0 + j;  // an output row (< cols), column (< rows)
  return r < cols && c < rows ? r * rows + c : kOutside;
}

__global__ void transpose_swizzled(const float* __restrict__ in, float* __restrict__ out,
                                   std::int64_t rows, std::int64_t cols) {
  __shared__ float tile[kTile][kTile];  // no padding: the swizzle spreads the banks instead
  const int tx = threadIdx.x, ty = threadIdx.y;

  // Store tile row ty: the warp's 32 columns go to swizzle(ty, 0..31), a permutation of the
  // row's 32 words, so 32 different banks.
  const std::int64_t from = input_index(rows, cols, blockIdx.x, ty, tx);
  if (from != kOutside) tile[ty][swizzle(ty, tx)] = in[from];

  // MUTANT: no __syncthreads()

  // Load tile column ty: thread tx reads element (tx, ty), stored at word tx * 32 + (ty ^ tx);
  // the 32 values of ty ^ tx are all different, so are the 32 banks.
  const std::int64_t to = output_index(rows, cols, blockIdx.x, ty, tx);
  if (to != kOutside) out[to] = tile[tx][swizzle(tx, ty)];
}

cudaError_t transpose(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream) {
  const std::int64_t blocks = blocks_for(rows, cols);
  if (blocks == 0) return cudaErrorInvalidValue;  // empty, or past gridDim.x's limit
  transpose_swizzled<<<static_cast<unsigned>(blocks), dim3(kTile, kTile), 0, stream>>>(in, out,
                                                                                      rows, cols);
  return cudaGetLastError();
}

}  // namespace ex02
