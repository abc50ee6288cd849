// Step 09, part 1 - the in-place square transpose, by tile pairs. What changed since step 08:
// there is no second buffer. The block that owns tile (i, j) also owns its mirror (j, i): it
// reads BOTH tiles into shared memory, waits at the barrier, then writes each one, transposed,
// where the other one was. Only the upper triangle of pairs (j >= i) is launched, so every pair
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

/// One block's work: tile (i, j) of the upper triangle (i <= j) and its mirror (j, i); with
/// groups of G x G tiles (an experiment of the kernel below), group (i, j) and its mirror.
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
/// down. A float keeps 24 bits, so for k near 2^31 that root can be one off either way; the two
/// loops correct it exactly (each runs at most once), so no pair is missed or visited twice.
__host__ __device__ inline TilePair upper_pair(unsigned k) {
  unsigned j = static_cast<unsigned>((sqrtf(8.0f * static_cast<float>(k) + 1.0f) - 1.0f) * 0.5f);
  while (triangle(j) > k) --j;
  while (triangle(j + 1) <= k) ++j;
  return {static_cast<unsigned>(k - triangle(j)), j};
}

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

/// One block's swap of tile (r0 / TILE, c0 / TILE) of the n x n matrix at @p a with its mirror:
/// both read into shared memory, then both written, transposed, where the other one was.
/// Threads: TILE x ROWS; each thread moves TILE / ROWS rows of each tile.
///
/// @p a has no __restrict__: the kernel reads and writes through the same pointer, and
/// __restrict__ would promise the compiler the opposite.
///
/// The tiles travel from global to shared memory with cp.async (__pipeline_memcpy_async), not
/// through registers: a block must hold both of its tiles before it may write anything, so all
/// of its loads should be in flight at once. Staged through registers, they are not: capped at
/// 32 registers for a full SM of threads (the launch bounds), the compiler interleaves loads and
/// shared stores and waits for each load in turn; uncapped, fewer blocks fit on an SM.
///
/// Sectors: when n * sizeof(T) is not a multiple of 32 bytes, most rows start inside a 32-byte
/// sector, and a warp moving 32 neighbours from the start of a tile row touches one sector more
/// than it needs, which it shares with the next warp. With Sectors, the lanes of a tile row are
/// shifted by the row's offset d into its sector: lane p moves element p - d, so every warp
/// covers whole sectors, and a last pass moves the d elements that fall past the last lane.
/// Only the sectors at the tile's two ends are still shared, with the neighbouring tiles. On an
/// H100 this measured slower than without (80% against 85% of the copy at 8191 x 8191): fewer
/// sectors written into L2, 16% more instructions (the lesson has the counters).
template <typename T, int TILE, int ROWS, bool Sectors>
__device__ void swap_tile_pair(T* a, std::int64_t n, std::int64_t r0, std::int64_t c0,
                               bool diagonal, T (&tile_ij)[TILE][TILE + 1],
                               T (&tile_ji)[TILE][TILE + 1]) {
  static_assert(TILE % 32 == 0 && TILE % ROWS == 0, "whole warps across a tile row");
  constexpr int kPerThread = TILE / ROWS;
  constexpr int kSector = 32 / static_cast<int>(sizeof(T));  // elements per sector
  // At the bottom and right edges a tile is cut short: (i, j) is h x w, its mirror w x h.
  const int h = static_cast<int>(n - r0 < TILE ? n - r0 : TILE);
  const int w = static_cast<int>(n - c0 < TILE ? n - c0 : TILE);
  const int tx = threadIdx.x, ty = threadIdx.y;
  // With Sectors, lane tx of a row piece moves element tx - d, where d is how far into its
  // sector the piece begins. A thread's rows are ROWS apart, a multiple of kSector, so they all
  // begin at the same d: one for the rows of tile (i, j)'s place, one for those of (j, i)'s.
  static_assert(!Sectors || ROWS % kSector == 0, "a thread's rows begin at the same d");
  const int d_ij = Sectors ? sector_offset(a, n, r0 + ty, c0) : 0;
  const int d_ji = Sectors ? sector_offset(a, n, c0 + ty, r0) : 0;
  // The last d elements of each row fall past the last lane: with Sectors, one more pass moves
  // them, kSector lanes per row (lane tx takes row ty + ROWS * q and position TILE + tx % kSector).
  const int q = tx / kSector, past = TILE + tx % kSector;
  const bool tail = Sectors && q < kPerThread;

  // 1. Copy both tiles into shared memory, every copy of the thread in flight at once.
  //    A diagonal tile is its own mirror: it is read, and later written, only once.
  //    Row r of each tile, lane p:
  auto load = [&](int r, int p) {
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
  __pipeline_wait_prior(0);  // this thread's copies have landed...
  // 2. ...and after the barrier everyone's: every element this block will overwrite is in
  //    shared memory, and no other block reads or writes these two tiles. Writing over the
  //    input is safe from here on.
  __syncthreads();

  // 3. Element (r, c) of the new tile (j, i) is element (c, r) of the old tile (i, j), and the
  //    other way round. Rows of the output are written by consecutive threads (coalesced); the
  //    transposition happens in the shared-memory read, down a padded column. Tile (i, j) goes
  //    to the place of (j, i), so its rows begin d_ji into their sectors, and the other way.
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

/// Transposes square n x n matrices in their own buffer. Block k of matrix b owns group k of
/// the upper triangle of G x G-tile groups (blockIdx.x = b * pairs_per_matrix + k) and swaps
/// every tile of it with its mirror, one tile pair after the other through the same two shared
/// tiles. G = 1: one tile pair per block.
///
/// G > 1 (an experiment on misaligned rows, see the lesson): the tiles of a group that share
/// sectors at their ends are then swapped by one block, not by neighbouring blocks. A group on
/// the diagonal takes its tiles (s, t) with s <= t only: their mirrors are its other tiles.
template <typename T, int TILE, int ROWS, bool Sectors = false, int G = 1>
__global__ void __launch_bounds__(TILE * ROWS, 2048 / (TILE * ROWS))
    transpose_inplace_pairs(T* m, std::int64_t n, unsigned pairs_per_matrix) {
  // Two tiles, padded by one column so that reading a column hits 32 different banks.
  __shared__ T tile_ij[TILE][TILE + 1];
  __shared__ T tile_ji[TILE][TILE + 1];
  const unsigned matrix = blockIdx.x / pairs_per_matrix;
  const TilePair group = upper_pair(blockIdx.x - matrix * pairs_per_matrix);
  T* const a = m + static_cast<std::int64_t>(matrix) * n * n;
#pragma unroll
  for (int s = 0; s < G; ++s) {
#pragma unroll
    for (int t = 0; t < G; ++t) {
      // Tile (i, j) starts at row r0, column c0; its mirror (j, i) at row c0, column r0.
      const std::int64_t r0 = (static_cast<std::int64_t>(group.i) * G + s) * TILE;
      const std::int64_t c0 = (static_cast<std::int64_t>(group.j) * G + t) * TILE;
      // The same for the whole block: no divergence. (With G = 1 every tile is inside.)
      if (G > 1 && ((group.i == group.j && t < s) || r0 >= n || c0 >= n)) continue;
      if (s + t > 0) __syncthreads();  // the previous pair's reads of the shared tiles are done
      const bool diagonal = group.i == group.j && s == t;  // a tile that is its own mirror
      swap_tile_pair<T, TILE, ROWS, Sectors>(a, n, r0, c0, diagonal, tile_ij, tile_ji);
    }
  }
}

/// Transposes @p batch square matrices of @p rows x @p cols, stored back to back at @p m, in
/// place. Returns cudaErrorInvalidValue without launching when rows != cols (a rectangular
/// matrix in place is a different problem, see the lesson), or when the pairs of the whole batch
/// do not fit in one grid (2^31 - 1 blocks).
template <typename T, int TILE, int ROWS, bool Sectors = false, int G = 1>
cudaError_t transpose_inplace(T* m, std::int64_t rows, std::int64_t cols, std::int64_t batch,
                              cudaStream_t stream = nullptr) {
  if (rows != cols || rows < 1 || batch < 1) return cudaErrorInvalidValue;
  const std::int64_t tiles = (rows + TILE * G - 1) / (TILE * G);  // groups per side
  if (tiles > 65535) return cudaErrorInvalidValue;  // keeps triangle(tiles) below 2^31
  const std::int64_t pairs = tiles * (tiles + 1) / 2;  // the upper triangle, diagonal included
  if (pairs > 0x7FFFFFFF / batch) return cudaErrorInvalidValue;
  const unsigned blocks = static_cast<unsigned>(pairs * batch);
  transpose_inplace_pairs<T, TILE, ROWS, Sectors, G>
      <<<blocks, dim3(TILE, ROWS), 0, stream>>>(m, rows, static_cast<unsigned>(pairs));
  return cudaGetLastError();
}

}  // namespace step09
