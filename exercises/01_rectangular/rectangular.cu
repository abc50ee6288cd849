// Exercise 01 - a tiled transpose of ANY shape: tall, wide, 1 x N, N x 1, primes.
// Your task: the kernel and the launcher below (README.md explains the task and the tests).
//
//   cmake --build build --target test_ex01_exercise && build/bin/test_ex01_exercise
#include "ex01.cuh"

namespace ex01 {

constexpr int kTile = 32;      // a tile is 32 x 32 floats: one warp spans one tile row
constexpr int kBlockRows = 8;  // a block is 32 x 8 threads, so each thread moves 4 tile rows

// TODO(exercise): one block transposes one kTile x kTile tile of the input.
//   1. Read the tile from `in` into shared memory, consecutive threadIdx.x on consecutive
//      columns (coalesced).
//   2. Wait for the whole block.
//   3. Write the tile to `out`, where it becomes part of kTile output ROWS, consecutive
//      threadIdx.x again on consecutive columns (coalesced).
// The output is cols x rows: its rows are `rows` elements long. Tiles on the right and bottom
// edges are partial: check every index, on both sides.
__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out,
                                std::int64_t rows, std::int64_t cols) {}

cudaError_t transpose(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream) {
  // TODO(exercise): refuse what cannot be launched (cudaErrorInvalidValue), size the grid for
  // the INPUT's tiles, launch transpose_tiled with kTile x kBlockRows threads on `stream`, and
  // return cudaGetLastError().
  const dim3 block(kTile, kBlockRows);  // 32 x 8 threads per block
  // The skeleton uses nothing yet: delete the next two lines when you write yours.
  (void)block, (void)in, (void)out, (void)rows, (void)cols, (void)stream;
  return cudaErrorNotYetImplemented;  // the tests report "not implemented yet"
}

}  // namespace ex01
