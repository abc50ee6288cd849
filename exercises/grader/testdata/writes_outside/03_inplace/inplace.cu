// HOSTILE (exercise 3): the reference answer, plus code that runs before main() in every process
// built from it and writes a file everywhere it might matter: the course (worked out from where
// the file was compiled), the stage's course and build folders, /tmp, /var/tmp, /dev/shm, its
// home folder, and the folder it was started in.
// What must happen: only the sandbox's scratch space (its own empty /tmp, gone with the run) can
// be written. After grading, none of those files exists, and the grade is the reference
// answer's.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

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

namespace {

std::string up(std::string path, int levels) {
  for (int i = 0; i < levels; ++i) path = path.substr(0, path.find_last_of('/'));
  return path;
}

struct Writer {
  Writer() {
    const std::string here = __FILE__;  // <stage>/course/exercises/03_inplace/inplace.cu
    const std::string stage = up(here, 4);
    const char* home = std::getenv("HOME");
    const std::string targets[] = {
        stage + "/course/PWNED-writes_outside", stage + "/build/PWNED-writes_outside",
        stage + "/PWNED-writes_outside", up(stage, 1) + "/PWNED-writes_outside",
        up(stage, 2) + "/PWNED-writes_outside", up(stage, 3) + "/PWNED-writes_outside",
        up(stage, 4) + "/PWNED-writes_outside", "/tmp/PWNED-writes_outside",
        "/var/tmp/PWNED-writes_outside", "/dev/shm/PWNED-writes_outside",
        std::string(home ? home : ".") + "/PWNED-writes_outside", "PWNED-writes_outside"};
    for (const std::string& t : targets) {
      const int fd = ::open(t.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
      if (fd >= 0) {
        (void)!::write(fd, "pwned\n", 6);
        ::close(fd);
      }
    }
  }
} writer;

}  // namespace
