// Step 09, part 2 - the index arithmetic of the in-place rectangle, on the host and the device.
// A transpose of an m x n row-major matrix, read in the same buffer as an m x n matrix again, is
// a product of permutations that each keep an element in its row or in its column (Catanzaro,
// Keller and Garland, "A Decomposition for In-place Matrix Transposition", PPoPP 2014). With
// c = gcd(m, n), a = m / c, b = n / c and k = a^-1 mod b, the kernels of inplace_rect.cuh run:
//   1. (c > 1 only) column j reflected about row floor(j / b):   row i <-> (floor(j / b) - i) mod m
//   2. row i gathered: new[i][j] = old[i'][shuffle_source(i, j)], i' = (m - i) mod m when c > 1
//      (the row reversal that turns pass 1's reflection into a rotation), else i' = i
//   3. column j reflected about row j:                            row i <-> (j - i) mod m
//   4. whole rows gathered, new[i] = old[row_source(i)], as two rounds of row swaps.
// The CPU tests apply exactly these functions, in this order, to host arrays.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace step09 {

using i64 = std::int64_t;

/// x mod m in [0, m), also for a negative x.
__host__ __device__ inline i64 wrap(i64 x, i64 m) {
  const i64 r = x % m;
  return r < 0 ? r + m : r;
}

__host__ __device__ inline i64 gcd64(i64 x, i64 y) {
  while (y != 0) {
    const i64 t = x % y;
    x = y;
    y = t;
  }
  return x;
}

/// The constants of one shape: m rows, n columns, c = gcd(m, n), a = m / c, b = n / c, and
/// k = a^-1 mod b (0 when b = 1), which undoes the factor a that the row shuffle meets.
struct RectShape {
  i64 m, n, c, a, b, k;
};

inline RectShape rect_shape(i64 m, i64 n) {
  const i64 c = gcd64(m, n), a = m / c, b = n / c;
  // Extended Euclid on (a, b): keeps old_s * a = old_r (mod b); old_r ends at gcd(a, b) = 1.
  i64 old_r = a % b, r = b, old_s = 1, s = 0;
  while (r != 0) {
    const i64 q = old_r / r;
    old_r = std::exchange(r, old_r - q * r);
    old_s = std::exchange(s, old_s - q * s);
  }
  return {m, n, c, a, b, b == 1 ? 0 : wrap(old_s, b)};
}

/// Passes 1 and 3: the partner of row i in a column reflected about row `center`.
__host__ __device__ inline i64 reflect(i64 center, i64 i, i64 m) { return wrap(center - i, m); }

/// Pass 2, written out: new[i][j] = old[i'][shuffle_source(s, i, j)]. With f = j + i (n - 1),
/// plus m where i - (j mod c) > m - c, it is ((k floor(f / c)) mod b) + (f mod c) b; since c
/// divides n and m, floor(f / c) = i b + floor((j - i) / c) (+ a), and k a = 1 (mod b).
__host__ __device__ inline i64 shuffle_source(const RectShape& s, i64 i, i64 j) {
  const i64 u = j - i;
  const i64 q = (u >= 0 ? u : u - s.c + 1) / s.c;  // floor(u / c)
  const i64 e = i - j % s.c > s.m - s.c ? 1 : 0;
  return (e + s.k * wrap(q, s.b)) % s.b + (u - q * s.c) * s.b;
}

/// Pass 2 as a thread meets it: the same source columns for j = j0, j0 + step, j0 + 2 step, ...,
/// updated by additions only (a division per element would cost more than the element's move).
struct ShuffleWalk {
  i64 c, b, k, limit, i;  // limit = m - c: row i gets the extra a where i - (j mod c) > it
  i64 r, kq, jc;          // (j - i) mod c, k floor((j - i) / c) mod b, j mod c
  i64 step_r, step_kq, step_jc;

  __host__ __device__ ShuffleWalk(const RectShape& s, i64 row, i64 j0, i64 step)
      : c(s.c), b(s.b), k(s.k), limit(s.m - s.c), i(row) {
    const i64 u = j0 - row;
    const i64 q = (u >= 0 ? u : u - c + 1) / c;
    r = u - q * c;
    kq = s.k * wrap(q, b) % b;
    jc = j0 % c;
    step_r = step % c;
    step_kq = s.k * ((step / c) % b) % b;
    step_jc = step % c;
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
    jc += step_jc;
    if (jc >= c) jc -= c;
  }
};

/// Pass 4: new[i] = old[row_source(i)], the rotation of column j by j (its reflection in pass 3,
/// then the row reversal i -> -i) followed by the row gather i n - floor(i / a) of the paper.
__host__ __device__ inline i64 row_source(const RectShape& s, i64 i) {
  return wrap(i / s.a - (i * s.n) % s.m, s.m);
}

/// Pass 4 as two rounds of swaps: a cycle x0 -> x1 -> ... of row_source (new[x_t] = old[x_t+1])
/// is the reflection t <-> 1 - t of its positions, then t <-> -t (mod its length). Each round
/// pairs every row with one partner (or itself), so all its swaps can run at once.
inline std::pair<std::vector<int>, std::vector<int>> row_swaps(const RectShape& s) {
  const i64 m = s.m;
  std::vector<int> first(m), second(m);
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
      first[cycle[t]] = static_cast<int>(cycle[wrap(1 - t, len)]);
      second[cycle[t]] = static_cast<int>(cycle[wrap(-t, len)]);
    }
  }
  return {std::move(first), std::move(second)};
}

}  // namespace step09
