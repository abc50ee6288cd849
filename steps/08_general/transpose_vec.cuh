// Step 08, part 2 - narrow elements: the 16-byte vector kernel, for 1-, 2- and 16-byte elements
// on rows that start on 16 bytes. Since step 07 (float4s of a 64 x 64 float tile): any element
// size S, every global access still one 16-byte vector, narrow elements packed into 4-byte
// units in registers (pack.cuh); the tile sized in bytes, 128 or 256 bytes a side, in one XOR
// swizzle for every size; whole tiles without a single bounds test.
//   make step08 && ./step08 --type f16 --rows 16384 --cols 16384
#pragma once

#include "pack.cuh"
#include "tile_grid.cuh"

namespace step08 {

/// The tile per element size: 256 bytes a side (128 for int8), 4 to 32 KB (the lab times others).
constexpr TileSize vector_tile(std::size_t elem_size) {
  switch (elem_size) {
    case 1: return {128, 128};
    case 2: return {128, 128};
    case 4: return {64, 64};  // step 07's tile
    case 8: return {32, 32};
    default: return {16, 16};
  }
}

/// The TR x TC tile of S-byte elements in shared memory, already transposed: TC rows, one per
/// output row, each TR * S bytes of units (unit u of row c: input rows k*u .. k*u + k - 1 of
/// column c), read back in 16-byte chunks. Chunk q of row c is stored at chunk q ^ swizzle(c):
/// the 8 column vectors a warp writes at once have 8 swizzles, so both the unit writes and the
/// chunk reads are free of bank conflicts. Unsigned, so / and % by powers of two are shifts.
template <int S, int TR, int TC>
struct TileShape {
  static constexpr int kElem = S, kRows = TR, kCols = TC;
  static constexpr int kPack = Pack<S>::kRows;       // k: input rows packed together
  static constexpr int kVec = 16 / S;                // elements per 16-byte vector
  static constexpr int kUnit = S < 4 ? 4 : S;        // bytes per shared-memory unit
  static constexpr int kUnitRows = TR / kPack;       // units in one output row of the tile
  static constexpr int kRowBytes = TR * S;           // bytes in one output row of the tile
  static constexpr int kInVecs = TC / kVec;          // vectors in one input row of the tile
  static constexpr int kOutChunks = TR / kVec;       // chunks in one output row of the tile
  static constexpr int kBytes = TR * TC * S;
  static constexpr int kLoadPasses = kUnitRows * kInVecs / kThreads;
  static constexpr int kStorePasses = TC * kOutChunks / kThreads;
  static_assert(TC * S % 128 == 0 && TR * S % 128 == 0, "whole 128-byte lines: 8 chunks a row");
  static_assert(kUnitRows % 4 == 0 && kUnitRows * kInVecs % kThreads == 0 &&
                TC * kOutChunks % kThreads == 0, "4 unit rows a warp, whole passes");
  static_assert(kBytes <= 48 * 1024, "static shared memory");

  __host__ __device__ static constexpr unsigned swizzle(unsigned c) { return (c / kVec) % 8; }
  /// Byte offset of unit u of row c. The kVec columns of one input vector share a swizzle:
  /// unit_offset(vec * kVec + e, u) = unit_offset(vec * kVec, u) + e * kRowBytes.
  __host__ __device__ static constexpr unsigned unit_offset(unsigned c, unsigned u) {
    const unsigned byte = u * kUnit;
    return c * kRowBytes + ((byte / 16) ^ swizzle(c)) * 16 + byte % 16;
  }
  /// Byte offset of 16-byte chunk q of row c.
  __host__ __device__ static constexpr unsigned chunk_offset(unsigned c, unsigned q) {
    return c * kRowBytes + (q ^ swizzle(c)) * 16;
  }
};

/// Where a block's tile starts in the input: row r0, column c0.
struct Corner { std::int64_t r0, c0; };

/// The vector (along the row) and the row a thread takes. A warp covers 8 consecutive vectors
/// (a 128-byte line) of 4 consecutive rows: whole lines, and each unit written in its own bank.
struct Slot { int vec, row; };

/// The slot of thread @p t in pass @p p, for rows of @p vecs_per_row vectors (a multiple of 8).
__host__ __device__ constexpr Slot load_slot(unsigned vecs_per_row, unsigned t, unsigned p) {
  const unsigned lane = t % 32, task = t / 32 + (kThreads / 32) * p;
  const unsigned groups = vecs_per_row / 8;
  return {static_cast<int>(lane % 8 + 8 * (task % groups)),
          static_cast<int>(lane / 8 + 4 * (task / groups))};
}

// Global rows -> shared memory: k vectors per pass (the same 16 bytes of k rows), every pass's
// loads first so that all are in flight, then pack and store the units. Full: the tile is inside
// the matrix. Otherwise a vector is wholly inside or outside (rows on 16 bytes): one test each.
template <class L, bool Full>
__host__ __device__ void load_aligned(unsigned t, const std::uint8_t* __restrict__ in,
                                      std::int64_t rows, std::int64_t cols, Corner at,
                                      std::uint8_t* tile) {
  constexpr int S = L::kElem, k = L::kPack, V = L::kVec, P = L::kLoadPasses;
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
    typename Pack<S>::Unit u[V];
    Pack<S>::to_units(v[p], u);
    std::uint8_t* dst = tile + L::unit_offset(s.vec * V, s.row);  // column e: + e rows
#pragma unroll
    for (int e = 0; e < V; ++e) store_unit(dst + e * L::kRowBytes, u[e]);
  }
}

// Shared memory -> global rows: 16-byte chunks of the transposed rows, 8 consecutive chunks (a
// 128-byte line) per quarter warp.
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

/// Thread t's share of the tile at @p at: load (global -> shared), then, after a barrier, store.
/// Whole tiles take the unchecked code; the branch is the same for the whole block.
template <int S, int TR, int TC>
struct VecTile {
  using L = TileShape<S, TR, TC>;
  __host__ __device__ static bool full(std::int64_t rows, std::int64_t cols, Corner at) {
    return at.r0 + TR <= rows && at.c0 + TC <= cols;
  }
  __host__ __device__ static void load(unsigned t, const std::uint8_t* __restrict__ in,
                                       std::int64_t rows, std::int64_t cols, Corner at,
                                       std::uint8_t* tile) {
    if (full(rows, cols, at)) load_aligned<L, true>(t, in, rows, cols, at, tile);
    else load_aligned<L, false>(t, in, rows, cols, at, tile);
  }
  __host__ __device__ static void store(unsigned t, std::uint8_t* __restrict__ out,
                                        std::int64_t rows, std::int64_t cols, Corner at,
                                        const std::uint8_t* tile) {
    if (full(rows, cols, at)) store_aligned<L, true>(t, out, rows, cols, at, tile);
    else store_aligned<L, false>(t, out, rows, cols, at, tile);
  }
};

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

/// Transposes rows x cols S-byte elements in TR x TC tiles. Every row, on both sides, must start
/// on 16 bytes (the caller checks); cudaErrorInvalidValue, and no launch, past 2^31 - 1 tiles.
template <int S, int TR = vector_tile(S).rows, int TC = vector_tile(S).cols>
cudaError_t launch_vec(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                       cudaStream_t stream) {
  const std::int64_t blocks = blocks_for(rows, cols, {TR, TC});
  if (blocks < 0) return cudaErrorInvalidValue;
  transpose_vec<S, TR, TC><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const std::uint8_t*>(in), static_cast<std::uint8_t*>(out), rows, cols,
      make_grid(rows, cols, TR, TC, S));
  return cudaGetLastError();
}

}  // namespace step08
