// Step 08's lab - the transpose's two access patterns, timed apart. The lesson's scalar kernel is
// a load phase (input rows into the tile) and a store phase (tile columns out as output rows).
// Each phase alone is a kernel here, doing exactly what it does inside transpose_scalar, in the
// same tile order; two plain streams of 16-byte vectors, one that only reads and one that only
// writes, are what each is measured against. LAB.md ("What the last points are") reads them.
//
//   make step08_patterns && ./step08_patterns --type f64 --rows 16384 --cols 16384
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "transpose.cuh"

namespace step08 {

/// Which phase of transpose_scalar a kernel keeps.
enum class Phase { load, store };

/// Reads the matrix linearly, 16 bytes per thread, and keeps the loads alive by folding them
/// into @p sink (written only if the fold hits a value no test input produces, i.e. never in
/// practice; the compiler cannot know that, so every load stays).
__global__ void read_stream(const uint4* __restrict__ in, std::int64_t vectors, unsigned* sink) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= vectors) return;
  const uint4 v = in[i];
  if ((v.x ^ v.y ^ v.z ^ v.w) == 0x9E3779B9u && i == 0) *sink = v.x;
}

/// Writes the matrix linearly, 16 bytes per thread.
__global__ void write_stream(uint4* __restrict__ out, std::int64_t vectors) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < vectors) out[i] = make_uint4(0, 0, 0, 0);
}

/// One phase of transpose_scalar<S, T, Cut> on the same grid: Phase::load reads the tile into
/// shared memory and stops (one thread then looks at one word, so the loads are not dead code);
/// Phase::store fills the tile with zeros in shared memory and writes it out as the transpose
/// would. Together the two move the same bytes as the transpose, in the same order.
template <int S, int T, bool Cut, Phase P>
__global__ void __launch_bounds__(kThreads)
    scalar_phase(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                 std::int64_t rows, std::int64_t cols, TileGrid grid, int phase, unsigned* sink) {
  using Tile = ScalarTile<S, T, Cut>;
  using E = typename Tile::E;
  __shared__ typename Tile::Array tile;
  const auto [r0, c0, last] = tile_at<T>(grid, blockIdx.x);  // the lesson's tile order
  const bool whole = Tile::whole(rows, cols, r0, c0);
  if constexpr (P == Phase::load) {
    const auto* src = reinterpret_cast<const E*>(in);
    if (whole) {
      Tile::template load<true>(threadIdx.x, src, rows, cols, r0, c0, tile);
    } else {
      Tile::template load<false>(threadIdx.x, src, rows, cols, r0, c0, tile);
    }
    __syncthreads();
    if (threadIdx.x == 0 && *reinterpret_cast<const std::uint8_t*>(&tile[Tile::kLead][0]) == 0x9E &&
        r0 == 0 && c0 == 0) {
      *sink = 1;
    }
  } else {
    E* flat = &tile[0][0];
    for (int i = threadIdx.x; i < Tile::kArrayRows * (T + Tile::kPad); i += kThreads) flat[i] = E{};
    __syncthreads();
    auto* dst = reinterpret_cast<E*>(out);
    if (whole) {
      Tile::template store<true>(threadIdx.x, dst, rows, cols, r0, c0, phase, last, tile);
    } else {
      Tile::template store<false>(threadIdx.x, dst, rows, cols, r0, c0, phase, last, tile);
    }
  }
}

/// Where an output buffer at @p out sits in its 32-byte sector, in S-byte elements.
template <int S>
int phase_of(const void* out) {
  return static_cast<int>(reinterpret_cast<std::uintptr_t>(out) / S % (32 / S));
}

/// Launches scalar_phase with the step's scalar tile for S-byte elements on @p grid (the
/// launcher's, or one of another group height), cutting output rows on their sectors when
/// @p cut: the same arguments as launch_scalar_on, which runs both phases.
template <int S, Phase P>
cudaError_t launch_phase(const TileGrid& grid, const void* in, void* out, std::int64_t rows,
                         std::int64_t cols, bool cut, unsigned* sink, cudaStream_t stream) {
  constexpr int T = scalar_tile(S);
  const auto* src = static_cast<const std::uint8_t*>(in);
  auto* dst = static_cast<std::uint8_t*>(out);
  const auto blocks = static_cast<unsigned>(grid.tiles());
  if (cut) {
    scalar_phase<S, T, true, P><<<blocks, kThreads, 0, stream>>>(src, dst, rows, cols, grid,
                                                                  phase_of<S>(out), sink);
  } else {
    scalar_phase<S, T, false, P><<<blocks, kThreads, 0, stream>>>(src, dst, rows, cols, grid,
                                                                   phase_of<S>(out), sink);
  }
  return cudaGetLastError();
}

/// The lesson's transpose_scalar, both phases, on @p grid instead of make_grid's (as
/// launch_scalar runs it otherwise).
template <int S, int T>
cudaError_t launch_scalar_on(const TileGrid& grid, const void* in, void* out, std::int64_t rows,
                             std::int64_t cols, bool cut, cudaStream_t stream) {
  const auto* src = static_cast<const std::uint8_t*>(in);
  auto* dst = static_cast<std::uint8_t*>(out);
  const auto blocks = static_cast<unsigned>(grid.tiles());
  if (cut) {
    transpose_scalar<S, T, true><<<blocks, kThreads, 0, stream>>>(src, dst, rows, cols, grid,
                                                                  phase_of<S>(out));
  } else {
    transpose_scalar<S, T, false><<<blocks, kThreads, 0, stream>>>(src, dst, rows, cols, grid,
                                                                   phase_of<S>(out));
  }
  return cudaGetLastError();
}

/// The launcher's grid for the scalar tile, with @p group_rows tile rows per group instead of
/// make_grid's choice (at most the matrix's tile rows).
inline TileGrid grid_with_group(std::int64_t rows, std::int64_t cols, int elem_size,
                                std::uint32_t group_rows) {
  const int t = scalar_tile(static_cast<std::size_t>(elem_size));
  TileGrid g = make_grid(rows, cols, t, t, elem_size);
  g.group_rows = group_rows < g.tiles_r ? group_rows : g.tiles_r;
  g.per_group = g.group_rows * g.tiles_c;
  return g;
}

}  // namespace step08
