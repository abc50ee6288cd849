// Step 07 - 64 x 64 tiles. Step 06 moved a 32 x 32 tile per block with float4 accesses; here
// a block moves a 64 x 64 tile (16 KB): each of its threads loads several float4s (64 bytes
// with 256 threads) before it stores any, the tile is swizzled so that float4 row writes and
// column reads are both free of bank conflicts, and the output is written as float4s too. One
// variant (Smem::quads) turns the tile in registers instead, 4 x 4 floats at a time.
// Blocks are numbered along one grid dimension, so the order in which tiles run is ours to
// choose (tile_of).
//
//   make step07 && ./step07
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace step07 {

constexpr int kTile = 64;                 // the tile is kTile x kTile floats: 16 KB
constexpr int kSlots = kTile / 4;         // float4 slots per tile row
constexpr int kVectors = kTile * kSlots;  // float4s per tile

enum class Smem {
  // float tile[64][64], float4 slot q of row r stored at slot q ^ (r / 4): one 16-byte shared
  // store per float4, and conflict-free column reads (the bank model in test.cu checks both).
  swizzled,
  // float tile[64][65]: conflict-free too with this thread layout, but a row no longer starts on
  // a 16-byte boundary, so each float4 goes into shared memory as four 4-byte stores.
  padded,
  // The swizzled layout, but the tile is turned in registers, 4 x 4 floats at a time, before
  // it goes in: shared memory holds the output tile, and every shared access is one float4,
  // on the way out too (see quad below).
  quads,
};

template <Smem S>
constexpr int kPitch = S == Smem::padded ? kTile + 1 : kTile;  // words per tile row

// The word index of tile element (r, c).
template <Smem S>
__host__ __device__ constexpr int tile_index(int r, int c) {
  if constexpr (S == Smem::padded) {
    return r * kPitch<S> + c;
  } else {
    return r * kTile + ((c / 4) ^ (r / 4 % kSlots)) * 4 + c % 4;
  }
}

// Where the k-th float4 of thread t goes: tile row `row`, float4 slot `slot`. One pass of the
// block (fixed k) covers THREADS / 8 rows x 8 slots; the passes go down the first 8 slots of the
// tile, then down the last 8. A warp's 32 float4s are 4 rows x 8 slots: four whole 128-byte
// lines of global memory, and (with the swizzle) 8 different 16-byte bank groups in shared
// memory. Each thread's rows and slots are its first ones plus constants, so its addresses are
// one base plus constant offsets.
struct Place {
  int row;
  int slot;
};
template <int THREADS>
__host__ __device__ constexpr Place place(unsigned t, int k) {
  constexpr int kRowsPerPass = THREADS / 8;
  return {static_cast<int>(t / 8) + kRowsPerPass * k % kTile,
          static_cast<int>(t % 8) + 8 * (kRowsPerPass * k / kTile)};
}

// Smem::quads: the j-th 4 x 4 quad of thread t, tile rows row .. row + 3 of float4 slot `slot`.
// A warp's 32 quads are 2 quad rows x 16 slots: for each of a quad's 4 rows, the warp loads two
// whole 256-byte pieces of input rows.
template <int THREADS>
__host__ __device__ constexpr Place quad(unsigned t, int j) {
  const unsigned q = t + THREADS * j;
  return {static_cast<int>(q / kSlots) * 4, static_cast<int>(q % kSlots)};
}

struct Tile {
  unsigned row;
  unsigned col;
};

// The tile that block b moves. BAND == 1: row-major order, tile columns fastest (what a 2D grid
// does). BAND == 0: column-major order, down each column of tiles, then the next column: the
// blocks running at the same time read 256-byte pieces of many input rows, and write whole
// stretches of the few output rows that those tile columns become. BAND > 1: the tile rows are
// grouped in bands of BAND rows, and each band is walked in chunks of CHUNK tile columns, row
// by row inside a chunk. CHUNK == 1 walks a band column by column, so the blocks running at the
// same time span BAND tile rows whatever the matrix width: BAND x 256 contiguous bytes in each
// output row they write. CHUNK == BAND walks squares of BAND x BAND tiles: the blocks running
// at the same time then touch few rows of the input AND few rows of the output, i.e. few memory
// pages on both sides (see the lesson).
template <int BAND, int CHUNK = 1>
__host__ __device__ Tile tile_of(unsigned b, unsigned tiles_x, unsigned tiles_y) {
  if constexpr (BAND == 0) {
    return {b % tiles_y, b / tiles_y};
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

// Row @p r of a row-major matrix with @p width floats per row, as an array of float4s. Indexing
// whole float4s off the row keeps the compiler's 16-byte accesses whole: a float4 pointer made
// from `float* + offset` led it to split stores into four 4-byte ones (check the SASS).
__device__ inline const float4* float4_row(const float* m, std::int64_t r, std::int64_t width) {
  return reinterpret_cast<const float4*>(m + r * width);
}
__device__ inline float4* float4_row(float* m, std::int64_t r, std::int64_t width) {
  return reinterpret_cast<float4*>(m + r * width);
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

// Blocks per SM whose registers we ask the compiler to fit: a full SM of 2048 threads, but at
// most 9 (shared memory has room for 13 tiles of 16 KB; 9 blocks of 128 threads leave 56
// registers per thread, enough to hold 8 float4s without spilling).
constexpr int min_blocks(int threads) { return 2048 / threads < 9 ? 2048 / threads : 9; }

// One block per 64 x 64 tile, THREADS threads, kVectors / THREADS float4s per thread each way.
template <int THREADS, Smem S, int BAND, bool STREAM, int CHUNK>
__global__ void __launch_bounds__(THREADS, min_blocks(THREADS))
    transpose_tile64(const float* __restrict__ in, float* __restrict__ out, std::int64_t rows,
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
      // All loads first: kPerThread independent 16-byte loads in flight per thread.
      float4 v[kPerThread];
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        const Place p = place<THREADS>(threadIdx.x, k);
        v[k] = load4<STREAM>(float4_row(in, r0 + p.row, cols) + c0 / 4 + p.slot);
      }
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        const Place p = place<THREADS>(threadIdx.x, k);
        float* dst = &tile[tile_index<S>(p.row, 4 * p.slot)];
        if constexpr (S == Smem::swizzled) {
          *reinterpret_cast<float4*>(dst) = v[k];
        } else {
          dst[0] = v[k].x, dst[1] = v[k].y, dst[2] = v[k].z, dst[3] = v[k].w;
        }
      }
      __syncthreads();
      // The same placement on the way out: output row c0 + p.row is tile column c = p.row, and
      // its float4 slot p.slot holds tile rows 4*p.slot .. 4*p.slot + 3 of that column.
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
    // Edge path: a tile that sticks out of the matrix, or a matrix whose rows are not 16-byte
    // aligned. One float per access, 32 consecutive threads on 32 consecutive columns, every
    // access checked. (The swizzled tile's column read is 4-way conflicted here; only edge
    // tiles pay for it.)
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

// Transposes a rows x cols float matrix with 64 x 64 tiles. Tiles inside the matrix take the
// float4 path when every input and output row is 16-byte aligned (rows % 4 == 0, cols % 4 == 0
// and aligned pointers); edge tiles, and every tile of any other shape, take the scalar path:
// every shape is transposed correctly. Returns cudaErrorInvalidValue, without launching, for an
// empty matrix or more tiles than a grid can have (2^31 - 1).
template <int THREADS, Smem S, int BAND = 1, bool STREAM = false, int CHUNK = 1>
cudaError_t transpose(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream = nullptr) {
  static_assert(THREADS % 32 == 0 && kVectors % THREADS == 0 && THREADS <= 512,
                "whole warps, an even share of the float4s, a pass of at most 64 rows");
  static_assert(BAND >= 0, "0 (down the columns) or a band of at least one tile row");
  static_assert(S != Smem::quads || THREADS <= kVectors / 4, "at least one quad per thread");
  if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
  const std::int64_t tiles_x = (cols + kTile - 1) / kTile, tiles_y = (rows + kTile - 1) / kTile;
  if (tiles_x > 0x7FFFFFFF / tiles_y) return cudaErrorInvalidValue;
  const bool vectors_ok = rows % 4 == 0 && cols % 4 == 0 &&
                          reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
                          reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  const unsigned blocks = static_cast<unsigned>(tiles_x * tiles_y);
  transpose_tile64<THREADS, S, BAND, STREAM, CHUNK><<<blocks, THREADS, 0, stream>>>(
      in, out, rows, cols, static_cast<unsigned>(tiles_x), static_cast<unsigned>(tiles_y),
      vectors_ok);
  return cudaGetLastError();
}

}  // namespace step07
