// Step 07 - 64 x 64 tiles, enough bytes in flight, and the tiles walked down the columns.
// Since step 06 (a 32 x 32 tile moved with float4s): a block moves a 64 x 64 tile (16 KB of
// shared memory); each of its THREADS threads loads 1024 / THREADS float4s, 16384 / THREADS
// bytes, before it stores any (what Little's law counts); the tile is swizzled by whole float4s,
// so the 16-byte row stores and the column reads are both free of bank conflicts; the output is
// written as float4s too; and block b moves the b-th tile going down the columns of tiles, not
// along the rows.
//
//   make step07 && ./step07
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace step07 {

constexpr int kTile = 64;                 // the tile is kTile x kTile floats: 16 KB
constexpr int kSlots = kTile / 4;         // float4 slots per tile row
constexpr int kVectors = kTile * kSlots;  // float4s per tile

// The word of tile element (r, c): float4 slot q of row r is stored at slot q ^ (r / 4). A float4
// stays whole and 16-byte aligned (one shared store), and a column read, which visits rows 4
// apart, finds each on another slot: 32 different banks. Unsigned, so / and % are a shift and a
// mask whatever the compiler can prove (on the float4 path it proves signed operands
// non-negative too: the lab's signed row compiles to the same instructions there).
__host__ __device__ constexpr unsigned tile_index(unsigned r, unsigned c) {
  return r * kTile + ((c / 4) ^ (r / 4 % kSlots)) * 4 + c % 4;
}

// Where the k-th float4 of thread t goes: tile row `row`, float4 slot `slot`. One pass of the
// block (fixed k) covers THREADS / 8 rows x 8 slots; the passes go down the first 8 slots of the
// tile, then down the last 8. A warp's 32 float4s are 4 rows x 8 slots: four whole 128-byte lines
// of global memory. Each thread's rows and slots are its first ones plus constants, so the
// compiler keeps one base address and constant offsets, and registers for all the loads.
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

// The tile that block b moves: down each column of tiles, then the next column. The blocks that
// run at the same time then write long stretches of few output rows (see the lesson).
struct Tile {
  unsigned row;
  unsigned col;
};
__host__ __device__ constexpr Tile tile_of(unsigned b, unsigned tiles_y) {
  return {b % tiles_y, b / tiles_y};
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

// Blocks per SM whose registers we ask the compiler to fit: a full SM of 2048 threads, but at
// most 9 (9 blocks of 128 threads leave 56 registers per thread, room for 8 float4s).
constexpr int min_blocks(int threads) { return 2048 / threads < 9 ? 2048 / threads : 9; }

// One block per 64 x 64 tile, THREADS threads, kVectors / THREADS float4s per thread each way.
template <int THREADS>
__global__ void __launch_bounds__(THREADS, min_blocks(THREADS))
    transpose_tile64(const float* __restrict__ in, float* __restrict__ out, std::int64_t rows,
                     std::int64_t cols, unsigned tiles_y, bool vectors_ok) {
  constexpr int kPerThread = kVectors / THREADS;
  __shared__ alignas(16) float tile[kTile * kTile];

  const Tile t = tile_of(blockIdx.x, tiles_y);
  const std::int64_t r0 = static_cast<std::int64_t>(t.row) * kTile;
  const std::int64_t c0 = static_cast<std::int64_t>(t.col) * kTile;
  const int tile_rows = rows - r0 < kTile ? static_cast<int>(rows - r0) : kTile;
  const int tile_cols = cols - c0 < kTile ? static_cast<int>(cols - c0) : kTile;

  if (vectors_ok && tile_rows == kTile && tile_cols == kTile) {
    // All loads first: kPerThread independent 16-byte loads in flight per thread.
    float4 v[kPerThread];
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const Place p = place<THREADS>(threadIdx.x, k);
      v[k] = float4_row(in, r0 + p.row, cols)[c0 / 4 + p.slot];
    }
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const Place p = place<THREADS>(threadIdx.x, k);
      *reinterpret_cast<float4*>(&tile[tile_index(p.row, 4 * p.slot)]) = v[k];
    }
    __syncthreads();
    // The same placement on the way out: output row c0 + p.row is tile column c = p.row, and its
    // float4 slot p.slot holds tile rows 4 * p.slot .. 4 * p.slot + 3 of that column.
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const Place p = place<THREADS>(threadIdx.x, k);
      const int c = p.row, r = 4 * p.slot;
      const float4 o = make_float4(tile[tile_index(r, c)], tile[tile_index(r + 1, c)],
                                   tile[tile_index(r + 2, c)], tile[tile_index(r + 3, c)]);
      float4_row(out, c0 + c, rows)[r0 / 4 + p.slot] = o;
    }
  } else {
    // Edge path: a tile that sticks out of the matrix, or a matrix whose rows are not 16-byte
    // aligned. One float per access, 32 consecutive threads on 32 consecutive columns, every
    // access checked. (The column read is 4-way conflicted here; only edge tiles pay for it.)
    const float* src = in + r0 * cols + c0;
    float* dst = out + c0 * rows + r0;
#pragma unroll 4
    for (int k = 0; k < kTile * kTile / THREADS; ++k) {
      const int e = threadIdx.x + k * THREADS, r = e / kTile, c = e % kTile;
      if (r < tile_rows && c < tile_cols) tile[tile_index(r, c)] = src[r * cols + c];
    }
    __syncthreads();
#pragma unroll 4
    for (int k = 0; k < kTile * kTile / THREADS; ++k) {
      const int e = threadIdx.x + k * THREADS, c = e / kTile, r = e % kTile;  // out (c0+c, r0+r)
      if (r < tile_rows && c < tile_cols) dst[c * rows + r] = tile[tile_index(r, c)];
    }
  }
}

// The launch of a rows x cols transpose: one block per tile, and whether the float4 path is
// legal. blocks = 0 for an empty matrix or more tiles than a grid can have (2^31 - 1).
struct Grid {
  unsigned blocks, tiles_x, tiles_y;
  bool vectors_ok;
};

inline Grid grid_for(const float* in, const float* out, std::int64_t rows, std::int64_t cols) {
  if (rows < 1 || cols < 1) return {};
  const std::int64_t tiles_x = (cols + kTile - 1) / kTile, tiles_y = (rows + kTile - 1) / kTile;
  if (tiles_x > 0x7FFFFFFF / tiles_y) return {};
  const bool vectors_ok = rows % 4 == 0 && cols % 4 == 0 &&
                          reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
                          reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  return {static_cast<unsigned>(tiles_x * tiles_y), static_cast<unsigned>(tiles_x),
          static_cast<unsigned>(tiles_y), vectors_ok};
}

// Transposes a rows x cols float matrix with 64 x 64 tiles. Tiles inside the matrix take the
// float4 path when every input and output row is 16-byte aligned (rows % 4 == 0, cols % 4 == 0
// and aligned pointers); edge tiles, and every tile of any other shape, take the scalar path:
// every shape is transposed correctly. Returns cudaErrorInvalidValue, without launching, for an
// empty matrix or more tiles than a grid can have (2^31 - 1).
template <int THREADS>
cudaError_t transpose(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream = nullptr) {
  static_assert(THREADS % 32 == 0 && kVectors % THREADS == 0 && THREADS <= 512,
                "whole warps, an even share of the float4s, a pass of at most 64 rows");
  const Grid g = grid_for(in, out, rows, cols);
  if (g.blocks == 0) return cudaErrorInvalidValue;
  transpose_tile64<THREADS><<<g.blocks, THREADS, 0, stream>>>(in, out, rows, cols, g.tiles_y,
                                                               g.vectors_ok);
  return cudaGetLastError();
}

}  // namespace step07
