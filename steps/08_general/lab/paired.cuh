// Step 08's lab - paired stores for halves: the lesson's scalar kernel (transpose_scalar.cuh)
// with a store half of its own for 2-byte elements. The lesson's store writes one half a thread,
// 64 bytes (2 sectors) a warp store request, and on rows off 16 bytes its warps wait on the full
// load/store queue twice as often as on memory (LAB.md, "The stall reasons, past the L2"). Here
// a thread writes two neighbouring halves of an output row as one 4-byte store: 128 bytes (4
// sectors) a request, half the store instructions. The tile, its load half and the cut are the
// lesson's, taken through launch_scalar's TileOf.
//
//   make step08-lab && ./step08-lab --type f16 --rows 12345 --cols 6789 --only scalar-pairs
#pragma once

#include <cstdint>

#include "transpose.cuh"

namespace step08 {

/// ScalarTile<2, T, Cut> whose store writes pairs. With Cut each output row's piece starts on a
/// sector, so each even element of it starts on 4 bytes; without, only where the output rows
/// start on 4 bytes (the launcher cuts unless they start on sectors). A pair not wholly inside
/// the matrix, or not on 4 bytes, is written one half at a time.
template <int S, int T, bool Cut>
struct PairedTile : ScalarTile<S, T, Cut> {
  using Base = ScalarTile<S, T, Cut>;
  using E = typename Base::E;
  using Array = typename Base::Array;
  static_assert(S == 2, "two halves make one 4-byte store");
  static_assert(T % 64 == 0, "a warp writes 64 halves of a piece at a time");

  /// Which element of its pair lane x reads first from shared memory: 0 in the lower half-warp,
  /// 1 in the upper. Array rows are T / 2 + 1 words apart (the lesson's pad of one word), one
  /// more than a multiple of 32, so row r sits in bank (r + a constant) mod 32. Reading each
  /// lane's even row first, lanes x and x + 16 (rows 2x and 2x + 32) would share a bank: two
  /// ways, twice the lesson's wavefronts. Odd rows first in the upper half put each read's 32
  /// lanes on 32 banks, for two selects. (A pad of one half, rows of T + 1 halves, would do it
  /// too, but ScalarTile fixes its pad, and the lesson's one row a lane reads, kept here at the
  /// matrix's edges, would then conflict two ways.)
  __host__ __device__ static constexpr int first_read(int x) { return x / 16; }

  /// One output row's piece: where it starts in the output and in the tile.
  struct Piece {
    std::int64_t o, start, at;  // the output row, the column the piece starts at, that element
    int top, i;                 // the array row of the piece's start, the tile's column
    bool even;                  // the piece starts on 4 bytes
  };

  // Lane x writes elements 2x and 2x + 1 of a piece, then 64 further on, as the lesson's store
  // writes element x: the same pieces, the same rest [r0 + T - d, rows) in the last tile row.
  template <bool Whole>
  __host__ __device__ static void store(unsigned t, E* __restrict__ out, std::int64_t rows,
                                        std::int64_t cols, std::int64_t r0, std::int64_t c0,
                                        int phase, bool last, const Array& tile) {
    const int x = t % 32, y = t / 32, odd_first = first_read(x);
#pragma unroll
    for (int k = 0; k < T / Base::kWarps; ++k) {
      const int i = y + Base::kWarps * k;  // column i of the tile: output row c0 + i
      const std::int64_t o = c0 + i;
      const int d = Base::shift(phase, o, rows);
      const std::int64_t at = o * rows + r0 - d;
      // phase: where the output starts in its sector, so phase + at is the element's address
      const Piece p{o, r0 - d, at, Base::kLead - d, i, Cut || (phase + at) % 2 == 0};
#pragma unroll
      for (int jj = 0; jj < T / 64; ++jj) {
        put<Whole>(out, rows, cols, p, 2 * x + 64 * jj, odd_first, tile);
      }
      // The rest has fewer than kSector elements: kSector / 2 pairs cover it.
      if (Cut && last && x < Base::kSector / 2) {
        put<false>(out, rows, cols, p, T + 2 * x, odd_first, tile);
      }
    }
  }

  /// Elements j and j + 1 of piece @p p: one 4-byte store where both are in the matrix and the
  /// pair starts on 4 bytes, else each that is in the matrix alone. The element at the lower
  /// address is the word's low half (GPUs and x86 CPUs are little-endian).
  template <bool Whole>
  __host__ __device__ static void put(E* __restrict__ out, std::int64_t rows, std::int64_t cols,
                                      const Piece& p, int j, int odd_first, const Array& tile) {
    const bool first = Whole || inside(cols, rows, p.o, p.start + j);
    const bool second = Whole || inside(cols, rows, p.o, p.start + j + 1);
    if (first && second && p.even) {
      const std::uint32_t a = tile[p.top + j + odd_first][p.i];  // read first
      const std::uint32_t b = tile[p.top + j + 1 - odd_first][p.i];
      const std::uint32_t low = odd_first ? b : a, high = odd_first ? a : b;
      store_unit(out + p.at + j, low | high << 16);  // traps on the CPU if not on 4 bytes
    } else {
      if (first) out[p.at + j] = tile[p.top + j][p.i];
      if (second) out[p.at + j + 1] = tile[p.top + j + 1][p.i];
    }
  }
};

}  // namespace step08
