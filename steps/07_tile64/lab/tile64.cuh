// Step 07's lab - the 64 x 64 float4 kernel with every switch that was tried on it: the shared
// layout (the lesson's swizzle; the same swizzle with signed index arithmetic; a padded tile; the
// tile turned in registers, "quads"), the order of the tiles (plain, down the columns, bands,
// squares) and a cache hint (streaming). Each lab variant changes one of them; LAB.md says what
// each was for and what it measured. The lesson's kernel (../transpose.cuh) is this one with the
// swizzle, down the columns, no hint.
//
//   make step07-lab && ./step07-lab
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "transpose.cuh"  // the lesson's tile, placement, float4 rows and swizzle

namespace step07lab {

using step07::float4_row;
using step07::kSlots;
using step07::kTile;
using step07::kVectors;
using step07::Place;
using step07::place;
using step07::Tile;

enum class Smem {
  // The lesson's layout: float4 slot q of row r at slot q ^ (r / 4), unsigned arithmetic.
  swizzled,
  // The same layout written with signed int / and %, as this step's kernel first was: the same
  // words. The compiler must round negative quotients toward zero, which costs instructions on
  // the edge path; on the float4 path it proves the operands non-negative and emits the same
  // code as for the unsigned layout.
  signed_swizzle,
  // float tile[64][65]: conflict-free too with this placement, but a row no longer starts on a
  // 16-byte boundary, so each float4 goes into shared memory as four 4-byte stores.
  padded,
  // The lesson's layout, but the tile is turned in registers, 4 x 4 floats at a time, before it
  // goes in: shared memory holds the output tile, and every shared access is one float4.
  quads,
};

template <Smem S>
constexpr int kPitch = S == Smem::padded ? kTile + 1 : kTile;  // words per tile row

// The word index of tile element (r, c).
template <Smem S>
__host__ __device__ constexpr int tile_index(int r, int c) {
  if constexpr (S == Smem::padded) {
    return r * kPitch<S> + c;
  } else if constexpr (S == Smem::signed_swizzle) {
    return r * kTile + ((c / 4) ^ (r / 4 % kSlots)) * 4 + c % 4;
  } else {
    return static_cast<int>(step07::tile_index(r, c));
  }
}

// Smem::quads: the j-th 4 x 4 quad of thread t, tile rows row .. row + 3 of float4 slot `slot`.
// A warp's 32 quads are 2 quad rows x 16 slots: for each of a quad's 4 rows, the warp loads two
// whole 256-byte pieces of input rows.
template <int THREADS>
__host__ __device__ constexpr Place quad(unsigned t, int j) {
  const unsigned q = t + THREADS * j;
  return {static_cast<int>(q / kSlots) * 4, static_cast<int>(q % kSlots)};
}

// The tile that block b moves. BAND == 1: row-major order, tile columns fastest (what a 2D grid
// does: "plain"). BAND == 0: down each column of tiles (the lesson's order). BAND > 1: the tile
// rows are grouped in bands of BAND rows, and each band is walked in chunks of CHUNK tile
// columns, row by row inside a chunk. CHUNK == 1 walks a band column by column, so the blocks
// running at the same time span BAND tile rows: BAND x 256 contiguous bytes in each output row
// they write. CHUNK == BAND walks squares of BAND x BAND tiles: the blocks running at the same
// time then touch few rows of the input AND few rows of the output, i.e. few memory pages.
template <int BAND, int CHUNK = 1>
__host__ __device__ Tile tile_of(unsigned b, unsigned tiles_x, unsigned tiles_y) {
  if constexpr (BAND == 0) {
    return step07::tile_of(b, tiles_y);
  } else if constexpr (BAND == 1) {
    return {b / tiles_x, b % tiles_x};
  } else {
    const unsigned first = b / tiles_x / BAND * BAND;  // first tile row of b's band
    const unsigned height = tiles_y - first < BAND ? tiles_y - first : BAND;  // last band: less
    const unsigned i = b - first * tiles_x;            // position inside the band
    const unsigned chunk = i / (CHUNK * height);       // every chunk but the last is full
    const unsigned j = i - chunk * CHUNK * height;     // position inside the chunk
    const unsigned left = tiles_x - chunk * CHUNK;     // columns left for the last chunk
    const unsigned width = left < CHUNK ? left : CHUNK;
    return {first + j / width, chunk * CHUNK + j % width};
  }
}

// Global accesses, optionally with the streaming hint (.cs, "evict first": the data is touched
// once, so it need not stay in the caches).
template <bool STREAM>
__device__ float4 load4(const float4* p) {
  if constexpr (STREAM) return __ldcs(p);
  else return *p;
}
template <bool STREAM>
__device__ void store4(float4* p, float4 v) {
  if constexpr (STREAM) __stcs(p, v);
  else *p = v;
}

// One block per 64 x 64 tile, THREADS threads, kVectors / THREADS float4s per thread each way.
template <int THREADS, Smem S, int BAND, bool STREAM, int CHUNK>
__global__ void __launch_bounds__(THREADS, step07::min_blocks(THREADS))
    transpose_tile64_lab(const float* __restrict__ in, float* __restrict__ out, std::int64_t rows,
                         std::int64_t cols, unsigned tiles_x, unsigned tiles_y, bool vectors_ok) {
  constexpr int kPerThread = kVectors / THREADS;
  __shared__ alignas(16) float tile[kTile * kPitch<S>];

  const Tile t = tile_of<BAND, CHUNK>(blockIdx.x, tiles_x, tiles_y);
  const std::int64_t r0 = static_cast<std::int64_t>(t.row) * kTile;
  const std::int64_t c0 = static_cast<std::int64_t>(t.col) * kTile;
  const int tile_rows = rows - r0 < kTile ? static_cast<int>(rows - r0) : kTile;
  const int tile_cols = cols - c0 < kTile ? static_cast<int>(cols - c0) : kTile;

  if (vectors_ok && tile_rows == kTile && tile_cols == kTile) {
    if constexpr (S == Smem::quads) {
      // Each thread loads whole 4 x 4 quads, 4 float4s from 4 rows, and turns them in registers:
      // column e of a quad (the e-th float of its 4 float4s) is 4 floats of output row
      // c0 + 4 * slot + e. Those go into the output tile in shared memory as one float4, and
      // come back out along output rows as float4s.
      constexpr int kQuads = kVectors / 4 / THREADS;
      float4 v[kQuads][4];
#pragma unroll
      for (int j = 0; j < kQuads; ++j) {
        const Place q = quad<THREADS>(threadIdx.x, j);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          v[j][i] = load4<STREAM>(float4_row(in, r0 + q.row + i, cols) + c0 / 4 + q.slot);
        }
      }
#pragma unroll
      for (int j = 0; j < kQuads; ++j) {
        const Place q = quad<THREADS>(threadIdx.x, j);
        const float4* a = v[j];
        const float4 turned[4] = {make_float4(a[0].x, a[1].x, a[2].x, a[3].x),
                                  make_float4(a[0].y, a[1].y, a[2].y, a[3].y),
                                  make_float4(a[0].z, a[1].z, a[2].z, a[3].z),
                                  make_float4(a[0].w, a[1].w, a[2].w, a[3].w)};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          *reinterpret_cast<float4*>(&tile[tile_index<S>(4 * q.slot + e, q.row)]) = turned[e];
        }
      }
      __syncthreads();
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        const Place p = place<THREADS>(threadIdx.x, k);  // output row c0 + p.row, slot p.slot
        const float4 o = *reinterpret_cast<const float4*>(&tile[tile_index<S>(p.row, 4 * p.slot)]);
        store4<STREAM>(float4_row(out, c0 + p.row, rows) + r0 / 4 + p.slot, o);
      }
    } else {
      float4 v[kPerThread];  // all loads first: kPerThread 16-byte loads in flight per thread
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        const Place p = place<THREADS>(threadIdx.x, k);
        v[k] = load4<STREAM>(float4_row(in, r0 + p.row, cols) + c0 / 4 + p.slot);
      }
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        const Place p = place<THREADS>(threadIdx.x, k);
        float* dst = &tile[tile_index<S>(p.row, 4 * p.slot)];
        if constexpr (S == Smem::padded) {
          dst[0] = v[k].x, dst[1] = v[k].y, dst[2] = v[k].z, dst[3] = v[k].w;
        } else {
          *reinterpret_cast<float4*>(dst) = v[k];
        }
      }
      __syncthreads();
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        const Place p = place<THREADS>(threadIdx.x, k);
        const int c = p.row, r = 4 * p.slot;
        const float4 o = make_float4(tile[tile_index<S>(r, c)], tile[tile_index<S>(r + 1, c)],
                                     tile[tile_index<S>(r + 2, c)], tile[tile_index<S>(r + 3, c)]);
        store4<STREAM>(float4_row(out, c0 + c, rows) + r0 / 4 + p.slot, o);
      }
    }
  } else {
    // Edge path, as in the lesson: one float per access, every access checked.
    const float* src = in + r0 * cols + c0;
    float* dst = out + c0 * rows + r0;
#pragma unroll 4
    for (int k = 0; k < kTile * kTile / THREADS; ++k) {
      const int e = threadIdx.x + k * THREADS, r = e / kTile, c = e % kTile;
      if (r < tile_rows && c < tile_cols) tile[tile_index<S>(r, c)] = src[r * cols + c];
    }
    __syncthreads();
#pragma unroll 4
    for (int k = 0; k < kTile * kTile / THREADS; ++k) {
      const int e = threadIdx.x + k * THREADS, c = e / kTile, r = e % kTile;  // out (c0+c, r0+r)
      if (r < tile_rows && c < tile_cols) dst[c * rows + r] = tile[tile_index<S>(r, c)];
    }
  }
}

// The launcher, with the lesson's preconditions and refusals.
template <int THREADS, Smem S, int BAND = 1, bool STREAM = false, int CHUNK = 1>
cudaError_t transpose(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream = nullptr) {
  static_assert(THREADS % 32 == 0 && kVectors % THREADS == 0 && THREADS <= 512,
                "whole warps, an even share of the float4s, a pass of at most 64 rows");
  static_assert(BAND >= 0, "0 (down the columns) or a band of at least one tile row");
  static_assert(S != Smem::quads || THREADS <= kVectors / 4, "at least one quad per thread");
  const step07::Grid g = step07::grid_for(in, out, rows, cols);
  if (g.blocks == 0) return cudaErrorInvalidValue;
  transpose_tile64_lab<THREADS, S, BAND, STREAM, CHUNK><<<g.blocks, THREADS, 0, stream>>>(
      in, out, rows, cols, g.tiles_x, g.tiles_y, g.vectors_ok);
  return cudaGetLastError();
}

}  // namespace step07lab
