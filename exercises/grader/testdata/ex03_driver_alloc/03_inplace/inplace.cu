// HOSTILE (exercise 3): a right answer that is not in place. The launcher allocates a whole
// second matrix through the CUDA driver API, fetched by a name built at run time (no cudaMalloc,
// no cuMemAlloc, no allocation symbol in the object: the name checks see nothing), copies the
// matrix there and transposes it back out of place.
// What must happen: the grader samples the device's memory from outside (NVML) during the timed
// run and finds a matrix's worth more than the course's in-place kernel: exercise 3 is lost.
// Without a GPU, nothing runs on the device, and the CPU entries pass.
#include "ex03.cuh"

#include <string>

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

namespace {

using Alloc = int (*)(unsigned long long*, std::size_t);
using Free = int (*)(unsigned long long);

template <typename F>
F driver(const std::string& name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found;
  cudaGetDriverEntryPointByVersion(name.c_str(), &fn, 12000, cudaEnableDefault, &found);
  return reinterpret_cast<F>(fn);
}

__global__ void copy_words(const float* from, float* to, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    to[i] = from[i];
  }
}

__global__ void transpose_from(const float* from, float* to, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n * n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    to[i % n * n + i / n] = from[i];
  }
}

}  // namespace

cudaError_t transpose_inplace(float* data, std::int64_t n, cudaStream_t stream) {
  const std::int64_t blocks = blocks_for(n);
  if (blocks == 0) return cudaErrorInvalidValue;  // empty, or past gridDim.x's limit
  static const Alloc alloc = driver<Alloc>(std::string("cuMem") + "Alloc");
  static const Free release = driver<Free>(std::string("cuMem") + "Free");
  unsigned long long scratch = 0;
  if (alloc && release &&
      alloc(&scratch, static_cast<std::size_t>(n) * n * sizeof(float)) == 0) {
    float* copy = reinterpret_cast<float*>(scratch);
    copy_words<<<1024, 256, 0, stream>>>(data, copy, n * n);
    transpose_from<<<1024, 256, 0, stream>>>(copy, data, n);
    cudaStreamSynchronize(stream);
    release(scratch);
    return cudaGetLastError();
  }
  transpose_inplace_tiled<<<static_cast<unsigned>(blocks), dim3(kTile, kBlockRows), 0, stream>>>(
      data, n);
  return cudaGetLastError();
}

}  // namespace ex03
