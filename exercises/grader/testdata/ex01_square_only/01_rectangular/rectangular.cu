// MUTANT (exercise 1): the output row length taken as cols instead of rows, the mistake that
// square matrices forgive. Caught by the CPU check of the transposed places (no GPU needed) and
// by every GPU test with a non-square shape.
#include "ex01.cuh"

namespace ex01 {

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
  // tiles_y > kMaxBlocks / tiles_x says tiles_x * tiles_y > kMaxBlocks without overflowing.
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
  // The input tile at rows row0.., columns col0.. lands at output rows col0.., columns row0...
  // An output row is `rows` elements long (not `cols`: the mistake only squares forgive).
  const TileStart t = tile_of(cols, block);
  const std::int64_t r = t.col0 + i, c = t.row0 + j;  // an output row (< cols), column (< rows)
  return r < cols && c < rows ? r * cols + c : kOutside;  // MUTANT
}

__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out,
                                std::int64_t rows, std::int64_t cols) {
  // The +1 puts the 32 elements of a tile column in 32 different banks (step 03).
  __shared__ float tile[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;

  // A warp (fixed ty, tx = 0..31) reads 32 neighbours of one input row.
  const std::int64_t from = input_index(rows, cols, blockIdx.x, ty, tx);
  if (from != kOutside) tile[ty][tx] = in[from];

  __syncthreads();  // the write below reads elements that other warps stored

  // Output element (ty, tx) of the tile is input element (tx, ty): tile[tx][ty]. Consecutive tx
  // are consecutive output columns, so the warp writes 32 neighbours too.
  const std::int64_t to = output_index(rows, cols, blockIdx.x, ty, tx);
  if (to != kOutside) out[to] = tile[tx][ty];
}

cudaError_t transpose(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream) {
  const std::int64_t blocks = blocks_for(rows, cols);
  if (blocks == 0) return cudaErrorInvalidValue;  // empty, or past gridDim.x's limit
  transpose_tiled<<<static_cast<unsigned>(blocks), dim3(kTile, kTile), 0, stream>>>(in, out, rows,
                                                                                   cols);
  return cudaGetLastError();
}

}  // namespace ex01
