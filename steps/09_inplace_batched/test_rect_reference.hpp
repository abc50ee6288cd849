// The rectangle's moves in closed form, for the tests of the general passes (test.cu) and of the
// lesson's routes (test_rect_routes.cu): host code only, never taught or launched.
#pragma once

#include <cstdint>

#include "rect_index.cuh"

namespace step09_test {

// The rectangle's moves written out, as RECTANGLES.md states them. Reflection about row
// `center`: row i swaps with row (center - i) mod m.
inline std::int64_t reflect(std::int64_t center, std::int64_t i, std::int64_t m) {
  return step09::wrap(center - i, m);
}

// The row shuffle's source column of element j of row i, in closed form: with f = j + i (n - 1),
// plus m where i - (j mod c) > m - c, it is ((k floor(f / c)) mod b) + (f mod c) b; since c
// divides n and m, floor(f / c) = i b + floor((j - i) / c) (+ a), and k a = 1 (mod b). The
// kernel's ShuffleWalk must agree with it everywhere.
inline std::int64_t shuffle_source(const step09::RectShape& s, std::int64_t i, std::int64_t j) {
  const std::int64_t u = j - i;
  const std::int64_t q = (u >= 0 ? u : u - s.c + 1) / s.c;  // floor(u / c)
  const std::int64_t e = i - j % s.c > s.m - s.c ? 1 : 0;
  return (e + s.k * step09::wrap(q, s.b)) % s.b + (u - q * s.c) * s.b;
}

}  // namespace step09_test
