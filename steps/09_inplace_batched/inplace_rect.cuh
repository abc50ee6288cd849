// Step 09, part 3 - a rectangle in place (RECTANGLES.md), in two passes where c = gcd(m, n) >= 32.
// What changed since part 1: a tile of a rectangle has no mirror to swap with, but the m x n
// matrix is a grid of c x c squares. Pass 1 transposes each square in place by part 1's tile
// pairs; pass 2 moves whole row pieces of c elements along the cycles of a permutation
// (rect_routes.cuh has the index arithmetic). Where c = 1, part 4's row and column passes
// (rect_gcd1.cuh, COPRIME.md) come first and the same cycle kernel moves whole rows; every other
// shape runs the general passes of rect_general.cuh.
//
//   make step09 && ./step09 --mode inplace --rows 8192 --cols 4096
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <climits>

#include "inplace.cuh"
#include "rect_gcd1.cuh"
#include "rect_general.cuh"
#include "rect_routes.cuh"

namespace step09 {

/// Pieces of @p len units (a unit is 4 or 16 bytes) moved along the cycles of a gather,
/// new[x_s] = old[x_s+1]. One warp takes one cycle and 32 W consecutive units of every piece on it
/// (lane t: units t, t + 32, ...), and reads the pieces x_s+1 .. x_s+K before it writes x_s ..
/// x_s+K-1: only x0 is read after it is written, and its value is kept from the start. The
/// cycle's piece numbers come from the table 32 at a time, one per lane, and reach the other
/// lanes by shuffles. The lab's W > 1 keeps to 64 registers, 4 blocks an SM as the 16-byte kernel
/// (0: no bound), and its cut runs (cycle < cut) end on a piece of @p saved instead of x0.
template <typename U, int K, int W, typename Index>
__global__ void __launch_bounds__(256, W > 1 ? 4 : 0)
    permute_pieces(U* a, Index len, const int* starts, const int* order, unsigned cycles,
                   unsigned chunks, const U* saved, unsigned cut) {
  static_assert(K < 32, "x_s .. x_s+K come from one window of 32 table entries");
  const unsigned long long warp = blockIdx.x * 8ULL + threadIdx.x / 32;
  const unsigned cycle = static_cast<unsigned>(warp / chunks);
  if (cycle >= cycles) return;  // the whole warp: the shuffles below need all 32 lanes
  const int lane = threadIdx.x % 32;
  const Index e0 = static_cast<Index>(warp - 1ULL * cycle * chunks) * (32 * W) + lane;
  auto active = [&](int w) { return e0 + 32 * w < len; };  // unit e0 + 32 w is in the piece
  const int length = starts[cycle + 1] - starts[cycle];
  const int* const x = order + starts[cycle];
  int window = x[lane < length ? lane : length - 1];  // x_(s0 + lane)
  const int x0 = __shfl_sync(~0u, window, 0);
  auto at = [&](int x, int w) -> U& { return a[static_cast<Index>(x) * len + e0 + 32 * w]; };
  U first[W] = {};
#pragma unroll
  for (int w = 0; w < W; ++w) {
    if (active(w)) first[w] = cycle < cut ? saved[cycle * len + e0 + 32 * w] : at(x0, w);
  }
  for (int s0 = 0; s0 < length; s0 += K) {
    const int next = s0 + K + lane < length ? x[s0 + K + lane] : 0;  // the next window, early
    U v[K][W];
#pragma unroll
    for (int s = 0; s < K; ++s) {
      const int from = __shfl_sync(~0u, window, s + 1);
#pragma unroll
      for (int w = 0; w < W; ++w) {
        v[s][w] = first[w];  // x_length is x0
        if (active(w) && s0 + s + 1 < length) v[s][w] = at(from, w);
      }
    }
#pragma unroll
    for (int s = 0; s < K; ++s) {
      const int to = __shfl_sync(~0u, window, s);
#pragma unroll
      for (int w = 0; w < W; ++w) {
        if (active(w) && s0 + s < length) at(to, w) = v[s][w];
      }
    }
    window = next;
  }
}

/// What a shape needs besides its matrix, made by its first call and kept: the route, the cycle
/// table of the last pass (starts, then order), and the general passes' own plan.
struct RectPlan {
  i64 m = 0, n = 0;
  std::size_t elem = 0;
  Route route = Route::none;
  unsigned cycles = 0, cut = 0;
  course::DeviceBuffer table, saved;
  GeneralPlan general;
  std::size_t bytes() const { return table.bytes() + saved.bytes() + general.bytes(); }
};

/// The launcher's knobs at the lesson's values; the lab's variants change them: loads a round
/// (k4) and units a lane (w4) of the cycle pass in 4-byte units, 16-byte units where rows allow
/// (wide), the reflection's mask and strip of columns, and a hook on the cycles, where
/// lab/cut_runs.cuh cuts them into runs (the first `cut` cycles, each ending on `saved`).
struct Knobs {
  static constexpr int k4 = 31, w4 = 1, strip = 32;
  static constexpr bool wide = true, mask = true;
  template <typename K, typename T> static void plan(Cycles&, RectPlan&, const T*, i64) {}
  template <typename U, typename I> static void save(const RectPlan&, const U*, I, cudaStream_t) {}
};

/// The last pass's units: 16 bytes where the piece and the address allow, else 4 (w4 x 32 a warp).
struct Units { bool wide; i64 units, chunks; };
template <typename K, typename T>
Units units_of(const T* a, i64 len) {
  const i64 bytes = len * static_cast<i64>(sizeof(T));
  const bool wide = K::wide && bytes % 16 == 0 && reinterpret_cast<std::uintptr_t>(a) % 16 == 0;
  const i64 units = wide ? bytes / 16 : bytes / 4, run = wide ? 32 : 32 * K::w4;
  return {wide, units, (units + run - 1) / run};
}

/// The last pass of either route: pieces of @p len elements along the plan's cycles, 8 loads a
/// round of 16-byte units, or k4 of w4 4-byte units a lane (31 x 1: the most one window allows).
template <typename T, typename Index, typename K>
void permute(T* a, i64 len, const RectPlan& plan, cudaStream_t stream) {
  if (plan.cycles == 0) return;  // a square: nothing moves
  const Units u = units_of<K>(a, len);
  const unsigned blocks = static_cast<unsigned>((plan.cycles * u.chunks + 7) / 8);
  const int* const starts = plan.table.as<int>();
  const int* const order = starts + plan.cycles + 1;
  auto run = [&](auto* x, auto kernel) {  // 16- or 4-byte units
    K::save(plan, x, static_cast<Index>(u.units), stream);
    kernel<<<blocks, 256, 0, stream>>>(x, u.units, starts, order, plan.cycles, u.chunks,
                                       static_cast<decltype(x)>(plan.saved.get()), plan.cut);
  };
  if (u.wide) return run(reinterpret_cast<uint4*>(a), permute_pieces<uint4, 8, 1, Index>);
  run(reinterpret_cast<unsigned*>(a), permute_pieces<unsigned, K::k4, K::w4, Index>);
}

template <typename T, typename Index, typename K>
void run_route(T* a, const RectShape& s, const RectPlan& plan, cudaStream_t stream) {
  if (plan.route == Route::blocks) {  // pass 1: each c x c square by part 1's tile pairs
    constexpr int kTile = sizeof(T) == 4 ? 64 : 32;  // rows of 256 bytes
    const unsigned tiles = static_cast<unsigned>((s.c + kTile - 1) / kTile);
    const unsigned pairs = tiles * (tiles + 1) / 2, squares = static_cast<unsigned>(s.a * s.b);
    transpose_inplace_pairs<T, kTile, 8><<<squares * pairs, dim3(kTile, 8), 0, stream>>>(
        a, s.n, pairs, s.c, static_cast<unsigned>(s.b));
    return permute<T, Index, K>(a, s.c, plan, stream);
  }
  gcd1_rows_and_columns<T, Index, K::mask, K::strip>(a, s, stream);  // passes 1, 2 (rect_gcd1.cuh)
  permute<T, Index, K>(a, s.n, plan, stream);
}

/// Transposes the rows x cols matrix at @p a in place, into cols x rows: two passes where
/// gcd >= 32, three where gcd = 1, the general passes otherwise; sides below 2^31, else
/// cudaErrorInvalidValue. A 1 x N or N x 1 matrix is its own transpose: nothing runs.
template <typename T, typename K = Knobs>
cudaError_t transpose_inplace_rect(T* a, i64 rows, i64 cols, RectPlan& plan,
                                   cudaStream_t stream = nullptr) {
  if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
  if (rows == 1 || cols == 1) return cudaSuccess;
  if (std::max(rows, cols) > INT_MAX) return cudaErrorInvalidValue;
  const RectShape s = rect_shape(rows, cols);
  if (plan.m != rows || plan.n != cols || plan.elem != sizeof(T)) {  // a new shape: plan it
    int device = 0, smem = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    plan.route = choose_route(rows, cols, sizeof(T), static_cast<std::size_t>(smem));
    Cycles cy;
    if (plan.route == Route::blocks) {
      cy = gather_cycles(s.a * s.b * s.c, [&](i64 p) { return piece_source(p, s.a, s.b, s.c); });
    } else if (plan.route == Route::gcd1) {
      cy = gather_cycles(rows, [&](i64 i) { return row_source(s, i); });
    }
    K::template plan<K>(cy, plan, a, plan.route == Route::blocks ? s.c : s.n);
    plan.cycles = static_cast<unsigned>(cy.count());
    cy.starts.insert(cy.starts.end(), cy.order.begin(), cy.order.end());  // one table
    plan.table = course::DeviceBuffer(cy.starts.size() * sizeof(int));
    CUDA_CHECK(cudaMemcpy(plan.table.get(), cy.starts.data(), plan.table.bytes(),
                          cudaMemcpyHostToDevice));
    plan.m = rows, plan.n = cols, plan.elem = sizeof(T);
  }
  if (plan.route == Route::general) {
    return transpose_rect_general(a, rows, cols, plan.general, stream);
  }
  if (rows * cols * static_cast<i64>(sizeof(T) / 4) <= UINT_MAX) {  // 32-bit unit indices
    run_route<T, unsigned, K>(a, s, plan, stream);
  } else {
    run_route<T, std::uint64_t, K>(a, s, plan, stream);
  }
  return cudaGetLastError();
}

}  // namespace step09
