// Step 09, a rectangle in place: the index arithmetic of the general passes (rect_general.cuh),
// host and device, and the shape's constants and row gather that parts 3 and 4 use too
// (rect_shape, row_source). An m x n transpose, read back in the same buffer as an m x n matrix,
// is a product of moves that each keep an element in its row or in its column (Catanzaro, Keller
// and Garland, PPoPP 2014). The CPU tests (test.cu) apply these functions, in the kernels' order,
// to host arrays.
#pragma once

#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace step09 {

using i64 = std::int64_t;

/// x mod m in [0, m), also for a negative x.
__host__ __device__ inline i64 wrap(i64 x, i64 m) { const i64 r = x % m; return r < 0 ? r + m : r; }

/// The constants of one shape: m rows, n columns, c = gcd(m, n), a = m / c, b = n / c, and
/// k = a^-1 mod b (0 when b = 1), which undoes the factor a that the row shuffle meets.
struct RectShape { i64 m, n, c, a, b, k; };

inline RectShape rect_shape(i64 m, i64 n) {
  const i64 c = std::gcd(m, n), a = m / c, b = n / c;
  // Extended Euclid on (a, b): keeps old_s * a = old_r (mod b); old_r ends at gcd(a, b) = 1.
  i64 old_r = a % b, r = b, old_s = 1, s = 0;
  while (r != 0) {
    const i64 q = old_r / r;
    old_r = std::exchange(r, old_r - q * r);
    old_s = std::exchange(s, old_s - q * s);
  }
  return {m, n, c, a, b, b == 1 ? 0 : wrap(old_s, b)};
}

/// The row shuffle's source column of element j of row i, u = j - i: ((e + k floor(u / c)) mod b)
/// + (u mod c) b, with e = 1 where the element's input row, i + (u mod c), wrapped past m: where
/// i - (j mod c) > m - c. A thread walks j = j0, j0 + step, ... and keeps the terms up to date by
/// additions: a 64-bit division per element would cost more than moving the element.
struct ShuffleWalk {
  i64 c, b, k, limit, i;  // limit = m - c: e = 1 where i - (j mod c) > limit
  i64 r, kq, jc;          // (j - i) mod c, k floor((j - i) / c) mod b, j mod c
  i64 step_r, step_kq;    // what one step adds to r (and to jc) and to kq
  __host__ __device__ ShuffleWalk(const RectShape& s, i64 row, i64 j0, i64 step)
      : c(s.c), b(s.b), k(s.k), limit(s.m - s.c), i(row) {
    const i64 u = j0 - row;
    const i64 q = (u >= 0 ? u : u - c + 1) / c;
    r = u - q * c;
    kq = s.k * wrap(q, b) % b;
    jc = j0 % c;
    step_r = step % c;
    step_kq = s.k * ((step / c) % b) % b;
  }
  __host__ __device__ i64 source() const {
    const i64 e = i - jc > limit ? 1 : 0;
    const i64 col = kq + e;
    return (col >= b ? col - b : col) + r * b;
  }
  __host__ __device__ void advance() {
    r += step_r;
    kq += step_kq;
    if (r >= c) {  // carry into floor((j - i) / c)
      r -= c;
      kq += k;
    }
    while (kq >= b) kq -= b;  // at most twice: both additions are below b
    jc += step_r;
    if (jc >= c) jc -= c;
  }
};

/// The row swaps' gather, new[i] = old[row_source(i)]: the column reflection's row reversal
/// i -> -i followed by the paper's row gather i n - floor(i / a).
inline i64 row_source(const RectShape& s, i64 i) { return wrap(i / s.a - (i * s.n) % s.m, s.m); }

/// The gather as two rounds of swaps, 2 m partners (round 1's, then round 2's): a cycle x0 -> x1
/// -> ... of row_source is the reflection t <-> 1 - t of its positions, then t <-> -t (mod its
/// length). Each round pairs every row with one partner (or itself): its swaps run at once.
inline std::vector<int> row_swaps(const RectShape& s) {
  const i64 m = s.m;
  std::vector<int> partner(2 * m);
  std::vector<char> seen(m, 0);
  std::vector<i64> cycle;
  for (i64 start = 0; start < m; ++start) {
    if (seen[start]) continue;
    cycle.clear();
    for (i64 x = start; !seen[x]; x = row_source(s, x)) {
      seen[x] = 1;
      cycle.push_back(x);
    }
    const i64 len = static_cast<i64>(cycle.size());
    for (i64 t = 0; t < len; ++t) {
      partner[cycle[t]] = static_cast<int>(cycle[wrap(1 - t, len)]);
      partner[m + cycle[t]] = static_cast<int>(cycle[wrap(-t, len)]);
    }
  }
  return partner;
}

}  // namespace step09
