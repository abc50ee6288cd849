// Step 09 lab - two tries at the in-place tile pairs' loss on misaligned rows (n * sizeof(T) not
// a multiple of 32 bytes), both measured slower than the lesson's kernel (LAB.md has the
// numbers and the counters):
//   warps on sectors      the lanes of every tile row are shifted onto the row's 32-byte
//                         sectors, so that no sector is written by two warps of one block;
//   2x2 pairs per block   each block swaps a 2 x 2 group of neighbouring tile pairs, so that
//                         the sectors two neighbouring tiles share are written by one block.
// The lesson's kernel (../inplace.cuh) is this one with neither: Sectors = false, G = 1.
//
//   make step09-lab && ./step09-lab --rows 8191 --cols 8191
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "inplace.cuh"  // the lesson's TilePair, triangle and upper_pair

namespace step09_lab {

/// Where element (row, col) of the n x n matrix at @p a sits in its 32-byte sector, in
/// elements. Only the low bits of the element's index matter, so 32-bit unsigned arithmetic
/// (which wraps) gives them exactly, and cheaply.
template <typename T>
__host__ __device__ inline int sector_offset(const T* a, std::int64_t n, std::int64_t row,
                                             std::int64_t col) {
  constexpr unsigned kSector = 32 / sizeof(T);
  const auto base = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(a) / sizeof(T));
  const unsigned at = base + static_cast<unsigned>(row) * static_cast<unsigned>(n) +
                      static_cast<unsigned>(col);
  return static_cast<int>(at & (kSector - 1));
}

/// One block's swap of the tile at (r0, c0) of the n x n matrix at @p a with its mirror at
/// (c0, r0), as in the lesson's kernel. Threads: TILE x ROWS.
///
/// Sectors: most rows start inside a 32-byte sector, and a warp moving 32 neighbours from the
/// start of a tile row touches one sector more than it needs, which it shares with the next
/// warp. With Sectors, lane p of a tile row moves element p - d, where d is how far into its
/// sector the row's piece begins: every warp covers whole sectors, and a last pass moves the d
/// elements that fall past the last lane. Only the sectors at the tile's two ends are still
/// shared, with the neighbouring tiles.
template <typename T, int TILE, int ROWS, bool Sectors>
__device__ void swap_tile_pair(T* a, std::int64_t n, std::int64_t r0, std::int64_t c0,
                               bool diagonal, T (&tile_ij)[TILE][TILE + 1],
                               T (&tile_ji)[TILE][TILE + 1]) {
  static_assert(TILE % 32 == 0 && TILE % ROWS == 0, "whole warps across a tile row");
  constexpr int kPerThread = TILE / ROWS;
  constexpr int kSector = 32 / static_cast<int>(sizeof(T));  // elements per sector
  const int h = static_cast<int>(n - r0 < TILE ? n - r0 : TILE);
  const int w = static_cast<int>(n - c0 < TILE ? n - c0 : TILE);
  const int tx = threadIdx.x, ty = threadIdx.y;
  // A thread's rows are ROWS apart, a multiple of kSector, so they all begin at the same d: one
  // for the rows of tile (i, j)'s place, one for those of (j, i)'s.
  static_assert(!Sectors || ROWS % kSector == 0, "a thread's rows begin at the same d");
  const int d_ij = Sectors ? sector_offset(a, n, r0 + ty, c0) : 0;
  const int d_ji = Sectors ? sector_offset(a, n, c0 + ty, r0) : 0;
  // The last d elements of each row fall past the last lane: one more pass moves them, kSector
  // lanes per row (lane tx takes row ty + ROWS * q and position TILE + tx % kSector).
  const int q = tx / kSector, past = TILE + tx % kSector;
  const bool tail = Sectors && q < kPerThread;

  auto load = [&](int r, int p) {  // row r of each tile, lane p
    const int x_ij = p - d_ij, x_ji = p - d_ji;
    if (r < h && (!Sectors || x_ij >= 0) && x_ij < w) {
      __pipeline_memcpy_async(&tile_ij[r][x_ij], &a[(r0 + r) * n + c0 + x_ij], sizeof(T));
    }
    if (!diagonal && r < w && (!Sectors || x_ji >= 0) && x_ji < h) {
      __pipeline_memcpy_async(&tile_ji[r][x_ji], &a[(c0 + r) * n + r0 + x_ji], sizeof(T));
    }
  };
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) load(ty + k * ROWS, tx);
  if (tail) load(ty + q * ROWS, past);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();  // every element this block overwrites is in shared memory

  // Tile (i, j) goes to the place of (j, i), so its rows begin d_ji into their sectors, and
  // the other way round.
  auto store = [&](int r, int p) {
    const int x_ij = p - d_ji, x_ji = p - d_ij;
    if (r < w && (!Sectors || x_ij >= 0) && x_ij < h) {
      a[(c0 + r) * n + r0 + x_ij] = tile_ij[x_ij][r];
    }
    if (!diagonal && r < h && (!Sectors || x_ji >= 0) && x_ji < w) {
      a[(r0 + r) * n + c0 + x_ji] = tile_ji[x_ji][r];
    }
  };
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) store(ty + k * ROWS, tx);
  if (tail) store(ty + q * ROWS, past);
}

/// Block k of matrix b owns group k of the upper triangle of G x G-tile groups and swaps every
/// tile of it with its mirror, one pair after the other through the same two shared tiles. A
/// group on the diagonal takes its tiles (s, t) with s <= t only: their mirrors are its others.
template <typename T, int TILE, int ROWS, bool Sectors, int G>
__global__ void __launch_bounds__(TILE * ROWS, 2048 / (TILE * ROWS))
    transpose_pairs_lab(T* m, std::int64_t n, unsigned pairs_per_matrix) {
  __shared__ T tile_ij[TILE][TILE + 1];
  __shared__ T tile_ji[TILE][TILE + 1];
  const unsigned matrix = blockIdx.x / pairs_per_matrix;
  const step09::TilePair group = step09::upper_pair(blockIdx.x - matrix * pairs_per_matrix);
  T* const a = m + static_cast<std::int64_t>(matrix) * n * n;
#pragma unroll
  for (int s = 0; s < G; ++s) {
#pragma unroll
    for (int t = 0; t < G; ++t) {
      const std::int64_t r0 = (static_cast<std::int64_t>(group.i) * G + s) * TILE;
      const std::int64_t c0 = (static_cast<std::int64_t>(group.j) * G + t) * TILE;
      // The same for the whole block: no divergence. (With G = 1 every tile is inside.)
      if (G > 1 && ((group.i == group.j && t < s) || r0 >= n || c0 >= n)) continue;
      if (s + t > 0) __syncthreads();  // the previous pair's reads of the shared tiles are done
      const bool diagonal = group.i == group.j && s == t;
      swap_tile_pair<T, TILE, ROWS, Sectors>(a, n, r0, c0, diagonal, tile_ij, tile_ji);
    }
  }
}

/// The launcher, with the lesson's refusals: square matrices only, and a grid of at most
/// 2^31 - 1 blocks.
template <typename T, int TILE, int ROWS, bool Sectors, int G>
cudaError_t transpose_inplace_lab(T* m, std::int64_t rows, std::int64_t cols, std::int64_t batch,
                                  cudaStream_t stream = nullptr) {
  if (rows != cols || rows < 1 || batch < 1) return cudaErrorInvalidValue;
  const std::int64_t groups = (rows + TILE * G - 1) / (TILE * G);  // per side
  if (groups > 65535) return cudaErrorInvalidValue;
  const std::int64_t pairs = groups * (groups + 1) / 2;
  if (pairs > 0x7FFFFFFF / batch) return cudaErrorInvalidValue;
  transpose_pairs_lab<T, TILE, ROWS, Sectors, G>
      <<<static_cast<unsigned>(pairs * batch), dim3(TILE, ROWS), 0, stream>>>(
          m, rows, static_cast<unsigned>(pairs));
  return cudaGetLastError();
}

}  // namespace step09_lab
