// Exercise 03 - the in-place transpose of a square n x n matrix, for any n: the output
// overwrites the input, with no second matrix.
// Your task: the three functions, the kernel and the launcher below (README.md explains the
// task and the tests; ex03.cuh says exactly what each function answers).
//
//   make ex03      builds and runs this exercise's tests (the CPU ones need no GPU)
#include "ex03.cuh"

namespace ex03 {

constexpr int kBlockRows = 8;  // a block is 32 x 8 threads, so each thread moves 4 tile rows

// TODO(exercise): how many blocks: T * T (one per tile) or T * (T + 1) / 2 (one per pair),
// T = ceil(n / 32); 0 for n < 1 or more than kMaxBlocks, computed without overflowing.
std::int64_t blocks_for(std::int64_t n) {
  (void)n;
  return kNotImplemented;
}

// TODO(exercise): the pair of tiles block `block` swaps, {kOutside, kOutside} when it has none.
// Every tile must be in exactly one block's pair; a tile on the diagonal is its own mirror.
__host__ __device__ TilePair pair_of_block(std::int64_t n, std::int64_t block) {
  (void)n, (void)block;
  return {kNotImplemented, kNotImplemented};
}

// TODO(exercise): the index of element (i, j) of tile (tile_row, tile_col), or kOutside when it
// is outside the n x n matrix.
__host__ __device__ std::int64_t element_index(std::int64_t n, std::int64_t tile_row,
                                               std::int64_t tile_col, int i, int j) {
  (void)n, (void)tile_row, (void)tile_col, (void)i, (void)j;
  return kNotImplemented;
}

// TODO(exercise): tile (row, col) and tile (col, row) must trade places, each one transposed. The
// block gets its pair from pair_of_block(n, blockIdx.x) and returns at once if it has none. It
// reads both tiles into shared memory (element (i, tx) of each, for i = ty, ty + 8, ...), waits,
// then writes each one transposed where the other was: element (i, tx) of one tile's place
// receives element (tx, i) of the other tile. A tile on the diagonal is its own partner.
// element_index says where each element is, and kOutside for those outside the matrix.
__global__ void transpose_inplace_tiled(float* data, std::int64_t n) {}

cudaError_t transpose_inplace(float* data, std::int64_t n, cudaStream_t stream) {
  // TODO(exercise): refuse (cudaErrorInvalidValue, no launch) when blocks_for(n) is 0; otherwise
  // launch blocks_for(n) blocks of kTile x kBlockRows threads on `stream`, and return
  // cudaGetLastError().
  const dim3 block(kTile, kBlockRows);  // 32 x 8 threads per block
  // The skeleton uses nothing yet: delete the next two lines when you write yours.
  (void)block, (void)data, (void)n, (void)stream;
  return cudaErrorNotYetImplemented;  // the tests report "not implemented yet"
}

}  // namespace ex03
