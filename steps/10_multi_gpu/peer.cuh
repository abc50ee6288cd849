// Step 10 - the peer writes: one kernel reads this GPU's rows and writes every transposed element
// straight to where it belongs, in this GPU's output block or in another GPU's, through NCCL's
// windows (window.cuh: NVLink on one machine). One pass, no staging buffers: 2N bytes of this
// GPU's memory traffic (its block read, its share written) where the direct placement's pack and
// copies take 4N. The SMs drive the links, so they are busy for the whole transfer; the copy
// engines stay idle. Its method (methods.cuh) waits for every GPU on entry and on exit, as the
// direct placement does.
//
//   make step10 && ./step10 --rows 32768 --cols 32768 --gpus 4 --only peer
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tile_grid.cuh"  // step 08's Element<S>

namespace step10 {

/// An S-byte element as one machine word (16 bytes: a uint4), as step 08 moves it.
template <int S> using Word = typename step08::Element<S>::type;

/// Blocks{n, parts}.first and .owner (blocks.hpp), for the kernel: the same arithmetic.
__host__ __device__ inline std::int64_t block_first(int p, std::int64_t n, int parts) {
  return p * (n / parts) + (p < n % parts ? p : n % parts);
}
__host__ __device__ inline int block_owner(std::int64_t i, std::int64_t n, int parts) {
  const std::int64_t q = n / parts, big = (n % parts) * (q + 1);
  return static_cast<int>(i < big ? i / (q + 1) : n % parts + (i - big) / q);
}

/// Step 03's tile (32 x 32, 32 x 8 threads, one element per access, padded shared memory) with an
/// owner per output row. This GPU's rows x cols block (rows first_row.. of the whole matrix) goes
/// into every GPU's output block: output row c (input column c) is GPU g = owner(c)'s row
/// c - first(g), and this block's row r lands in its column first_row + r; outs[g] is GPU g's
/// block, out_pitch elements a row.
///
/// The order of the tiles: kDown = false takes them along the input's rows, as step 03 does.
/// (The lab's kDown = true walks them down the input's columns, the owners' columns interleaved.)
template <int S, bool kDown = false>
__global__ void __launch_bounds__(256)
    transpose_to_owners(const Word<S>* __restrict__ in, std::int64_t rows,
                        std::int64_t cols, std::int64_t first_row, std::int64_t out_pitch,
                        int gpus, Word<S>* const* __restrict__ outs,
                        std::int64_t tiles_across) {
  __shared__ Word<S> tile[32][33];  // +1: a column read hits 32 banks (4 bytes)
  std::int64_t r0, c0;
  if (kDown) {
    const std::int64_t down = (rows + 31) / 32, k = blockIdx.x / down, spread = tiles_across / gpus;
    // strip k of the walk: the owners' strips in turn (GPU 0's first, GPU 1's first, ...)
    const std::int64_t strip = k < spread * gpus ? k % gpus * spread + k / gpus : k;
    r0 = blockIdx.x % down * 32;
    c0 = strip * 32;
  } else {
    r0 = blockIdx.x / tiles_across * 32;
    c0 = blockIdx.x % tiles_across * 32;
  }
  for (int i = threadIdx.y; i < 32; i += 8) {
    const std::int64_t r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[i][threadIdx.x] = in[r * cols + c];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < 32; i += 8) {
    const std::int64_t c = c0 + i, r = r0 + threadIdx.x;
    if (c < cols && r < rows) {
      const int g = block_owner(c, cols, gpus);  // the same for the whole warp
      outs[g][(c - block_first(g, cols, gpus)) * out_pitch + first_row + r] = tile[threadIdx.x][i];
    }
  }
}

/// Calls @p launch with std::integral_constant<int, S> for the element size @p elem (1, 2, 4, 8 or
/// 16 bytes) and returns what it returns; cudaErrorInvalidValue for any other size. The kernels
/// are templates on S: each size is its own kernel, and this picks it at run time.
template <typename Launch>
inline cudaError_t by_size(std::size_t elem, Launch launch) {
  switch (elem) {
    case 1: return launch(std::integral_constant<int, 1>{});
    case 2: return launch(std::integral_constant<int, 2>{});
    case 4: return launch(std::integral_constant<int, 4>{});
    case 8: return launch(std::integral_constant<int, 8>{});
    case 16: return launch(std::integral_constant<int, 16>{});
    default: return cudaErrorInvalidValue;
  }
}

/// Launches transpose_to_owners for @p elem-byte elements; outs is a device array of G
/// pointers. cudaErrorInvalidValue for an empty block or more than 2^31 - 1 tiles.
template <bool kDown = false>
inline cudaError_t launch_to_owners(std::size_t elem, const void* in, std::int64_t rows,
                                    std::int64_t cols, std::int64_t first_row,
                                    std::int64_t out_pitch, int gpus, void* const* outs,
                                    cudaStream_t stream) {
  const std::int64_t across = (cols + 31) / 32, tiles = (rows + 31) / 32 * across;
  if (rows < 1 || cols < 1 || tiles > 0x7FFFFFFF) return cudaErrorInvalidValue;
  return by_size(elem, [&](auto size) {
    constexpr int S = decltype(size)::value;
    using W = Word<S>;
    transpose_to_owners<S, kDown><<<static_cast<unsigned>(tiles), dim3(32, 8), 0, stream>>>(
        static_cast<const W*>(in), rows, cols, first_row, out_pitch, gpus,
        reinterpret_cast<W* const*>(outs), across);
    return cudaGetLastError();
  });
}

/// How this GPU's rows reach their owners: launch_to_owners's arguments (the lab passes others).
using ToOwners = cudaError_t (*)(std::size_t elem, const void* in, std::int64_t rows,
                                 std::int64_t cols, std::int64_t first_row, std::int64_t out_pitch,
                                 int gpus, void* const* outs, cudaStream_t stream);

}  // namespace step10
