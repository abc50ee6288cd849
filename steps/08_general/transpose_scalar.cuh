// Step 08 - any shape, any element type: the scalar kernel, which the launcher takes for 4- and
// 8-byte elements on any rows (plan.hpp; bytes and halves take transpose_shift.cuh, and the
// table still runs this kernel for them). What changed since step 07: one element of any size per
// access, in step 03's padded tile with the vector kernel's tile order; and Cut, which cuts each
// output row on its own 32-byte sectors instead of at the tile's edge, so that no sector has
// two writers. One element per access costs instructions, so whole tiles skip every bounds
// test, offsets within a tile are small integers, and the cut is a mask, not a division.
//
//   make step08 && ./step08 --type i8 --rows 4095 --cols 4097
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "tile_layout.cuh"

namespace step08 {

/// The type that moves one S-byte element.
template <int S> struct Element;
template <> struct Element<1> { using type = std::uint8_t; };
template <> struct Element<2> { using type = std::uint16_t; };
template <> struct Element<4> { using type = std::uint32_t; };
template <> struct Element<8> { using type = uint2; };
template <> struct Element<16> { using type = uint4; };

/// A T x T tile of S-byte elements, one per access, 32 x 8 threads. Cut: without it a tile writes
/// output columns [r0, r0 + T) of its output rows, and where those rows do not start on a 32-byte
/// sector, each piece begins and ends inside sectors that the next tile down writes the rest of.
/// With Cut, the piece of output row o is shifted left by d(o) = (phase + o * rows) % kSector
/// elements to start on a sector boundary; the pieces of consecutive tiles still meet end to end,
/// and the last tile row also writes what is left of each row. The shifted piece reaches up to
/// kSector - 1 rows above the tile, so with Cut the tile loads kLead more rows (array row i is
/// input row r0 - kLead + i). The pad spreads a column over the banks: one 4-byte word per row
/// for bytes and halves (a row is then an odd number of words), one element for the wider types.
template <int S, int T, bool Cut>
struct ScalarTile {
  using E = typename Element<S>::type;
  static constexpr int kPad = S < 4 ? 4 / S : 1;
  static constexpr int kSector = 32 / S;                               // elements per sector
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kLead = !Cut ? 0 : kSector < kWarps ? kWarps : kSector;  // whole passes
  static constexpr int kArrayRows = kLead + T;
  static constexpr int kInFlight = 18;  // loads in flight per thread: a 64x64 float tile's all
  using Array = E[kArrayRows][T + kPad];
  static_assert(T % 32 == 0, "a warp covers 32 columns");
  static_assert(kArrayRows % kWarps == 0, "every warp loads the same number of rows");

  /// Where an output buffer at @p out sits in its 32-byte sector, in elements.
  __host__ __device__ static int phase_of(const void* out) {
    return static_cast<int>(reinterpret_cast<std::uintptr_t>(out) / S % kSector);
  }

  /// The tile at (r0, c0) and its lead rows lie wholly inside the matrix: no bounds tests.
  __host__ __device__ static bool whole(std::int64_t rows, std::int64_t cols, std::int64_t r0,
                                        std::int64_t c0) {
    return r0 >= kLead && r0 + T <= rows && c0 + T <= cols;
  }

  // Thread t = (x, y): a warp takes 32 neighbours of one row, 8 warps 8 rows at a time. Loads go
  // in batches of up to kInFlight elements in registers, then to shared memory: written as
  // load-store pairs, the compiler keeps only a couple of loads in flight per thread, and a
  // transpose lives on loads in flight. Whole: the tile is whole(), skip the tests.
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

  // Output row c0 + i is input column c0 + i, read down column i of the tile. Its piece is output
  // columns [r0 - d, r0 + T - d); the last tile row also writes [r0 + T - d, rows) (< a sector).
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

  // d(o) with Cut, else 0. Only the low bits of phase + o * rows matter: 32-bit unsigned
  // arithmetic, which wraps, gives them exactly.
  __host__ __device__ static int shift(int phase, std::int64_t o, std::int64_t rows) {
    if (!Cut) return 0;
    const auto at = static_cast<unsigned>(phase) +
                    static_cast<unsigned>(o) * static_cast<unsigned>(rows);
    return static_cast<int>(at & (kSector - 1));
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
