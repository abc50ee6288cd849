// Step 01 - the naive transpose: one thread per element, straight from the definition
// out[c][r] = in[r][c]. Nothing changed yet: this is the baseline every later step improves.
// Two variants differ only in which side of the copy is coalesced.
//
//   make step01 && ./step01
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace step01 {

// Consecutive threads (threadIdx.x) take consecutive columns c: a warp reads 32 neighbours of
// one input row (coalesced) and writes them down one output column, `rows` elements apart, so
// every 4-byte store lands in a different 32-byte sector (strided write).
template <typename T>
__global__ void transpose_read_coalesced(const T* __restrict__ in, T* __restrict__ out,
                                         std::int64_t rows, std::int64_t cols) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}

// The mirror image: consecutive threads take consecutive input rows r, i.e. consecutive
// elements of one output row (coalesced write), and read down an input column (strided read).
template <typename T>
__global__ void transpose_write_coalesced(const T* __restrict__ in, T* __restrict__ out,
                                          std::int64_t rows, std::int64_t cols) {
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}

enum class Coalesced { read, write };

// Launches one thread per element with @p block threads per block. Returns cudaErrorInvalidValue,
// without launching, when the grid would exceed CUDA's limits (2^31-1 blocks in x, 65535 in y).
template <typename T>
cudaError_t transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols, Coalesced side,
                      dim3 block, cudaStream_t stream = nullptr) {
  if (rows < 1 || cols < 1 || block.x * block.y > 1024) return cudaErrorInvalidValue;
  // x runs along the coalesced side: input columns when reading, input rows when writing.
  const std::int64_t nx = side == Coalesced::read ? cols : rows;
  const std::int64_t ny = side == Coalesced::read ? rows : cols;
  const std::int64_t gx = (nx + block.x - 1) / block.x, gy = (ny + block.y - 1) / block.y;
  if (gx > 0x7FFFFFFF || gy > 65535) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
  if (side == Coalesced::read) {
    transpose_read_coalesced<<<grid, block, 0, stream>>>(in, out, rows, cols);
  } else {
    transpose_write_coalesced<<<grid, block, 0, stream>>>(in, out, rows, cols);
  }
  return cudaGetLastError();
}

}  // namespace step01
