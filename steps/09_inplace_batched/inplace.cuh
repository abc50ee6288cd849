// Step 09, part 1 - a square in place, by tile pairs (README.md). What changed since step 08:
// there is no second buffer. The block that owns tile (i, j) also owns its mirror (j, i): it
// reads BOTH tiles into shared memory, waits at the barrier, then writes each one, transposed,
// where the other one was. Only the upper triangle of pairs (i <= j) is launched, so every pair
// is swapped exactly once and no block sits idle. The same kernel transposes a batch of square
// matrices: the matrix index is folded into blockIdx.x with the pair index. New tool: cp.async
// (__pipeline_memcpy_async) copies global memory straight into shared memory, so that both
// tiles are in flight at once without holding them in registers.
//
//   make step09 && ./step09 --mode inplace --rows 16384 --cols 16384
//   ./step09 --mode inplace-batched --rows 256 --cols 256 --batch 1024
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace step09 {

/// One block's work: tile (i, j) of the upper triangle (i <= j) and its mirror (j, i).
struct TilePair {
  unsigned i;
  unsigned j;
};

/// The j-th triangular number j (j + 1) / 2: how many pairs the columns left of column j hold.
__host__ __device__ inline unsigned long long triangle(unsigned long long j) {
  return j * (j + 1) / 2;
}

/// The k-th pair of the upper triangle, counted column by column (k = triangle(j) + i):
///
///            j=0  j=1  j=2  j=3
///     i=0     0    1    3    6
///     i=1          2    4    7
///     i=2               5    8
///     i=3                    9
///
/// j is the largest whole number with triangle(j) <= k, the root of j^2 + j - 2k = 0 rounded
/// down. A float keeps 24 bits, so past k = 2^23 that root can come out one too large (a check
/// of every k below 2^31 finds it never more, and never too small); the loops correct it
/// exactly, so no pair is missed or visited twice.
__host__ __device__ inline TilePair upper_pair(unsigned k) {
  unsigned j = static_cast<unsigned>((sqrtf(8.0f * static_cast<float>(k) + 1.0f) - 1.0f) * 0.5f);
  while (triangle(j) > k) --j;
  while (triangle(j + 1) <= k) ++j;
  return {static_cast<unsigned>(k - triangle(j)), j};
}

/// Transposes square matrices in their own buffer, one tile pair per block: block k of matrix b
/// (blockIdx.x = b * pairs_per_matrix + k) swaps pair k of the upper triangle. Each matrix is
/// side x side, in rows n elements apart; matrix b starts at row (b / across) side, column
/// (b % across) side. A batch of squares: side = n, across = 1. Part 3's rectangle: the c x c
/// blocks of a grid `across` blocks wide (RECTANGLES.md). Threads: TILE x ROWS; each thread moves
/// TILE / ROWS rows of each tile.
///
/// @p m is read and written through the one pointer. __restrict__ on it would be legal (it
/// promises only that no OTHER pointer reaches these elements) and is not needed. What an
/// in-place kernel must not do is load through the read-only path (a `const T* __restrict__`
/// view of the same data, or __ldg): those loads are not coherent with the kernel's own stores.
///
/// The tiles travel from global to shared memory with cp.async, not through registers: a block
/// must hold both of its tiles before it may write anything, so all of its loads should be in
/// flight at once. Staged through registers, they are not: capped at 32 registers for a full
/// SM of threads (the launch bounds), the compiler interleaves loads and shared stores and
/// waits for each load in turn; uncapped, fewer blocks fit on an SM. (REGISTERS = true stages
/// them through registers all the same, with the hook below: the lab times what that costs.)
template <typename T, int TILE, int ROWS, typename Tile>
__device__ void stage_through_registers(const T* a, std::int64_t n, std::int64_t r0,
                                        std::int64_t c0, int h, int w, bool diagonal,
                                        Tile& tile_ij, Tile& tile_ji);  // lab/register_pairs.cuh

template <typename T, int TILE, int ROWS, bool REGISTERS = false>
__global__ void __launch_bounds__(TILE * ROWS, 2048 / (TILE * ROWS))
    transpose_inplace_pairs(T* m, std::int64_t n, unsigned pairs_per_matrix, std::int64_t side,
                            unsigned across) {
  static_assert(TILE % 32 == 0 && TILE % ROWS == 0, "whole warps across a tile row");
  constexpr int kPerThread = TILE / ROWS;
  // Two tiles, padded by one column so that reading a column hits 32 different banks.
  __shared__ T tile_ij[TILE][TILE + 1];
  __shared__ T tile_ji[TILE][TILE + 1];

  const unsigned matrix = blockIdx.x / pairs_per_matrix;
  const TilePair pair = upper_pair(blockIdx.x - matrix * pairs_per_matrix);
  T* const a = m + (matrix / across) * side * n + (matrix % across) * side;
  // Tile (i, j) starts at row r0, column c0; its mirror (j, i) at row c0, column r0. At the
  // bottom and right edges a tile is cut short: (i, j) is h x w, its mirror w x h.
  const std::int64_t r0 = static_cast<std::int64_t>(pair.i) * TILE;
  const std::int64_t c0 = static_cast<std::int64_t>(pair.j) * TILE;
  const int h = static_cast<int>(side - r0 < TILE ? side - r0 : TILE);
  const int w = static_cast<int>(side - c0 < TILE ? side - c0 : TILE);
  // A diagonal tile is its own mirror: read, and later written, once. The same for the whole
  // block, so no divergence.
  const bool diagonal = pair.i == pair.j;
  const int tx = threadIdx.x, ty = threadIdx.y;

  // 1. Copy both tiles into shared memory, every copy of the thread in flight at once.
  if constexpr (REGISTERS) {
    stage_through_registers<T, TILE, ROWS>(a, n, r0, c0, h, w, diagonal, tile_ij, tile_ji);
  } else {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int r = ty + k * ROWS;
      if (r < h && tx < w) {
        __pipeline_memcpy_async(&tile_ij[r][tx], &a[(r0 + r) * n + c0 + tx], sizeof(T));
      }
      if (!diagonal && r < w && tx < h) {
        __pipeline_memcpy_async(&tile_ji[r][tx], &a[(c0 + r) * n + r0 + tx], sizeof(T));
      }
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);  // this thread's copies have landed...
  }
  // 2. ...and after the barrier everyone's: every element this block will overwrite is in
  //    shared memory, and no other block reads or writes these two tiles. Writing over the
  //    input is safe from here on.
  __syncthreads();

  // 3. Element (r, c) of the new tile (j, i) is element (c, r) of the old tile (i, j), and the
  //    other way round. Rows of the output are written by consecutive threads (coalesced); the
  //    transposition happens in the shared-memory read, down a padded column.
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int r = ty + k * ROWS;
    if (r < w && tx < h) a[(c0 + r) * n + r0 + tx] = tile_ij[tx][r];
    if (!diagonal && r < h && tx < w) a[(r0 + r) * n + c0 + tx] = tile_ji[tx][r];
  }
}

/// Transposes @p batch square matrices of @p rows x @p cols, stored back to back at @p m, in
/// place. Returns cudaErrorInvalidValue without launching when rows != cols (a rectangular
/// matrix in place is part 3's problem, RECTANGLES.md), or when the pairs of the whole batch
/// do not fit in one grid (2^31 - 1 blocks).
template <typename T, int TILE, int ROWS, bool REGISTERS = false>
cudaError_t transpose_inplace(T* m, std::int64_t rows, std::int64_t cols, std::int64_t batch,
                              cudaStream_t stream = nullptr) {
  if (rows != cols || rows < 1 || batch < 1) return cudaErrorInvalidValue;
  const std::int64_t tiles = (rows + TILE - 1) / TILE;  // per side
  if (tiles > 65535) return cudaErrorInvalidValue;      // keeps triangle(tiles) below 2^31
  const std::int64_t pairs = tiles * (tiles + 1) / 2;   // the upper triangle, diagonal included
  if (pairs > 0x7FFFFFFF / batch) return cudaErrorInvalidValue;
  const unsigned blocks = static_cast<unsigned>(pairs * batch);
  transpose_inplace_pairs<T, TILE, ROWS, REGISTERS>
      <<<blocks, dim3(TILE, ROWS), 0, stream>>>(m, rows, static_cast<unsigned>(pairs), rows, 1);
  return cudaGetLastError();
}

}  // namespace step09
