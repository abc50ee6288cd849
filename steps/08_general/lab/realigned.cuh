// Step 08's lab - realigned vectors: 16-byte accesses on rows that do not start on 16 bytes.
//
// The lesson's vector kernel needs every row on both sides to start on 16 bytes; for 4- and
// 8-byte elements the step first kept 16-byte accesses on the other shapes too, by REALIGNING:
// row r of the tile starts m_r elements past a 16-byte boundary, so a thread loads the aligned
// vector that holds its columns and scatters each element to its place in the tile, dropping
// the ones that belong to the neighbouring tile; one extra vector per row picks up the last m_r
// columns. The output side is the mirror image: a thread gathers the elements of one aligned
// vector of an output row from shared memory and stores it with one instruction; the two
// vectors at the ends of the tile's piece of the row, shared with the next tile, are stored
// element by element. The lesson's scalar kernel, which cuts its writes on sectors, replaced it
// on every misaligned shape (LAB.md says why). A side whose rows are aligned takes the lesson's
// load_aligned / store_aligned.
//
//   make step08-lab && ./step08-lab --rows 4095 --cols 4097 --only realigned
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "transpose_vec.cuh"

namespace step08 {

__host__ __device__ constexpr std::int64_t min64(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}

/// Element e of a vector, for element sizes that are whole units (4, 8, 16 bytes): what the
/// realigned path needs when a vector does not start at a tile column.
template <int S>
__host__ __device__ inline typename Pack<S>::Unit get_element(const Vec16& v, int e) {
  static_assert(S >= 4, "narrow elements are packed, not taken one by one");
  if constexpr (S == 4) {
    return v.w[e];
  } else if constexpr (S == 8) {
    return make_uint2(v.w[2 * e], v.w[2 * e + 1]);
  } else {
    return make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]);
  }
}

template <int S>
__host__ __device__ inline void set_element(Vec16& v, int e, const typename Pack<S>::Unit& x) {
  static_assert(S >= 4, "narrow elements are packed, not taken one by one");
  if constexpr (S == 4) {
    v.w[e] = x;
  } else if constexpr (S == 8) {
    v.w[2 * e] = x.x;
    v.w[2 * e + 1] = x.y;
  } else {
    v = {{x.x, x.y, x.z, x.w}};
  }
}

/// One element of 4 or more bytes from memory at @p p, which is aligned to its size.
template <typename U>
__host__ __device__ inline U load_unit(const void* p) {
  expect_aligned<sizeof(U)>(p);
  return *static_cast<const U*>(p);
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
  for (int p = 0; p < P; ++p) {
    scatter(v[p], load_slot(L::kInVecs, t, p).row, first[p], lo[p], hi[p]);
  }
  if (t < L::kRows) scatter(extra, t, xfirst, xlo, xhi);
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

/// The TR x TC tile at @p at, each side realigned or not (RealignIn / RealignOut: that side's
/// rows do not all start on 16 bytes). The same interface as the lesson's VecTile.
template <int S, int TR, int TC, bool RealignIn, bool RealignOut>
struct RealignedTile {
  using L = TileShape<S, TR, TC>;
  using Aligned = VecTile<S, TR, TC>;
  static_assert(S == 4 || S == 8, "only 4- and 8-byte elements are realigned");

  __host__ __device__ static void load(unsigned t, const std::uint8_t* __restrict__ in,
                                       std::int64_t rows, std::int64_t cols, Corner at,
                                       std::uint8_t* tile) {
    if constexpr (RealignIn) {
      load_realigned<L>(t, in, rows, cols, at, tile);
    } else {
      Aligned::load(t, in, rows, cols, at, tile);
    }
  }

  __host__ __device__ static void store(unsigned t, std::uint8_t* __restrict__ out,
                                        std::int64_t rows, std::int64_t cols, Corner at,
                                        const std::uint8_t* tile) {
    if constexpr (RealignOut) {
      store_realigned<L>(t, out, rows, cols, at, tile);
    } else {
      Aligned::store(t, out, rows, cols, at, tile);
    }
  }
};

/// Launches the lesson's transpose_vec on a RealignedTile, TR x TC, in the launcher's tile order;
/// the caller has checked that the sides not realigned are aligned.
template <int S, int TR, int TC, bool RealignIn, bool RealignOut>
cudaError_t launch_realigned(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                             cudaStream_t stream) {
  const std::int64_t blocks = blocks_for(rows, cols, {TR, TC});
  if (blocks < 0) return cudaErrorInvalidValue;
  transpose_vec<S, TR, TC, std::uint8_t*, RealignedTile<S, TR, TC, RealignIn, RealignOut>>
      <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
          static_cast<const std::uint8_t*>(in), static_cast<std::uint8_t*>(out), rows, cols,
          make_grid(rows, cols, TR, TC, S));
  return cudaGetLastError();
}

}  // namespace step08
