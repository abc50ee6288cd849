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
/// new[x_s] = old[x_s+1]. One warp takes one cycle and 32 consecutive units of every piece on it,
/// and reads the pieces x_s+1 .. x_s+K before it writes x_s .. x_s+K-1: only x0 is read after it
/// is written, and its value is kept from the start. The cycle's piece numbers come from the table
/// 32 at a time, one per lane, and reach the other lanes by shuffles.
template <typename U, int K, typename Index>
__global__ void __launch_bounds__(256)
    permute_pieces(U* a, Index len, const int* starts, const int* order, unsigned cycles,
                   unsigned chunks) {
  static_assert(K < 32, "x_s .. x_s+K come from one window of 32 table entries");
  const unsigned long long warp = blockIdx.x * 8ULL + threadIdx.x / 32;
  const unsigned cycle = static_cast<unsigned>(warp / chunks);
  if (cycle >= cycles) return;  // the whole warp: the shuffles below need all 32 lanes
  const int lane = threadIdx.x % 32;
  const Index e = static_cast<Index>(warp - 1ULL * cycle * chunks) * 32 + lane;
  const bool active = e < len;
  const int length = starts[cycle + 1] - starts[cycle];
  const int* const x = order + starts[cycle];
  int window = x[lane < length ? lane : length - 1];  // x_(s0 + lane)
  const int x0 = __shfl_sync(~0u, window, 0);
  U first{};
  if (active) first = a[static_cast<Index>(x0) * len + e];
  for (int s0 = 0; s0 < length; s0 += K) {
    const int next = s0 + K + lane < length ? x[s0 + K + lane] : 0;  // the next window, early
    U v[K];
#pragma unroll
    for (int s = 0; s < K; ++s) {
      const int from = __shfl_sync(~0u, window, s + 1);
      v[s] = first;  // x_length is x0
      if (active && s0 + s + 1 < length) v[s] = a[static_cast<Index>(from) * len + e];
    }
#pragma unroll
    for (int s = 0; s < K; ++s) {
      const int to = __shfl_sync(~0u, window, s);
      if (active && s0 + s < length) a[static_cast<Index>(to) * len + e] = v[s];
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
  unsigned cycles = 0;
  course::DeviceBuffer table;
  GeneralPlan general;
  std::size_t bytes() const { return table.bytes() + general.bytes(); }
};

/// The last pass of either route: pieces of @p len elements along the plan's cycles, in 16-byte
/// units where the piece and the matrix's address allow (8 loads a round), else 4-byte ones
/// (K4 loads a round: 31, the most one window allows; the lab times 16 as rect-loads16, and
/// 4-byte units everywhere, kWide = false, as rect-narrow).
template <typename T, typename Index, int K4, bool kWide>
void permute(T* a, i64 len, const RectPlan& plan, cudaStream_t stream) {
  if (plan.cycles == 0) return;  // a square: nothing moves
  const i64 bytes = len * static_cast<i64>(sizeof(T));
  const bool wide = kWide && bytes % 16 == 0 && reinterpret_cast<std::uintptr_t>(a) % 16 == 0;
  const i64 units = wide ? bytes / 16 : bytes / 4, chunks = (units + 31) / 32;
  const unsigned blocks = static_cast<unsigned>((plan.cycles * chunks + 7) / 8);
  const int* const starts = plan.table.as<int>();
  const int* const order = starts + plan.cycles + 1;
  if (wide) {
    permute_pieces<uint4, 8, Index><<<blocks, 256, 0, stream>>>(
        reinterpret_cast<uint4*>(a), units, starts, order, plan.cycles, chunks);
  } else {
    permute_pieces<unsigned, K4, Index><<<blocks, 256, 0, stream>>>(
        reinterpret_cast<unsigned*>(a), units, starts, order, plan.cycles, chunks);
  }
}

template <typename T, typename Index, int K4, bool kMask, bool kWide>
void run_route(T* a, const RectShape& s, const RectPlan& plan, cudaStream_t stream) {
  if (plan.route == Route::blocks) {  // pass 1: each c x c square by part 1's tile pairs
    constexpr int kTile = sizeof(T) == 4 ? 64 : 32;  // rows of 256 bytes
    const unsigned tiles = static_cast<unsigned>((s.c + kTile - 1) / kTile);
    const unsigned pairs = tiles * (tiles + 1) / 2, squares = static_cast<unsigned>(s.a * s.b);
    transpose_inplace_pairs<T, kTile, 8><<<squares * pairs, dim3(kTile, 8), 0, stream>>>(
        a, s.n, pairs, s.c, static_cast<unsigned>(s.b));
    return permute<T, Index, K4, kWide>(a, s.c, plan, stream);
  }
  gcd1_rows_and_columns<T, Index, kMask>(a, s, stream);  // passes 1 and 2 (rect_gcd1.cuh)
  permute<T, Index, K4, kWide>(a, s.n, plan, stream);
}

/// Transposes the rows x cols matrix at @p a in place, into cols x rows: two passes where
/// gcd >= 32, three where gcd = 1, the general passes otherwise; sides below 2^31, else
/// cudaErrorInvalidValue. A 1 x N or N x 1 matrix is its own transpose: nothing runs. K4, kMask
/// and kWide are the lab's knobs (permute, reflect_columns_gcd1).
template <typename T, int K4 = 31, bool kMask = true, bool kWide = true>
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
  if (rows * cols <= static_cast<i64>(UINT_MAX)) {  // 32-bit element indices
    run_route<T, unsigned, K4, kMask, kWide>(a, s, plan, stream);
  } else {
    run_route<T, std::uint64_t, K4, kMask, kWide>(a, s, plan, stream);
  }
  return cudaGetLastError();
}

}  // namespace step09
