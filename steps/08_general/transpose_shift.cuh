// Step 08, part 3 - bytes on rows that start anywhere: 16-byte vectors shifted into place. Since
// transpose_vec.cuh, which needs rows on 16 bytes: a lane loads the ALIGNED vector that holds the
// start of its 16 bytes of a row, takes the next from its neighbour lane and shifts the pair by
// the row's offset (shift.cuh). Output rows are cut on their sectors as in part 1.
//   make step08 && ./step08 --type i8 --rows 4095 --cols 4097
#pragma once

#include <cstdint>

#include "shift.cuh"
#include "transpose_vec.cuh"

namespace step08 {

/// A TR x TC tile of S = 1 or 2-byte elements on rows that start anywhere. The array holds
/// input rows top.r0 .. top.r0 + TR - 1 (the first `lead` of them above the tile's own rows).
template <int S, int TR, int TC>
struct ShiftTile {
  using L = TileShape<S, TR, TC>;
  static constexpr int V = L::kVec, k = L::kPack, P = L::kLoadPasses, Q = L::kOutChunks;
  static constexpr int kSector = 32 / S;  // elements per 32-byte sector
  static constexpr int kLead = kSector;   // rows loaded above the tile when writes are cut
  static_assert(S == 1 || S == 2, "wider elements need no packing (the scalar kernel)");
  static_assert((TR - kLead) % kSector == 0, "a tile's pieces are whole sectors");

  struct Fetched {
    Vec16 v[P][k];     ///< the aligned vector holding this lane's 16 bytes of each row
    Vec16 next[P][k];  ///< the one after: the last lane of each 8 loads it, the others shuffle
    unsigned m[P][k];  ///< the row's offset from 16 bytes: the shift
  };

  /// No test needed: every row and aligned vector inside, not the last tile row (as Full, part 2).
  __host__ __device__ static bool full(std::uintptr_t in, std::int64_t rows, std::int64_t cols,
                                       Corner top, bool last) {
    if (last || top.r0 < 0 || top.r0 + TR > rows || top.c0 + TC > cols) return false;
    const std::int64_t first = (top.r0 * cols + top.c0) * S;           // the tile's first byte
    const std::int64_t end = ((top.r0 + TR - 1) * cols + top.c0 + TC) * S;  // past its last
    return first >= 16 - static_cast<std::int64_t>(in % 16) && end + 16 <= rows * cols * S;
  }

  // Thread t: the same slots as load_aligned (8 lanes along a row, 4 unit rows per warp).
  template <bool Full>
  __host__ __device__ static void fetch(unsigned t, const std::uint8_t* __restrict__ in,
                                        std::int64_t rows, std::int64_t cols, Corner top,
                                        Fetched& f) {
    const std::uint8_t* const end = in + rows * cols * S;
    const std::int64_t col_end = top.c0 + TC < cols ? top.c0 + TC : cols;
#pragma unroll
    for (int p = 0; p < P; ++p) {
      const Slot s = load_slot(L::kInVecs, t, p);
#pragma unroll
      for (int i = 0; i < k; ++i) {
        const std::int64_t r = top.r0 + s.row * k + i;
        const std::uint8_t* row = in + r * cols * S;
        const std::uint8_t* at = row + (top.c0 + s.vec * V) * S;
        f.m[p][i] = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(at) % 16);
        const std::uint8_t *a = at - f.m[p][i], *piece_end = row + col_end * S;  // a: on 16 B
        if (Full) {  // no test: every vector is in the buffer, every row in the matrix
          f.v[p][i] = load16(a);
          f.next[p][i] = t % 8 == 7 ? load16(a + 16) : Vec16{};
          continue;
        }
        const bool ok = r >= 0 && r < rows && a < piece_end;
        f.v[p][i] = ok ? load16_within(a, in, end) : Vec16{};
        const bool more = ok && t % 8 == 7 && f.m[p][i] != 0 && a + 16 < piece_end;
        f.next[p][i] = more ? load16_within(a + 16, in, end) : Vec16{};
      }
    }
  }

  /// Lane t's next vectors are lane t + 1's: a shuffle within each 8 lanes (a row's 128 bytes).
  __device__ static void from_next_lane(unsigned t, Fetched& f) {
#pragma unroll
    for (int p = 0; p < P; ++p)
#pragma unroll
      for (int i = 0; i < k; ++i)
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          const std::uint32_t x = __shfl_down_sync(~0u, f.v[p][i].w[w], 1, 8);
          if (t % 8 != 7) f.next[p][i].w[w] = x;
        }
  }

  // Shift each row into place, then pack and scatter exactly as load_aligned does.
  __host__ __device__ static void pack(unsigned t, const Fetched& f, std::int64_t cols, Corner top,
                                       std::uint8_t* tile) {
    using Unit = typename Pack<S>::Unit;
#pragma unroll
    for (int p = 0; p < P; ++p) {
      const Slot s = load_slot(L::kInVecs, t, p);
      if (top.c0 + s.vec * V >= cols) continue;
      Vec16 v[k];
#pragma unroll
      for (int i = 0; i < k; ++i) v[i] = shift_bytes(f.v[p][i], f.next[p][i], f.m[p][i]);
      Unit u[V];
      Pack<S>::to_units(v, u);
      std::uint8_t* dst = tile + L::unit_offset(s.vec * V, s.row);
#pragma unroll
      for (int e = 0; e < V; ++e) store_unit(dst + e * L::kRowBytes, u[e]);
    }
  }

  /// The output vector of thread t in store pass p: output elements first .. first + V - 1, of
  /// which [lo, hi) are this tile's (none when lo >= hi), read from byte `smem` of tile row c.
  struct Piece { std::int64_t first; int lo, hi, c; unsigned smem; };

  // Output row o = c0 + c is cut at sectors: the tile writes its elements [s0 - d, s0 + TR -
  // lead - d), d = (phase + o * rows) mod kSector, and the last tile row the rest of the row.
  template <bool Full>
  __host__ __device__ static Piece piece(unsigned t, int p, std::int64_t rows, std::int64_t cols,
                                         Corner top, int lead, int phase, bool last) {
    const unsigned f = t + kThreads * p;
    const int c = static_cast<int>(f / Q), q = static_cast<int>(f % Q);
    const std::int64_t o = top.c0 + c, s0 = top.r0 + lead;
    const int d = lead == 0 ? 0 : static_cast<int>((static_cast<unsigned>(phase) +
                                   static_cast<unsigned>(o) * static_cast<unsigned>(rows)) &
                                  (kSector - 1));
    const std::int64_t j0 = s0 - d + q * V;                        // first element of the vector
    const std::int64_t stop = last ? rows : s0 + (TR - lead) - d;  // end of the tile's piece
    Piece x{o * rows + j0, 0, 0, c, static_cast<unsigned>((lead - d + q * V) * S)};
    if (Full) x.hi = q * V < TR - lead ? V : 0;  // j0 >= 0, the piece whole vectors
    if (Full || o >= cols) return x;
    x.lo = static_cast<int>(j0 < 0 ? -j0 : 0);
    x.hi = static_cast<int>(stop - j0 < V ? stop - j0 : V);
    return x;
  }

  template <bool Full>
  __host__ __device__ static void store(unsigned t, std::uint8_t* __restrict__ out,
                                        std::int64_t rows, std::int64_t cols, Corner top, int lead,
                                        int phase, bool last, const std::uint8_t* tile) {
#pragma unroll
    for (int p = 0; p < TC * Q / kThreads; ++p) {
      const Piece x = piece<Full>(t, p, rows, cols, top, lead, phase, last);
      if (x.lo >= x.hi) continue;
      const unsigned ch = x.smem / 16, m = x.smem % 16;
      const Vec16 lo = load16(tile + L::chunk_offset(x.c, ch));
      const Vec16 hi = m != 0 && ch + 1 < Q ? load16(tile + L::chunk_offset(x.c, ch + 1)) : lo;
      const Vec16 v = shift_bytes(lo, hi, m);
      std::uint8_t* dst = out + x.first * S;
      if (Full || (x.lo == 0 && x.hi == V)) store16(dst, v);
      else for (int e = x.lo; e < x.hi; ++e) {  // a row's first or last vector: shared, so narrow
        const std::uint32_t word = v.w[e * S / 4] >> (8 * (e * S % 4));
        if constexpr (S == 1) store_unit(dst + e, static_cast<std::uint8_t>(word));
        else store_unit(dst + 2 * e, static_cast<std::uint16_t>(word));
      }
    }
  }

  /// A block's whole tile; Full (a block-wide choice, so the barrier is safe): tested nowhere.
  template <bool Full>
  __device__ static void run(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                             std::int64_t rows, std::int64_t cols, Corner top, int lead, int phase,
                             bool last, std::uint8_t* tile) {
    Fetched f;
    fetch<Full>(threadIdx.x, in, rows, cols, top, f);
    from_next_lane(threadIdx.x, f);
    pack(threadIdx.x, f, cols, top, tile);
    __syncthreads();
    store<Full>(threadIdx.x, out, rows, cols, top, lead, phase, last, tile);
  }
};

/// One tile per block; tiles step down by TR - lead input rows (lead: kLead with the cut, or 0).
/// MIN_BLOCKS: the blocks per SM the launch bounds ask for (the lab tries 3; 0 asks nothing).
/// UNTESTED: full tiles skip the tests (the lab's `-tested` rows test every tile, as before).
template <int S, int TR, int TC, int MIN_BLOCKS = 0, bool UNTESTED = true>
__global__ void __launch_bounds__(kThreads, MIN_BLOCKS)
    transpose_shift(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                    std::int64_t rows, std::int64_t cols, TileGrid grid, int lead, int phase) {
  using Tile = ShiftTile<S, TR, TC>;
  __shared__ __align__(16) std::uint8_t tile[Tile::L::kBytes];
  std::int64_t ty, tx;
  grid.tile(blockIdx.x, &ty, &tx);
  const Corner top{ty * (TR - lead) - lead, tx * TC};
  const bool last = ty == grid.tiles_r - 1;
  if (UNTESTED && Tile::full(reinterpret_cast<std::uintptr_t>(in), rows, cols, top, last))
    Tile::template run<true>(in, out, rows, cols, top, lead, phase, last, tile);
  else
    Tile::template run<false>(in, out, rows, cols, top, lead, phase, last, tile);
}

/// Transposes rows x cols S-byte elements (1 or 2) on any rows in TR x TC tiles, output rows
/// @p cut on their sectors or not. cudaErrorInvalidValue, and no launch, past 2^31 - 1 tiles.
template <int S, int TR, int TC, int MIN_BLOCKS = 0, bool UNTESTED = true>
cudaError_t launch_shift(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                         bool cut, cudaStream_t stream) {
  using Tile = ShiftTile<S, TR, TC>;
  const int lead = cut ? Tile::kLead : 0;
  const std::int64_t blocks = blocks_for(rows, cols, {TR - lead, TC});
  if (blocks < 0) return cudaErrorInvalidValue;
  const int phase = static_cast<int>(reinterpret_cast<std::uintptr_t>(out) / S % Tile::kSector);
  transpose_shift<S, TR, TC, MIN_BLOCKS, UNTESTED><<<static_cast<unsigned>(blocks), kThreads, 0,
                                                     stream>>>(
      static_cast<const std::uint8_t*>(in), static_cast<std::uint8_t*>(out), rows, cols,
      make_grid(rows, cols, TR - lead, TC, S), lead, phase);
  return cudaGetLastError();
}

}  // namespace step08
