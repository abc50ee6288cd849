// Step 08 - any shape, any element type: the scalar kernel, for what the vector kernel cannot
// take. When rows do not start on 16 bytes (a 4095 x 4097 matrix of any type), a thread can no
// longer move 16-byte vectors of whole rows, so this kernel moves one element per access: the
// padded tile of step 03, for any element size, with the tile order of the vector kernel. Every
// access stays coalesced (a warp reads 32 neighbours of a row and writes 32 neighbours of an
// output row), and with Cut every warp's write covers whole 32-byte sectors. The price is
// instruction count: 16 times the accesses of the vector kernel for bytes, 4 times for floats,
// so the kernel keeps everything else out of the way: whole tiles (all but the edges) skip every
// bounds test, offsets within a tile are small integers, and the cut is a mask, not a division.
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

/// A T x T tile of S-byte elements moved one element per access by 32 x 8 threads.
///
/// Cut: how output rows are cut. Without it, a tile writes output columns [r0, r0 + T) of each
/// of its output rows. When output rows do not start on a 32-byte sector (rows * S is not a
/// multiple of 32, as in a 4095 x 4097 float matrix), such a piece begins and ends inside a
/// sector that the next tile down writes the rest of, and those partly written sectors cost an
/// H100 about a quarter of its speed (see the lesson), although the DRAM traffic stays the same.
/// With Cut, the piece of output row o is shifted left by d(o) = (phase + o * rows) % kSector
/// elements so that it starts on a sector boundary; the pieces of consecutive tiles still meet
/// end to end, and the last tile row also writes what is left of each row. The shifted piece
/// reaches up to kSector - 1 rows above the tile, so with Cut the tile loads kLead more rows
/// (row i of the array is input row r0 - kLead + i).
///
/// The pad keeps a column of the tile spread over the banks: one 4-byte word per row for bytes
/// and halves (a row is then an odd number of words), one element for the wider types.
template <int S, int T, bool Cut>
struct ScalarTile {
  using E = typename Element<S>::type;
  static constexpr int kPad = S < 4 ? 4 / S : 1;
  static constexpr int kSector = 32 / S;                               // elements per sector
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kLead = !Cut ? 0 : kSector < kWarps ? kWarps : kSector;  // whole passes
  static constexpr int kArrayRows = kLead + T;
  // Loads in flight per thread, at most: all 18 of a 64 x 64 float tile's (with its lead rows).
  // More registers cost occupancy: batches of 24 made the 2-byte tile 15% slower on an H100.
  static constexpr int kInFlight = 18;
  using Array = E[kArrayRows][T + kPad];
  static_assert(T % 32 == 0, "a warp covers 32 columns");
  static_assert(kArrayRows % kWarps == 0, "every warp loads the same number of rows");

  /// Where an output buffer at @p out sits in its 32-byte sector, in elements.
  __host__ __device__ static int phase_of(const void* out) {
    return static_cast<int>(reinterpret_cast<std::uintptr_t>(out) / S % kSector);
  }

  /// True when the tile at (r0, c0), with its lead rows, lies wholly inside the matrix: then no
  /// access needs a bounds test.
  __host__ __device__ static bool whole(std::int64_t rows, std::int64_t cols, std::int64_t r0,
                                        std::int64_t c0) {
    return r0 >= kLead && r0 + T <= rows && c0 + T <= cols;
  }

  // The largest divisor of n that is at most limit.
  __host__ __device__ static constexpr int divisor_at_most(int n, int limit) {
    int d = limit < n ? limit : n;
    while (n % d != 0) --d;
    return d;
  }

  // Thread t = (x, y): a warp takes 32 neighbours of one row; 8 warps take 8 rows at a time.
  // The loads go in batches of up to kInFlight elements held in registers, then to shared
  // memory: written as load-store pairs, the compiler keeps only a couple of loads in flight per
  // thread, and a transpose lives on loads in flight. Whole: the tile is whole(), skip the tests.
  template <bool Whole>
  __host__ __device__ static void load(unsigned t, const E* __restrict__ in, std::int64_t rows,
                                       std::int64_t cols, std::int64_t r0, std::int64_t c0,
                                       Array& tile) {
    constexpr int kPerRow = T / 32;                                   // per thread and row
    constexpr int kRowSteps = kArrayRows / kWarps;                    // array rows per thread
    constexpr int kBatch = divisor_at_most(kRowSteps, kInFlight / kPerRow);  // rows per batch
    const int x = t % 32, y = t / 32;
    const std::int64_t top = r0 - kLead;                 // the input row of array row 0
    const std::int64_t first = (top + y) * cols + c0 + x;  // this thread's first element
#pragma unroll
    for (int b0 = 0; b0 < kRowSteps; b0 += kBatch) {
      E v[kBatch][kPerRow];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int i = y + kWarps * (b0 + b);
#pragma unroll
        for (int jj = 0; jj < kPerRow; ++jj) {
          const int j = x + 32 * jj;
          if (Whole || inside(rows, cols, top + i, c0 + j)) {
            v[b][jj] = in[first + (kWarps * (b0 + b)) * cols + 32 * jj];
          }
        }
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int i = y + kWarps * (b0 + b);
#pragma unroll
        for (int jj = 0; jj < kPerRow; ++jj) {
          const int j = x + 32 * jj;
          if (Whole || inside(rows, cols, top + i, c0 + j)) tile[i][j] = v[b][jj];
        }
      }
    }
  }

  // Output row c0 + i is input column c0 + i: read it down column i of the tile. Its piece is
  // output columns [r0 - d, r0 + T - d); the last tile row also writes [r0 + T - d, rows), which
  // is less than one sector.
  template <bool Whole>
  __host__ __device__ static void store(unsigned t, E* __restrict__ out, std::int64_t rows,
                                        std::int64_t cols, std::int64_t r0, std::int64_t c0,
                                        int phase, bool last_tile_row, const Array& tile) {
    const int x = t % 32, y = t / 32;
#pragma unroll
    for (int k = 0; k < T / kWarps; ++k) {
      const int i = y + kWarps * k;   // column i of the tile,
      const std::int64_t o = c0 + i;  // output row o
      const int d = shift(phase, o, rows);
      const std::int64_t at = o * rows + r0 - d;  // the output element of the piece's start
#pragma unroll
      for (int jj = 0; jj < T / 32; ++jj) {
        const int j = x + 32 * jj;  // within the piece
        if (Whole || inside(cols, rows, o, r0 - d + j)) out[at + j] = tile[kLead - d + j][i];
      }
      if (Cut && last_tile_row) {
        const int j = T + x;
        if (inside(cols, rows, o, r0 - d + j)) out[at + j] = tile[kLead - d + j][i];
      }
    }
  }

  // How far output row o's piece is shifted: d(o) with Cut, else 0. Only the low bits of
  // phase + o * rows matter, so 32-bit unsigned arithmetic (which wraps) gives them exactly.
  __host__ __device__ static int shift(int phase, std::int64_t o, std::int64_t rows) {
    if (!Cut) return 0;
    const auto at = static_cast<unsigned>(phase) +
                    static_cast<unsigned>(o) * static_cast<unsigned>(rows);
    return static_cast<int>(at & (kSector - 1));
  }

  // Element (r, c) of a rows x cols matrix exists.
  __host__ __device__ static bool inside(std::int64_t rows, std::int64_t cols, std::int64_t r,
                                         std::int64_t c) {
    return r >= 0 && r < rows && c >= 0 && c < cols;
  }
};

template <int S, int T, bool Cut>
__global__ void __launch_bounds__(kThreads)
    transpose_scalar(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                     std::int64_t rows, std::int64_t cols, TileGrid grid, int phase) {
  using Tile = ScalarTile<S, T, Cut>;
  using E = typename Tile::E;
  __shared__ typename Tile::Array tile;
  std::int64_t ty, tx;
  grid.tile(blockIdx.x, &ty, &tx);
  const std::int64_t r0 = ty * T, c0 = tx * T;
  const bool last = ty == grid.tiles_r - 1;
  const auto* src = reinterpret_cast<const E*>(in);
  auto* dst = reinterpret_cast<E*>(out);
  if (Tile::whole(rows, cols, r0, c0)) {  // the same for every thread of the block
    Tile::template load<true>(threadIdx.x, src, rows, cols, r0, c0, tile);
    __syncthreads();
    Tile::template store<true>(threadIdx.x, dst, rows, cols, r0, c0, phase, last, tile);
  } else {
    Tile::template load<false>(threadIdx.x, src, rows, cols, r0, c0, tile);
    __syncthreads();
    Tile::template store<false>(threadIdx.x, dst, rows, cols, r0, c0, phase, last, tile);
  }
}

}  // namespace step08
