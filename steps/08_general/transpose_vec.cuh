// Step 08 - any shape, any element type: the 16-byte-vector tile kernel, for rows that start on
// 16 bytes. The launcher takes it for 1-, 2- and 16-byte elements.
//
// What changed since step 07 (64x64 float tile, float4 loads and stores):
//   * the element size S is a template parameter: 1, 2, 4, 8 or 16 bytes. Every global access
//     is still one 16-byte vector; narrow elements are packed into 32-bit units by a small
//     transpose in registers (elements.cuh) before they go to shared memory;
//   * the tile is sized in bytes, not elements (128x128 bytes, 128x128 halves, 16x16 16-byte
//     structs), in one XOR-swizzled shared-memory layout for all sizes (tile_layout.cuh);
//   * full interior tiles run without a single bounds check; only edge tiles test each vector;
//   * 64-bit offsets everywhere and tiles on grid.x: any shape up to 2^31-1 tiles.
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

/// Where a block's tile starts in the input: row r0, column c0.
struct Corner {
  std::int64_t r0;
  std::int64_t c0;
};

// Global rows -> shared memory. Thread t loads k vectors (the same 16 bytes of k consecutive
// rows) per pass, all passes first so that every load is in flight at once, then packs and
// scatters the units. Full: the tile is inside the matrix, no checks. Otherwise a vector is
// either wholly inside or wholly outside (rows and cols are multiples of V >= k when rows start
// on 16 bytes), so one test per vector is exact.
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

// Shared memory -> global rows: thread t copies 16-byte chunks of transposed rows, 8
// consecutive chunks (a 128-byte line) per quarter warp.
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

/// The tile of TR x TC S-byte elements at @p at. load: thread t's share of global -> shared;
/// store: its share of shared -> global; a barrier goes between the two.
template <int S, int TR, int TC>
struct VecTile {
  using L = TileShape<S, TR, TC>;

  // Full interior tiles take the unchecked code; the branch is the same for the whole block.
  __host__ __device__ static bool full(std::int64_t rows, std::int64_t cols, Corner at) {
    return at.r0 + TR <= rows && at.c0 + TC <= cols;
  }

  __host__ __device__ static void load(unsigned t, const std::uint8_t* __restrict__ in,
                                       std::int64_t rows, std::int64_t cols, Corner at,
                                       std::uint8_t* tile) {
    if (full(rows, cols, at)) {
      load_aligned<L, true>(t, in, rows, cols, at, tile);
    } else {
      load_aligned<L, false>(t, in, rows, cols, at, tile);
    }
  }

  __host__ __device__ static void store(unsigned t, std::uint8_t* __restrict__ out,
                                        std::int64_t rows, std::int64_t cols, Corner at,
                                        const std::uint8_t* tile) {
    if (full(rows, cols, at)) {
      store_aligned<L, true>(t, out, rows, cols, at, tile);
    } else {
      store_aligned<L, false>(t, out, rows, cols, at, tile);
    }
  }
};

/// Transposes the rows x cols matrix of S-byte elements at @p in into @p out (cols x rows), one
/// TR x TC tile per block, in the order of @p grid. Every row on both sides starts on 16 bytes.
template <int S, int TR, int TC>
__global__ void __launch_bounds__(kThreads)
    transpose_vec(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                  std::int64_t rows, std::int64_t cols, TileGrid grid) {
  using Tile = VecTile<S, TR, TC>;
  __shared__ __align__(16) std::uint8_t tile[Tile::L::kBytes];
  std::int64_t ty, tx;
  grid.tile(blockIdx.x, &ty, &tx);
  const Corner at{ty * TR, tx * TC};
  Tile::load(threadIdx.x, in, rows, cols, at, tile);
  __syncthreads();
  Tile::store(threadIdx.x, out, rows, cols, at, tile);
}

}  // namespace step08
