// Step 09 lab: the index arithmetic of the three-pass rectangle (three_pass.cuh), on the host and
// the device, so that the CPU tests apply exactly what the kernels compute. Two routes, chosen by
// c = gcd(m, n) for an m x n matrix:
//
//   blocks (c >= 32, or a square): the m x n matrix is an a x b grid of c x c blocks (a = m / c,
//     b = n / c). Pass 1 transposes every block in place (tile pairs, as for a square). Each row of
//     a block is then a piece of c consecutive elements that must move as a whole: piece
//     (I, y, J) of the [a][c][b] order goes to (J, y, I) of the [b][c][a] order. Pass 2 moves the
//     pieces along the cycles of that permutation.
//   gcd1 (c = 1): the lesson's decomposition with c = 1 (../rect_index.cuh): pass 1 shuffles each
//     row (new[i][j] = old[i][k (j - i) mod n]), pass 2 reflects column j about row j, pass 3
//     gathers whole rows (new[i] = old[row_source(i)]) along the cycles of that permutation.
//
// Every other shape (gcd between 2 and 31, rows longer than shared memory, piece tables larger
// than 2 x max(m, n)) goes to the lesson's passes. No division is left per element: the shuffle
// walks its columns with additions, the reflection finds its pairs by two comparisons, and the
// cycles are listed once per shape on the host.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "rect_index.cuh"

namespace step09_lab {

using step09::i64;

enum class Route { none, blocks, gcd1, lesson };

/// Rows of own tile in one block of the reflection (pass 2 of gcd1); its band is H + 31 rows.
constexpr int kReflectRows = 64;
/// The route of an m x n matrix of @p elem-byte elements, when one block may have @p smem_limit
/// bytes of shared memory. Pure, so that the CPU tests can check it.
inline Route choose_route(i64 m, i64 n, std::size_t elem, std::size_t smem_limit) {
  if (m == 1 || n == 1) return Route::none;
  const i64 c = std::gcd(m, n), a = m / c, b = n / c;
  // Tile pairs of 64 (f32) or 32 (f64) per block, a x b blocks: the grid must hold them.
  const i64 tile = elem == 4 ? 64 : 32, tiles = (c + tile - 1) / tile;
  const bool grid_ok = a * b <= 0x7FFFFFFF / (tiles * (tiles + 1) / 2);
  // The piece table holds a b c = lcm(m, n) = min(a, b) max(m, n) ints: at most 2 max(m, n).
  const bool table_ok = std::min(a, b) <= 2 && a * b * c <= 0x7FFFFFFF;
  if ((c >= 32 || m == n) && table_ok && grid_ok) return Route::blocks;
  if (c == 1 && static_cast<std::size_t>(n) * elem <= smem_limit) return Route::gcd1;
  return Route::lesson;
}

// ---------------------------------------------------------------------------------------------
// The blocks route.

/// Pass 2 of blocks, as a gather: piece p of the result, in the [b][c][a] order (J, y, I), comes
/// from piece (I, y, J) of the [a][c][b] order that pass 1 left.
__host__ __device__ inline i64 piece_source(i64 p, i64 a, i64 b, i64 c) {
  const i64 I = p % a, q = p / a, y = q % c, J = q / c;
  return (I * c + y) * b + J;
}

// ---------------------------------------------------------------------------------------------
// The cycles of a gather new[x] = old[src(x)], for pass 2 of blocks and pass 3 of gcd1.

/// Cycle t is order[starts[t]] .. order[starts[t + 1] - 1] = x0, src(x0), src(src(x0)), ...: the
/// kernel writes new[x_s] = old[x_s+1], and new[x_last] = old[x0]. Fixed points are left out.
struct Cycles {
  std::vector<int> order;
  std::vector<int> starts{0};
  int count() const { return static_cast<int>(starts.size()) - 1; }
};

template <typename Src>
Cycles gather_cycles(i64 size, Src src) {
  Cycles cy;
  std::vector<char> seen(static_cast<std::size_t>(size), 0);
  for (i64 x0 = 0; x0 < size; ++x0) {
    if (seen[x0]) continue;
    seen[x0] = 1;
    if (src(x0) == x0) continue;
    i64 x = x0;
    do {
      seen[x] = 1;
      cy.order.push_back(static_cast<int>(x));
      x = src(x);
    } while (x != x0);
    cy.starts.push_back(static_cast<int>(cy.order.size()));
  }
  return cy;
}

// ---------------------------------------------------------------------------------------------
// The gcd1 route, pass 1: the row shuffle new[i][j] = old[i][k (j - i) mod n].

/// x y mod n, for x, y below 2^32 (a 64-bit product; the kernel calls it once per thread).
__host__ __device__ inline unsigned mul_mod(unsigned x, unsigned y, unsigned n) {
  return static_cast<unsigned>(static_cast<std::uint64_t>(x) * y % n);
}
/// (x + y) mod n and (x - y) mod n for x, y < n < 2^31: one comparison instead of a division.
__host__ __device__ inline unsigned add_mod(unsigned x, unsigned y, unsigned n) {
  const unsigned s = x + y;
  return s >= n ? s - n : s;
}
__host__ __device__ inline unsigned sub_mod(unsigned x, unsigned y, unsigned n) {
  return x >= y ? x - y : x + n - y;
}

// ---------------------------------------------------------------------------------------------
// The gcd1 route, pass 2: column j reflected about row j mod m (row i <-> (j - i) mod m).

/// Whether row i of a column whose centre is jm (= j mod m) heads its pair, i.e. is the smaller
/// of i and its partner (jm - i) mod m; a fixed point heads nothing. i, jm < m < 2^31.
__host__ __device__ inline bool heads(unsigned i, unsigned jm, unsigned m) {
  return i <= jm ? 2 * i < jm : 2 * i < jm + m;
}

/// The matrix row of band row 0 of the block whose own rows start at i0, in the strip of columns
/// that starts at j0 (j0m = j0 mod m): the partner of own row r in lane t is band row
/// H - 1 + t - r, matrix row (band_base + H - 1 + t - r) mod m.
__host__ __device__ inline unsigned band_base(unsigned j0m, unsigned i0, int H, unsigned m) {
  const i64 x = (static_cast<i64>(j0m) - i0 - (H - 1)) % static_cast<i64>(m);
  return static_cast<unsigned>(x < 0 ? x + m : x);
}

/// @p row moved @p by rows down, mod m (by may exceed m in a tiny matrix).
__host__ __device__ inline unsigned next_row(unsigned row, unsigned by, unsigned m) {
  row += by;
  while (row >= m) row -= m;
  return row;
}

}  // namespace step09_lab
