// Step 08 - any shape, any element type: the scalar kernel, for what the vector kernel cannot
// take. When rows of 1- or 2-byte elements do not start on 16 bytes (a 4095 x 4097 int8 matrix),
// the k rows a thread would pack no longer line up, so this kernel moves one element per access:
// the padded tile of step 03, for any element size, with the tile order of the vector kernel.
// Every access stays coalesced (a warp reads 32 neighbours of a row and writes 32 neighbours of
// an output row); the price is instruction count: 16 times the accesses of the vector kernel for
// bytes, 8 times for halves. It is also the reference row of the step's table for every type.
//
//   make step08 && ./step08 --type i8 --rows 4095 --cols 4097
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tile_layout.cuh"

namespace step08 {

/// The type that moves one S-byte element.
template <int S>
struct Element;
template <> struct Element<1> { using type = std::uint8_t; };
template <> struct Element<2> { using type = std::uint16_t; };
template <> struct Element<4> { using type = std::uint32_t; };
template <> struct Element<8> { using type = uint2; };
template <> struct Element<16> { using type = uint4; };

/// A T x T tile of S-byte elements moved one element per access by 32 x 8 threads. The pad
/// keeps a column of the tile spread over the banks: one 4-byte word per row for bytes and halves
/// (a row is then an odd number of words), one element for the wider types.
template <int S, int T>
struct ScalarTile {
  using E = typename Element<S>::type;
  static constexpr int kPad = S < 4 ? 4 / S : 1;
  using Array = E[T][T + kPad];
  static_assert(T % 32 == 0, "a warp covers 32 columns");

  // Thread t = (x, y): a warp takes 32 neighbours of one row; 8 warps take 8 rows at a time.
  // The loads go in batches of 16 elements held in registers, then to shared memory: written
  // as load-store pairs, the compiler keeps only a couple of loads in flight per thread, and a
  // transpose lives on loads in flight.
  __host__ __device__ static void load(unsigned t, const E* __restrict__ in, std::int64_t rows,
                                       std::int64_t cols, std::int64_t r0, std::int64_t c0,
                                       Array& tile) {
    constexpr int kPerRow = T / 32;                   // elements of one tile row per thread
    constexpr int kRowSteps = T / (kThreads / 32);    // tile rows per thread
    constexpr int kBatch = kRowSteps < 16 / kPerRow ? kRowSteps : 16 / kPerRow;  // rows per batch
    static_assert(kRowSteps % kBatch == 0, "whole batches");
    const std::int64_t row_limit = rows - r0 < T ? rows - r0 : T;
    const std::int64_t col_limit = cols - c0 < T ? cols - c0 : T;
    const int x = t % 32, y = t / 32;
#pragma unroll
    for (int b0 = 0; b0 < kRowSteps; b0 += kBatch) {
      E v[kBatch][kPerRow];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int i = y + (kThreads / 32) * (b0 + b);
        const E* src = in + (r0 + i) * cols + c0;
#pragma unroll
        for (int jj = 0; jj < kPerRow; ++jj) {
          const int j = x + 32 * jj;
          if (i < row_limit && j < col_limit) v[b][jj] = src[j];
        }
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int i = y + (kThreads / 32) * (b0 + b);
#pragma unroll
        for (int jj = 0; jj < kPerRow; ++jj) {
          const int j = x + 32 * jj;
          if (i < row_limit && j < col_limit) tile[i][j] = v[b][jj];
        }
      }
    }
  }

  // Output row c0 + i is input column c0 + i: read it down column i of the tile.
  __host__ __device__ static void store(unsigned t, E* __restrict__ out, std::int64_t rows,
                                        std::int64_t cols, std::int64_t r0, std::int64_t c0,
                                        const Array& tile) {
    const std::int64_t row_limit = rows - r0 < T ? rows - r0 : T;
    const std::int64_t col_limit = cols - c0 < T ? cols - c0 : T;
    const int x = t % 32, y = t / 32;
#pragma unroll
    for (int i = y; i < T; i += kThreads / 32) {
      E* dst = out + (c0 + i) * rows + r0;
#pragma unroll
      for (int j = x; j < T; j += 32) {
        if (i < col_limit && j < row_limit) dst[j] = tile[j][i];
      }
    }
  }
};

template <int S, int T>
__global__ void __launch_bounds__(kThreads)
    transpose_scalar(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                     std::int64_t rows, std::int64_t cols, TileGrid grid) {
  using Tile = ScalarTile<S, T>;
  using E = typename Tile::E;
  __shared__ typename Tile::Array tile;
  std::int64_t ty, tx;
  grid.tile(blockIdx.x, &ty, &tx);
  Tile::load(threadIdx.x, reinterpret_cast<const E*>(in), rows, cols, ty * T, tx * T, tile);
  __syncthreads();
  Tile::store(threadIdx.x, reinterpret_cast<E*>(out), rows, cols, ty * T, tx * T, tile);
}

}  // namespace step08
