// Step 08, part 2 - 16-byte vectors for 1-, 2- and 16-byte elements on rows that start on 16
// bytes. Since step 07's float4 kernel: any element size, narrow ones packed in registers
// (pack.cuh), the tile sized in bytes, one XOR swizzle for every size.
//   make step08 && ./step08 --type f16 --rows 16384 --cols 16384
#pragma once

#include "pack.cuh"  // and tile_grid.cuh

namespace step08 {

/// The tile in shared memory, transposed: TC rows (output rows) of TR * S bytes, stored in units
/// (unit u of row c: input rows k*u .. k*u + k - 1, column c), read in 16-byte chunks; chunk q of
/// row c sits at chunk q ^ swizzle(c), which leaves both sides free of bank conflicts.
template <int S, int TR, int TC>
struct TileShape {
  static constexpr int kElem = S, kRows = TR, kCols = TC, kPack = Pack<S>::kRows;  // k
  static constexpr int kVec = 16 / S;                // elements per 16-byte vector
  static constexpr int kUnit = S < 4 ? 4 : S;        // bytes per shared-memory unit
  static constexpr int kUnitRows = TR / kPack;       // units in one output row of the tile
  static constexpr int kRowBytes = TR * S;           // bytes in one output row of the tile
  static constexpr int kInVecs = TC / kVec;          // vectors in one input row of the tile
  static constexpr int kOutChunks = TR / kVec;       // chunks in one output row of the tile
  static constexpr int kBytes = TR * TC * S;
  static constexpr int kLoadPasses = kUnitRows * kInVecs / kThreads;
  static constexpr int kStorePasses = TC * kOutChunks / kThreads;
  static_assert(TC * S % 128 == 0 && TR * S % 128 == 0 && kUnitRows % 4 == 0 && kBytes <= 49152 &&
                kLoadPasses * kThreads == kUnitRows * kInVecs &&
                kStorePasses * kThreads == TC * kOutChunks, "whole lines, whole passes, 48 KB");
  __host__ __device__ static constexpr unsigned swizzle(unsigned c) { return (c / kVec) % 8; }
  /// Byte offset of unit u of row c (the kVec columns of one input vector share a swizzle).
  __host__ __device__ static constexpr unsigned unit_offset(unsigned c, unsigned u) {
    const unsigned byte = u * kUnit;
    return c * kRowBytes + ((byte / 16) ^ swizzle(c)) * 16 + byte % 16;
  }
  /// Byte offset of 16-byte chunk q of row c.
  __host__ __device__ static constexpr unsigned chunk_offset(unsigned c, unsigned q) {
    return c * kRowBytes + (q ^ swizzle(c)) * 16;
  }
};

struct Corner { std::int64_t r0, c0; };  // where a block's tile starts in the input

/// Thread t's vector and row in pass p, rows of vecs_per_row vectors: a warp takes 8 vectors (a
/// 128-byte line) of 4 rows, so each unit it stores lands in its own bank.
struct Slot { int vec, row; };
__host__ __device__ constexpr Slot load_slot(unsigned vecs_per_row, unsigned t, unsigned p) {
  const unsigned lane = t % 32, task = t / 32 + (kThreads / 32) * p;
  const unsigned groups = vecs_per_row / 8;
  return {static_cast<int>(lane % 8 + 8 * (task % groups)),
          static_cast<int>(lane / 8 + 4 * (task / groups))};
}

// Global -> shared: k vectors a pass (16 bytes of k rows), every load first, then pack and store.
// In an edge tile (not Full) a vector is wholly inside or outside: one test per vector.
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
    for (int i = 0; i < k; ++i)
      if (ok[p]) v[p][i] = load16(src + i * pitch);
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

/// Where chunk (output row oc, first column orow) goes in the dense output, rows long; a kernel
/// parameter, so that step 10 sends each output row to the GPU that owns it with this kernel.
template <int S> struct DenseOut {
  std::uint8_t* __restrict__ out; std::int64_t rows;
  __host__ __device__ std::uint8_t* operator()(std::int64_t oc, std::int64_t orow) const { return out + (oc * rows + orow) * S; }
};

// Shared -> global: 16-byte chunks of the output rows, a 128-byte line per quarter warp.
template <class L, bool Full, class Out>
__host__ __device__ void store_aligned(unsigned t, Out out, std::int64_t rows, std::int64_t cols,
                                       Corner at, const std::uint8_t* tile) {
  constexpr int V = L::kVec, Q = L::kOutChunks;
#pragma unroll
  for (int p = 0; p < L::kStorePasses; ++p) {
    const unsigned f = t + kThreads * p, c = f / Q, q = f % Q;
    const std::int64_t oc = at.c0 + c, orow = at.r0 + q * V;  // output row, first output column
    if (Full || (oc < cols && orow < rows)) store16(out(oc, orow), load16(tile + L::chunk_offset(c, q)));
  }
}

template <int S, int TR, int TC>
struct VecTile {  // thread t's share of the tile at `at`; full tiles (the whole block) unchecked
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
  template <class Out>  // DenseOut, another of its kind, or a pointer to the dense output
  __host__ __device__ static void store(unsigned t, Out out, std::int64_t rows, std::int64_t cols,
                                        Corner at, const std::uint8_t* tile) {
    if constexpr (std::is_pointer_v<Out>) store(t, DenseOut<S>{out, rows}, rows, cols, at, tile);
    else if (full(rows, cols, at)) store_aligned<L, true>(t, out, rows, cols, at, tile);
    else store_aligned<L, false>(t, out, rows, cols, at, tile);
  }
};

/// Tile: how a block loads and stores its tile (the lab's realigned vectors are another Tile).
template <int S, int TR, int TC, class Out = DenseOut<S>, class Tile = VecTile<S, TR, TC>>
__global__ void __launch_bounds__(kThreads)
    transpose_vec(const std::uint8_t* __restrict__ in, Out out, std::int64_t rows,
                  std::int64_t cols, TileGrid grid) {
  __shared__ __align__(16) std::uint8_t tile[Tile::L::kBytes];
  std::int64_t ty, tx;
  grid.tile(blockIdx.x, &ty, &tx);
  const Corner at{ty * TR, tx * TC};
  Tile::load(threadIdx.x, in, rows, cols, at, tile);
  __syncthreads();
  Tile::store(threadIdx.x, out, rows, cols, at, tile);
}

/// Transposes rows x cols S-byte elements whose rows all start on 16 bytes (the caller checks);
/// cudaErrorInvalidValue, and no launch, past 2^31 - 1 tiles.
template <int S, int TR, int TC>
cudaError_t launch_vec(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                       cudaStream_t stream) {
  const std::int64_t blocks = blocks_for(rows, cols, {TR, TC});
  if (blocks < 0) return cudaErrorInvalidValue;
  transpose_vec<S, TR, TC><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const std::uint8_t*>(in), DenseOut<S>{static_cast<std::uint8_t*>(out), rows},
      rows, cols, make_grid(rows, cols, TR, TC, S));
  return cudaGetLastError();
}

}  // namespace step08
