// Step 08 - any shape, any element type: the 16-byte-vector tile kernel.
//
// What changed since step 07 (64x64 float tile, float4 loads and stores):
//   * the element size S is a template parameter: 1, 2, 4, 8 or 16 bytes. Every global access
//     is still one 16-byte vector; narrow elements are packed into 32-bit units by a small
//     transpose in registers (elements.cuh) before they go to shared memory;
//   * the tile is sized in bytes, not elements (128x128 bytes, 64x64 floats, 32x32 16-byte
//     structs, ...), and shared memory is one XOR-swizzled layout for all sizes (tile_layout.cuh);
//   * full interior tiles run without a single bounds check; only edge tiles test each vector;
//   * rows that do not start on a 16-byte boundary (4095 x 4097 floats) can be "realigned": the
//     thread loads the aligned 16 bytes that hold its elements and puts each element where it
//     belongs (4- and 8-byte elements only). The launcher no longer uses this: the scalar kernel
//     with sector-aligned writes (transpose_scalar.cuh) measured faster on every misaligned
//     shape, so the realigned kernel stays as a row of the step's table, for comparison;
//   * 64-bit offsets everywhere and tiles on grid.x: any shape up to 2^31-1 tiles.
// The launcher takes this kernel for 1-, 2- and 16-byte elements. For 4- and 8-byte ones the
// scalar kernel's 64 x 64 tile measured as fast or faster (plan.hpp, vectors_pay), so for them
// this kernel is a row of the table, like step 07's.
//
// The two halves of the kernel, global -> shared and shared -> global, are functions of the
// thread index t, so the CPU tests run them too, thread by thread.
//
//   make step08 && ./step08 --type f16 --rows 16384 --cols 16384
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "elements.cuh"
#include "tile_layout.cuh"

namespace step08 {

__host__ __device__ constexpr std::int64_t min64(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}

/// Where a block's tile starts in the input: row r0, column c0.
struct Corner {
  std::int64_t r0;
  std::int64_t c0;
};

// ---- input side: global rows -> shared memory -------------------------------------------------

// Rows start on 16 bytes (cols * S is a multiple of 16). Thread t loads k vectors (the same 16
// bytes of k consecutive rows) per pass, all passes first so that every load is in flight at
// once, then packs and scatters the units. Full: the tile is inside the matrix, no checks.
// Otherwise a vector is either wholly inside or wholly outside (rows and cols are multiples of
// V >= k here), so one test per vector is exact.
template <class L, bool Full>
__host__ __device__ void load_aligned(unsigned t, const std::uint8_t* __restrict__ in,
                                      std::int64_t rows, std::int64_t cols, Corner at,
                                      std::uint8_t* tile) {
  constexpr int S = L::kElem, k = L::kPack, V = L::kVec, P = L::kLoadPasses;
  using Unit = typename Pack<S>::Unit;
  const std::int64_t pitch = cols * S;  // bytes from one input row to the next
  Vec16 v[P][k];
  bool ok[P];
#pragma unroll
  for (int p = 0; p < P; ++p) {
    const Slot s = load_slot(L::kInVecs, t, p);
    const std::int64_t r = at.r0 + s.row * k, c = at.c0 + s.vec * V;
    ok[p] = Full || (r < rows && c < cols);
    const std::uint8_t* src = in + r * pitch + c * S;
#pragma unroll
    for (int i = 0; i < k; ++i) {
      if (ok[p]) v[p][i] = load16(src + i * pitch);
    }
  }
#pragma unroll
  for (int p = 0; p < P; ++p) {
    const Slot s = load_slot(L::kInVecs, t, p);
    if (!ok[p]) continue;
    Unit u[V];
    Pack<S>::to_units(v[p], u);
    std::uint8_t* dst = tile + L::unit_offset(s.vec * V, s.row);  // column e: + e rows
#pragma unroll
    for (int e = 0; e < V; ++e) store_unit(dst + e * L::kRowBytes, u[e]);
  }
}

// Rows start anywhere (4- and 8-byte elements, k = 1). Row r of the tile begins m elements past
// a 16-byte boundary (m differs from row to row), so thread t loads the aligned vector that
// holds columns [vec*V - m, vec*V - m + V) and stores only those inside the tile. One more
// vector per row (vec = kInVecs) picks up the last m columns. A vector that would cross either
// end of the buffer is read element by element instead.
template <class L>
__host__ __device__ void load_realigned(unsigned t, const std::uint8_t* __restrict__ in,
                                        std::int64_t rows, std::int64_t cols, Corner at,
                                        std::uint8_t* tile) {
  constexpr int S = L::kElem, V = L::kVec, P = L::kLoadPasses;
  static_assert(S == 4 || S == 8, "only 4- and 8-byte elements are realigned");
  static_assert(L::kRows <= kThreads, "one thread per row takes the extra vector");
  using Unit = typename Pack<S>::Unit;
  const std::uint8_t* const end = in + rows * cols * S;
  const int row_limit = static_cast<int>(min64(L::kRows, rows - at.r0));
  const int col_limit = static_cast<int>(min64(L::kCols, cols - at.c0));

  // Vector `vec` of tile row `row`: returns its elements; first = tile column of element 0, and
  // elements [lo, hi) are the ones this tile owns (lo >= hi: none).
  auto fetch = [&](int vec, int row, int& first, int& lo, int& hi) {
    Vec16 x{};
    lo = hi = 0;
    if (row >= row_limit) return x;
    const std::uint8_t* start = in + ((at.r0 + row) * cols + at.c0) * S;  // (r0+row, c0)
    const int m = static_cast<int>(reinterpret_cast<std::uintptr_t>(start) % 16) / S;
    first = vec * V - m;
    lo = first < 0 ? -first : 0;
    hi = col_limit - first < V ? col_limit - first : V;
    if (lo >= hi) return x;
    const std::uint8_t* a = start + first * S;  // 16-byte aligned
    if (a >= in && a + 16 <= end) return load16(a);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      if (e >= lo && e < hi) set_element<S>(x, e, load_unit<Unit>(a + e * S));
    }
    return x;
  };
  auto scatter = [&](const Vec16& x, int row, int first, int lo, int hi) {
#pragma unroll
    for (int e = 0; e < V; ++e) {
      if (e >= lo && e < hi) {
        store_unit(tile + L::unit_offset(first + e, row), get_element<S>(x, e));
      }
    }
  };

  Vec16 v[P];
  int first[P], lo[P], hi[P];
#pragma unroll
  for (int p = 0; p < P; ++p) {
    const Slot s = load_slot(L::kInVecs, t, p);
    v[p] = fetch(s.vec, s.row, first[p], lo[p], hi[p]);
  }
  int xfirst = 0, xlo = 0, xhi = 0;
  Vec16 extra{};
  if (t < L::kRows) extra = fetch(L::kInVecs, t, xfirst, xlo, xhi);
#pragma unroll
  for (int p = 0; p < P; ++p) scatter(v[p], load_slot(L::kInVecs, t, p).row, first[p], lo[p], hi[p]);
  if (t < L::kRows) scatter(extra, t, xfirst, xlo, xhi);
}

// ---- output side: shared memory -> global rows ------------------------------------------------

// Output rows start on 16 bytes (rows * S is a multiple of 16): thread t copies 16-byte chunks
// of transposed rows, 8 consecutive chunks (a 128-byte line) per quarter warp.
template <class L, bool Full>
__host__ __device__ void store_aligned(unsigned t, std::uint8_t* __restrict__ out,
                                       std::int64_t rows, std::int64_t cols, Corner at,
                                       const std::uint8_t* tile) {
  constexpr int S = L::kElem, V = L::kVec, Q = L::kOutChunks;
#pragma unroll
  for (int p = 0; p < L::kStorePasses; ++p) {
    const unsigned f = t + kThreads * p;
    const unsigned c = f / Q, q = f % Q;
    const std::int64_t oc = at.c0 + c, orow = at.r0 + q * V;  // output row, first output column
    if (Full || (oc < cols && orow < rows)) {
      store16(out + (oc * rows + orow) * S, load16(tile + L::chunk_offset(c, q)));
    }
  }
}

// Output rows start anywhere (4- and 8-byte elements): the mirror image of load_realigned.
// Thread t gathers the V elements of one aligned 16-byte vector of an output row from shared
// memory and stores them with one instruction; the two vectors at the ends of the tile's part of
// the row, which it shares with the neighbouring tile, are stored element by element.
template <class L>
__host__ __device__ void store_realigned(unsigned t, std::uint8_t* __restrict__ out,
                                         std::int64_t rows, std::int64_t cols, Corner at,
                                         const std::uint8_t* tile) {
  constexpr int S = L::kElem, V = L::kVec, Q = L::kOutChunks;
  static_assert(S == 4 || S == 8, "only 4- and 8-byte elements are realigned");
  static_assert(L::kCols <= kThreads, "one thread per output row takes the extra vector");
  using Unit = typename Pack<S>::Unit;
  const int row_limit = static_cast<int>(min64(L::kRows, rows - at.r0));
  const int col_limit = static_cast<int>(min64(L::kCols, cols - at.c0));

  auto put = [&](int vec, int c) {
    if (c >= col_limit) return;
    std::uint8_t* start = out + ((at.c0 + c) * rows + at.r0) * S;  // output (c0+c, r0)
    const int m = static_cast<int>(reinterpret_cast<std::uintptr_t>(start) % 16) / S;
    const int first = vec * V - m;
    const int lo = first < 0 ? -first : 0;
    const int hi = row_limit - first < V ? row_limit - first : V;
    if (lo >= hi) return;
    std::uint8_t* a = start + first * S;  // 16-byte aligned
    Vec16 x{};
#pragma unroll
    for (int e = 0; e < V; ++e) {
      if (e >= lo && e < hi) {
        set_element<S>(x, e, load_unit<Unit>(tile + L::unit_offset(c, first + e)));
      }
    }
    if (lo == 0 && hi == V) {
      store16(a, x);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        if (e >= lo && e < hi) store_unit(a + e * S, get_element<S>(x, e));
      }
    }
  };
  // Same warp shape as the input side (8 vectors x 4 rows): the 8 lanes of one row read 8
  // different chunks, so the gathers spread over the banks.
#pragma unroll
  for (int p = 0; p < L::kStorePasses; ++p) {
    const Slot s = load_slot(Q, t, p);
    put(s.vec, s.row);
  }
  if (t < L::kCols) put(Q, t);
}

// ---- one tile, both halves -------------------------------------------------------------------

/// The tile of TR x TC S-byte elements at @p at. load: thread t's share of global -> shared;
/// store: its share of shared -> global; a barrier goes between the two. RealignIn / RealignOut:
/// that side's rows do not start on 16 bytes.
template <int S, int TR, int TC, bool RealignIn, bool RealignOut>
struct VecTile {
  using L = TileShape<S, TR, TC>;
  static_assert(!(RealignIn || RealignOut) || S == 4 || S == 8,
                "only 4- and 8-byte elements are realigned");

  // Full interior tiles take the unchecked code; the branch is the same for the whole block.
  __host__ __device__ static bool full(std::int64_t rows, std::int64_t cols, Corner at) {
    return at.r0 + TR <= rows && at.c0 + TC <= cols;
  }

  __host__ __device__ static void load(unsigned t, const std::uint8_t* __restrict__ in,
                                       std::int64_t rows, std::int64_t cols, Corner at,
                                       std::uint8_t* tile) {
    if constexpr (RealignIn) {
      load_realigned<L>(t, in, rows, cols, at, tile);
    } else if (full(rows, cols, at)) {
      load_aligned<L, true>(t, in, rows, cols, at, tile);
    } else {
      load_aligned<L, false>(t, in, rows, cols, at, tile);
    }
  }

  __host__ __device__ static void store(unsigned t, std::uint8_t* __restrict__ out,
                                        std::int64_t rows, std::int64_t cols, Corner at,
                                        const std::uint8_t* tile) {
    if constexpr (RealignOut) {
      store_realigned<L>(t, out, rows, cols, at, tile);
    } else if (full(rows, cols, at)) {
      store_aligned<L, true>(t, out, rows, cols, at, tile);
    } else {
      store_aligned<L, false>(t, out, rows, cols, at, tile);
    }
  }
};

/// Transposes the rows x cols matrix of S-byte elements at @p in into @p out (cols x rows), one
/// TR x TC tile per block, in the order of @p grid.
template <int S, int TR, int TC, bool RealignIn, bool RealignOut>
__global__ void __launch_bounds__(kThreads)
    transpose_vec(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                  std::int64_t rows, std::int64_t cols, TileGrid grid) {
  using Tile = VecTile<S, TR, TC, RealignIn, RealignOut>;
  __shared__ __align__(16) std::uint8_t tile[Tile::L::kBytes];
  std::int64_t ty, tx;
  grid.tile(blockIdx.x, &ty, &tx);
  const Corner at{ty * TR, tx * TC};
  Tile::load(threadIdx.x, in, rows, cols, at, tile);
  __syncthreads();
  Tile::store(threadIdx.x, out, rows, cols, at, tile);
}

}  // namespace step08
