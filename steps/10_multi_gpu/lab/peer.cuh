// Step 10's lab - the peer writes: one kernel reads this GPU's rows and writes every transposed
// element straight to where it belongs, in this GPU's output block or in another GPU's (through
// NCCL's windows, window.cuh: NVLink on one machine). One pass, no staging buffers: 2N bytes of
// this GPU's memory traffic (its block read, its share written) where the direct placement's
// pack and copies take 4N. It cannot span machines: the other GPUs' memory must be mapped here.
//
// Two kernels. transpose_to_owners: step 03's tile (32 x 32, 32 x 8 threads, one element per
// access, padded shared memory) with a pitch on each side and an owner per output row. And step
// 08's vector kernel itself (transpose_vec), its output a parameter (OwnersOut): 16-byte loads
// and stores for every element size, where every row starts on 16 bytes; elsewhere the first.
//
//   make step10-lab && ./step10-lab --rows 32768 --cols 32768 --only peer
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "transpose.cuh"  // steps/08_general: transpose_vec, vector_tile, make_grid

namespace step10 {

/// An S-byte element as one machine word (16 bytes: a uint4).
template <int S> struct Word;
template <> struct Word<1> { using type = unsigned char; };
template <> struct Word<2> { using type = unsigned short; };
template <> struct Word<4> { using type = unsigned int; };
template <> struct Word<8> { using type = unsigned long long; };
template <> struct Word<16> { using type = uint4; };

/// Blocks{n, parts}.first and .owner (blocks.hpp), for the kernel: the same arithmetic.
__host__ __device__ inline std::int64_t block_first(int p, std::int64_t n, int parts) {
  return p * (n / parts) + (p < n % parts ? p : n % parts);
}
__host__ __device__ inline int block_owner(std::int64_t i, std::int64_t n, int parts) {
  const std::int64_t q = n / parts, big = (n % parts) * (q + 1);
  return static_cast<int>(i < big ? i / (q + 1) : n % parts + (i - big) / q);
}

/// This GPU's rows x cols block (rows first_row.. of the whole matrix) into every GPU's output
/// block: output row c (input column c) is GPU g = owner(c)'s row c - first(g), and this block's
/// row r lands in its column first_row + r; outs[g] is GPU g's block, out_pitch elements a row.
///
/// The order of the tiles: kDown = false takes them along the input's rows, so the blocks in
/// flight write into many output rows at once (all of them when the matrix has few columns);
/// kDown = true walks them down the input's columns, so they write into a few output rows, and
/// interleaves the owners' columns, so that every GPU's links are busy all along.
template <int S, bool kDown>
__global__ void __launch_bounds__(256)
    transpose_to_owners(const typename Word<S>::type* __restrict__ in, std::int64_t rows,
                        std::int64_t cols, std::int64_t first_row, std::int64_t out_pitch,
                        int gpus, typename Word<S>::type* const* __restrict__ outs,
                        std::int64_t tiles_across) {
  __shared__ typename Word<S>::type tile[32][33];  // +1: a column read hits 32 banks (4 bytes)
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
    using W = typename Word<S>::type;
    transpose_to_owners<S, kDown><<<static_cast<unsigned>(tiles), dim3(32, 8), 0, stream>>>(
        static_cast<const W*>(in), rows, cols, first_row, out_pitch, gpus,
        reinterpret_cast<W* const*>(outs), across);
    return cudaGetLastError();
  });
}

/// Where chunk (output row oc, first column orow) of step 08's vector tile goes: output row oc is
/// GPU g = owner(oc)'s row oc - first(g), and this GPU's row orow lands in its column
/// first_row + orow; outs[g] is GPU g's block, pitch elements a row.
template <int S>
struct OwnersOut {
  std::uint8_t* const* outs;
  std::int64_t cols, pitch, first_row;
  int gpus;
  __host__ __device__ std::uint8_t* operator()(std::int64_t oc, std::int64_t orow) const {
    const int g = block_owner(oc, cols, gpus);
    return outs[g] + ((oc - block_first(g, cols, gpus)) * pitch + first_row + orow) * S;
  }
};

/// Whether the vector kernel can take this GPU's block: every row it reads and every run it
/// writes starts on 16 bytes (the input's rows; the owners' rows, and this GPU's columns in them;
/// this GPU's rows in whole vectors). Every outs[g] must start on 16 bytes (the harness's do).
inline bool peer_vectors(std::size_t elem, const void* in, std::int64_t rows, std::int64_t cols,
                         std::int64_t first_row, std::int64_t out_pitch) {
  const auto on16 = [elem](std::int64_t n) { return n * static_cast<std::int64_t>(elem) % 16 == 0; };
  return reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && on16(cols) && on16(out_pitch) &&
         on16(first_row) && on16(rows);
}

/// Peer writes in 16-byte vectors where peer_vectors holds (step 08's vector kernel and tile for
/// the element size), else transpose_to_owners, one element per access. Same arguments as
/// launch_to_owners; @p vectors (optional) says which ran.
inline cudaError_t launch_vec_to_owners(std::size_t elem, const void* in, std::int64_t rows,
                                        std::int64_t cols, std::int64_t first_row,
                                        std::int64_t out_pitch, int gpus, void* const* outs,
                                        cudaStream_t stream, bool* vectors = nullptr) {
  const bool vec = rows >= 1 && cols >= 1 && peer_vectors(elem, in, rows, cols, first_row, out_pitch);
  if (vectors) *vectors = vec;
  if (!vec) return launch_to_owners<false>(elem, in, rows, cols, first_row, out_pitch, gpus, outs, stream);
  return by_size(elem, [&](auto size) {
    constexpr int S = decltype(size)::value;
    constexpr step08::TileSize t = step08::vector_tile(S);
    const std::int64_t blocks = step08::blocks_for(rows, cols, t);
    if (blocks < 0) return cudaErrorInvalidValue;
    step08::transpose_vec<S, t.rows, t.cols, OwnersOut<S>>
        <<<static_cast<unsigned>(blocks), step08::kThreads, 0, stream>>>(
            static_cast<const std::uint8_t*>(in),
            OwnersOut<S>{reinterpret_cast<std::uint8_t* const*>(outs), cols, out_pitch, first_row, gpus},
            rows, cols, step08::make_grid(rows, cols, t.rows, t.cols, S));
    return cudaGetLastError();
  });
}

}  // namespace step10
