// Step 08, part 1 - any shape: the scalar kernel, one S-byte element per access, for 4- and
// 8-byte elements on every shape. Since step 07, whose float4s needed rows that start on 16
// bytes: step 03's padded tile for any element size, bounds tests in edge tiles only, loads
// batched in registers, 64-bit offsets, and the cut: each output row cut on its own 32-byte
// sectors instead of at the tile's edge, so that no sector has two writers.
//   make step08 && ./step08 --rows 4095 --cols 4097
#pragma once

#include <cstdint>

#include "tile_grid.cuh"

namespace step08 {

/// Element (r, c) of a rows x cols matrix exists.
__host__ __device__ inline bool inside(std::int64_t rows, std::int64_t cols, std::int64_t r,
                                       std::int64_t c) {
  return r >= 0 && r < rows && c >= 0 && c < cols;
}
/// The largest divisor of n that is at most limit (whole batches of loads).
__host__ __device__ constexpr int divisor_at_most(int n, int limit) {
  int d = limit < n ? limit : n;
  while (n % d != 0) --d;
  return d;
}

/// A T x T tile of S-byte elements, 32 x 8 threads. Without Cut, a tile writes output columns
/// [r0, r0 + T) of its output rows. With Cut, output row o's piece moves left by its shift
/// d(o) elements, to start on a sector: the tile then needs up to kSector - 1 input rows above
/// its own, so it loads kLead more rows (array row i holds input row r0 - kLead + i). The pad
/// spreads a column over the banks (one word per row for bytes and halves, else one element).
template <int S, int T, bool Cut>
struct ScalarTile {
  using E = typename Element<S>::type;
  static constexpr int kPad = S < 4 ? 4 / S : 1;
  static constexpr int kSector = 32 / S;                               // elements per sector
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kLead = !Cut ? 0 : kSector < kWarps ? kWarps : kSector;  // whole passes
  static constexpr int kArrayRows = kLead + T;
  static constexpr int kInFlight = 18;  // in flight per thread: a cut 64x64 tile's 72 rows, all
  using Array = E[kArrayRows][T + kPad];
  static_assert(T % 32 == 0, "a warp covers 32 columns");
  static_assert(kArrayRows % kWarps == 0, "every warp loads the same number of rows");

  /// The tile at (r0, c0) and its lead rows lie wholly inside the matrix: no bounds tests.
  __host__ __device__ static bool whole(std::int64_t rows, std::int64_t cols, std::int64_t r0,
                                        std::int64_t c0) {
    return r0 >= kLead && r0 + T <= rows && c0 + T <= cols;
  }

  // Thread t = (x, y): a warp takes 32 neighbours of one row, 8 warps 8 rows at a time. Loads go
  // into registers in batches of whole rows, at most kInFlight loads and a divisor of the thread's
  // rows, then to shared memory (load-store pairs keep ~2).
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

  // Output row o = c0 + i, column i of the tile: its piece is output columns [r0 - d, r0 + T - d)
  // (the last tile row also writes the rest, [r0 + T - d, rows)).
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

  // d(o) = (phase + o * rows) mod kSector with Cut, else 0. kSector is a power of two, so the
  // low bits of 32-bit unsigned arithmetic, which wraps, are exact: a mask, no 64-bit division.
  __host__ __device__ static int shift(int phase, std::int64_t o, std::int64_t rows) {
    if (!Cut) return 0;
    const auto at = static_cast<unsigned>(phase) +
                    static_cast<unsigned>(o) * static_cast<unsigned>(rows);
    return static_cast<int>(at & (kSector - 1));
  }
};

/// Where block @p b's T x T tile starts (row, column), and whether it is in the last row of tiles.
struct TileAt { std::int64_t r0, c0; bool last; };
template <int T>
__device__ TileAt tile_at(const TileGrid& grid, std::uint32_t b) {
  std::int64_t ty, tx;
  grid.tile(b, &ty, &tx);
  return {ty * T, tx * T, ty == grid.tiles_r - 1};
}

template <int S, int T, bool Cut, template <int, int, bool> class TileOf = ScalarTile>
__global__ void __launch_bounds__(kThreads)
    transpose_scalar(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                     std::int64_t rows, std::int64_t cols, TileGrid grid, int phase) {
  using Tile = TileOf<S, T, Cut>;
  using E = typename Tile::E;
  __shared__ typename Tile::Array tile;
  const auto [r0, c0, last] = tile_at<T>(grid, blockIdx.x);
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

/// Transposes rows x cols S-byte elements in T x T TileOf tiles (ScalarTile, or a lab's), output
/// rows @p cut on their sectors or not. cudaErrorInvalidValue, and no launch, past 2^31 - 1 tiles.
template <int S, int T, template <int, int, bool> class TileOf = ScalarTile>
cudaError_t launch_scalar(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                          bool cut, cudaStream_t stream) {
  if (blocks_for(rows, cols, {T, T}) < 0) return cudaErrorInvalidValue;
  const TileGrid grid = make_grid(rows, cols, T, T, S);
  auto kernel = cut ? transpose_scalar<S, T, true, TileOf> : transpose_scalar<S, T, false, TileOf>;
  // phase: where the output buffer starts in its sector, in elements
  const int phase = static_cast<int>(reinterpret_cast<std::uintptr_t>(out) / S % (32 / S));
  kernel<<<static_cast<unsigned>(grid.tiles()), kThreads, 0, stream>>>(
      static_cast<const std::uint8_t*>(in), static_cast<std::uint8_t*>(out), rows, cols, grid,
      phase);
  return cudaGetLastError();
}

}  // namespace step08
