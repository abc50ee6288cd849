// Step 09, part 3 - a rectangle in place (RECTANGLES.md): the index arithmetic of the two routes,
// host and device, so that the CPU tests apply exactly what the kernels compute. For an m x n
// matrix with c = gcd(m, n), a = m / c, b = n / c (rect_index.cuh's rect_shape):
//   blocks (c >= 32, or a square): the matrix is an a x b grid of c x c blocks. Pass 1 transposes
//     every block in place; each row of a block is then a piece of c elements, and piece
//     (I, y, J) of the [a][c][b] order goes to (J, y, I) of the [b][c][a] order (pass 2).
//   gcd1 (c = 1): pass 1 shuffles each row, new[i][j] = old[i][k (j - i) mod n]; pass 2 reflects
//     column j about row j mod m; pass 3 gathers whole rows, new[i] = old[row_source(i)].
// Pass 2 of blocks and pass 3 of gcd1 move pieces along the cycles of a permutation, listed once
// per shape on the host. The gcd1 route's own arithmetic is in rect_gcd1.cuh (part 4); every
// other shape runs the general passes (rect_general.cuh).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "rect_index.cuh"

namespace step09 {

enum class Route { none, blocks, gcd1, general };

/// The route of an m x n matrix of @p elem-byte elements, when one block may have @p smem bytes
/// of shared memory. The cycle table holds lcm(m, n) = min(a, b) max(m, n) ints: at most
/// 2 max(m, n), so the scratch stays that of a row or two.
inline Route choose_route(i64 m, i64 n, std::size_t elem, std::size_t smem) {
  if (m == 1 || n == 1) return Route::none;
  const i64 c = std::gcd(m, n), a = m / c, b = n / c, tiles = (c + 31) / 32;
  const bool grid_ok = a * b <= 0x7FFFFFFF / (tiles * (tiles + 1) / 2);  // 32 x 32 pairs at most
  const bool table_ok = std::min(a, b) <= 2 && a * b * c <= 0x7FFFFFFF;  // int piece numbers
  if ((c >= 32 || m == n) && table_ok && grid_ok) return Route::blocks;
  if (c == 1 && static_cast<std::size_t>(n) * elem <= smem) return Route::gcd1;
  return Route::general;
}

/// Pass 2 of blocks, as a gather: piece p of the result, (J, y, I) in the [b][c][a] order, comes
/// from piece (I, y, J) of the [a][c][b] order that pass 1 left.
__host__ __device__ inline i64 piece_source(i64 p, i64 a, i64 b, i64 c) {
  const i64 I = p % a, q = p / a, y = q % c, J = q / c;
  return (I * c + y) * b + J;
}

/// The cycles of a gather new[x] = old[src(x)]: cycle t is order[starts[t]] ..
/// order[starts[t + 1] - 1] = x0, src(x0), src(src(x0)), ...; the kernel writes new[x_s] =
/// old[x_s+1], and new[x_last] = old[x0]. Fixed points are left out.
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
    if (seen[x0] || src(x0) == x0) continue;
    for (i64 x = x0; !seen[x]; x = src(x)) {
      seen[x] = 1;
      cy.order.push_back(static_cast<int>(x));
    }
    cy.starts.push_back(static_cast<int>(cy.order.size()));
  }
  return cy;
}

}  // namespace step09
