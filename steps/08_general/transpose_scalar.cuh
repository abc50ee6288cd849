// Step 08 - any shape, any element type: the scalar kernel, for what the vector kernel cannot
// take. When rows do not start on 16 bytes (a 4095 x 4097 matrix of any type), a thread can no
// longer move 16-byte vectors of whole rows, so this kernel moves one element per access: the
// padded tile of step 03, for any element size, with the tile order of the vector kernel. Every
// access stays coalesced (a warp reads 32 neighbours of a row and writes 32 neighbours of an
// output row), and every warp's write covers whole 32-byte sectors (OutCut). The price is
// instruction count: 16 times the accesses of the vector kernel for bytes, 4 times for floats.
// It is also the reference row of the step's table for every type.
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

/// How a scalar tile cuts its output rows. When output rows do not start on a 32-byte sector
/// (rows * S is not a multiple of 32, as in a 4095 x 4097 float matrix), a tile's piece of an
/// output row begins and ends inside a sector that the next tile down writes the rest of. Those
/// partly written sectors cost an H100 about a quarter of its speed (see the lesson), although
/// the DRAM traffic stays the same. Realigned, the piece of output row o is shifted left by
/// d(o) = (phase + o * rows) % kSector elements, so that it starts on a sector boundary; the
/// pieces of consecutive tiles still meet end to end, and the last tile row also takes what is
/// left of each row.
struct OutCut {
  bool realign = false;  ///< shift each output row's piece onto the row's sectors
  int phase = 0;         ///< the output buffer's offset in its sector, in elements
};

/// A T x T tile of S-byte elements moved one element per access by 32 x 8 threads. The pad
/// keeps a column of the tile spread over the banks: one 4-byte word per row for bytes and halves
/// (a row is then an odd number of words), one element for the wider types. Above the tile sit
/// kLead more input rows (row i of the array is input row r0 - kLead + i), which a realigned cut
/// reaches into; they are loaded only when the cut realigns.
template <int S, int T>
struct ScalarTile {
  using E = typename Element<S>::type;
  static constexpr int kPad = S < 4 ? 4 / S : 1;
  static constexpr int kSector = 32 / S;                       // elements per 32-byte sector
  static constexpr int kLead = kSector < 8 ? 8 : kSector;      // whole passes of the 8 warps
  static constexpr int kArrayRows = kLead + T;
  using Array = E[kArrayRows][T + kPad];
  static_assert(T % 32 == 0, "a warp covers 32 columns");

  /// The cut for an output buffer at @p out: realigned or not, and where out sits in its sector.
  __host__ __device__ static OutCut cut_for(bool realign, const void* out) {
    return {realign, static_cast<int>(reinterpret_cast<std::uintptr_t>(out) / S % kSector)};
  }

  // The largest divisor of n that is at most limit.
  __host__ __device__ static constexpr int divisor_at_most(int n, int limit) {
    int d = limit < n ? limit : n;
    while (n % d != 0) --d;
    return d;
  }

  // Thread t = (x, y): a warp takes 32 neighbours of one row; 8 warps take 8 rows at a time.
  // The loads go in batches of up to 16 elements held in registers, then to shared memory:
  // written as load-store pairs, the compiler keeps only a couple of loads in flight per thread,
  // and a transpose lives on loads in flight.
  __host__ __device__ static void load(unsigned t, const E* __restrict__ in, std::int64_t rows,
                                       std::int64_t cols, std::int64_t r0, std::int64_t c0,
                                       OutCut cut, Array& tile) {
    constexpr int kPerRow = T / 32;                                  // per thread and row
    constexpr int kRowSteps = kArrayRows / (kThreads / 32);          // array rows per thread
    constexpr int kBatch = divisor_at_most(kRowSteps, 16 / kPerRow);  // rows per batch
    const std::int64_t lead_from = r0 < kLead ? 0 : r0 - kLead;       // (no rows above row 0)
    const std::int64_t first = cut.realign ? lead_from : r0;         // first input row needed
    const std::int64_t col_limit = cols - c0 < T ? cols - c0 : T;
    const int x = t % 32, y = t / 32;
#pragma unroll
    for (int b0 = 0; b0 < kRowSteps; b0 += kBatch) {
      E v[kBatch][kPerRow];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int i = y + (kThreads / 32) * (b0 + b);
        const std::int64_t r = r0 - kLead + i;
        const E* src = in + r * cols + c0;
#pragma unroll
        for (int jj = 0; jj < kPerRow; ++jj) {
          const int j = x + 32 * jj;
          if (r >= first && r < rows && j < col_limit) v[b][jj] = src[j];
        }
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int i = y + (kThreads / 32) * (b0 + b);
        const std::int64_t r = r0 - kLead + i;
#pragma unroll
        for (int jj = 0; jj < kPerRow; ++jj) {
          const int j = x + 32 * jj;
          if (r >= first && r < rows && j < col_limit) tile[i][j] = v[b][jj];
        }
      }
    }
  }

  // Output row c0 + i is input column c0 + i: read it down column i of the tile. Its piece is
  // output columns [r0 - d, r0 + T - d), or up to the end of the row for the last tile row.
  __host__ __device__ static void store(unsigned t, E* __restrict__ out, std::int64_t rows,
                                        std::int64_t cols, std::int64_t r0, std::int64_t c0,
                                        OutCut cut, bool last_tile_row, const Array& tile) {
    const std::int64_t col_limit = cols - c0 < T ? cols - c0 : T;
    const int x = t % 32, y = t / 32;
#pragma unroll
    for (int i = y; i < T; i += kThreads / 32) {
      const std::int64_t o = c0 + i;  // the output row
      const int d = cut.realign ? static_cast<int>((cut.phase + o * rows) % kSector) : 0;
      const std::int64_t begin = r0 - d, end = last_tile_row ? rows : r0 + T - d;
      E* dst = out + o * rows;
#pragma unroll
      for (int jj = 0; jj <= T / 32; ++jj) {  // T / 32 pieces of 32, one more for the last row
        const std::int64_t j = begin + x + 32 * jj;
        if (i < col_limit && j >= 0 && j < end) dst[j] = tile[j - r0 + kLead][i];
      }
    }
  }
};

template <int S, int T>
__global__ void __launch_bounds__(kThreads)
    transpose_scalar(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                     std::int64_t rows, std::int64_t cols, TileGrid grid, OutCut cut) {
  using Tile = ScalarTile<S, T>;
  using E = typename Tile::E;
  __shared__ typename Tile::Array tile;
  std::int64_t ty, tx;
  grid.tile(blockIdx.x, &ty, &tx);
  Tile::load(threadIdx.x, reinterpret_cast<const E*>(in), rows, cols, ty * T, tx * T, cut, tile);
  __syncthreads();
  Tile::store(threadIdx.x, reinterpret_cast<E*>(out), rows, cols, ty * T, tx * T, cut,
              ty == grid.tiles_r - 1, tile);
}

}  // namespace step08
