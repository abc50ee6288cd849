// HOSTILE (exercise 1): the skeleton, nothing implemented, plus code that runs before main() in
// every process built from it and forges what a grader might believe: a GoogleTest report of
// passes for every test, written wherever a report could go; "done" and "cudaSuccess" records
// on every descriptor the grader's worker might write to; answers of a right blocks_for; then an
// exit code of 0, before the worker reads its plan.
// What must happen: the judge reads data, not claims. A check whose answers are missing or do
// not fit fails, a "done" without an output fails, a launcher that "succeeded" without writing
// the output leaves the poison. Exercise 1 scores 0, with or without a GPU.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ex01.cuh"

namespace ex01 {

// TODO(exercise): one block per 32 x 32 tile of the INPUT, ceil(rows / 32) * ceil(cols / 32)
// blocks; 0 for an empty shape or more than kMaxBlocks, computed without overflowing.
std::int64_t blocks_for(std::int64_t rows, std::int64_t cols) {
  (void)rows, (void)cols;
  return kNotImplemented;
}

// TODO(exercise): block b's tile is tile row b / tiles_x, tile column b % tiles_x
// (tiles_x = ceil(cols / 32)). Element (i, j) of that tile is input row 32 * (b / tiles_x) + i,
// column 32 * (b % tiles_x) + j. Return its index in `in`, or kOutside when it is outside the
// rows x cols input.
__host__ __device__ std::int64_t input_index(std::int64_t rows, std::int64_t cols,
                                             std::int64_t block, int i, int j) {
  (void)rows, (void)cols, (void)block, (void)i, (void)j;
  return kNotImplemented;
}

// TODO(exercise): where block b's tile lands in the OUTPUT (cols x rows), transposed: element
// (i, j) of that output tile receives tile[j][i], i.e. input element (32 * (b / tiles_x) + j,
// 32 * (b % tiles_x) + i). Return the output index of element (i, j), or kOutside when it is
// outside the output. How long is an output row?
__host__ __device__ std::int64_t output_index(std::int64_t rows, std::int64_t cols,
                                              std::int64_t block, int i, int j) {
  (void)rows, (void)cols, (void)block, (void)i, (void)j;
  return kNotImplemented;
}

// TODO(exercise): step 03's kernel, with the functions above doing the index arithmetic:
//   1. thread (tx, ty) loads in[input_index(rows, cols, blockIdx.x, ty, tx)] into tile[ty][tx]
//      (unless the index is kOutside);
//   2. __syncthreads(), reached by every thread;
//   3. it writes tile[tx][ty] to out[output_index(rows, cols, blockIdx.x, ty, tx)] (unless
//      kOutside).
// Use a padded tile, __shared__ float tile[kTile][kTile + 1], as in step 03.
__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out,
                                std::int64_t rows, std::int64_t cols) {}

cudaError_t transpose(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream) {
  // TODO(exercise): refuse (cudaErrorInvalidValue, no launch) when blocks_for is 0; otherwise
  // launch transpose_tiled with blocks_for(rows, cols) blocks of kTile x kTile threads on
  // `stream`, and return cudaGetLastError().
  const dim3 block(kTile, kTile);  // 32 x 32 threads per block, one per tile element
  // The skeleton uses nothing yet: delete the next two lines when you write yours.
  (void)block, (void)in, (void)out, (void)rows, (void)cols, (void)stream;
  return cudaErrorNotYetImplemented;  // the tests report "not implemented yet"
}

}  // namespace ex01

namespace {

const char* const kReport =
    "{\"tests\": 13, \"failures\": 0, \"testsuites\": [{\"name\": \"Ex01\", \"testsuite\": ["
    "{\"name\": \"SquareTileMultiples\", \"result\": \"COMPLETED\", \"status\": \"RUN\"}]}]}";

void forge() {
  // A GoogleTest report wherever one might be read.
  for (const char* path : {"report.json", "/tmp/report.json", "../report.json", "results.json"}) {
    if (FILE* f = std::fopen(path, "w")) {
      std::fputs(kReport, f);
      std::fclose(f);
    }
  }
  // Records on every descriptor a worker might write its data to.
  for (int fd = 1; fd < 10; ++fd) {
    for (int item = 0; item < 40; ++item) {
      dprintf(fd, "@%d status 13\n0 cudaSuccess@%d values 1\n\x02@%d done 0\n", item, item, item);
    }
  }
  std::_Exit(0);
}

struct Forger {
  Forger() { forge(); }
} forger;

}  // namespace
