// Step 09 tests of the routes of parts 3 and 4 (inplace_rect.cuh, rect_gcd1.cuh): on the GPU,
// each route's shapes in float32 and float64, matrices that do not start on 16 bytes (the last
// pass picks its unit from the address), and past 2^31 elements; on the CPU, the route chosen per
// shape, the scratch it needs, and the passes applied to host arrays with the kernels' own index
// functions, in the kernels' loop order, for every shape up to 40 x 40 and sampled outputs of
// shapes past 2^31 elements. (test.cu runs the lesson's awkward shapes.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "inplace_rect.cuh"
#include "lab/cut_runs.cuh"
#include "test_rect_reference.hpp"
#include "testing.cuh"
#include "variants.cuh"

namespace {

using course::ElemType;
using course::Problem;
using course::Shape;
using step09::Cycles;
using step09::Route;
using i64 = std::int64_t;
using Matrix = std::vector<i64>;

constexpr std::size_t kH100SharedLimit = 232448;  // cudaDevAttrMaxSharedMemoryPerBlockOptin

// ---------------------------------------------------------------------------------------------
// GPU tests.

class Step09Routes : public ::testing::TestWithParam<ElemType> {
 protected:
  course::Variant v() const {
    return step09::rect_variants(GetParam(), std::make_shared<step09::RectPlan>())[0];
  }
};

// One plan through every shape, remade at each: each route, both orientations, the general
// passes for gcd 2..31, a piece table of min(a, b) = 2, rows too long for shared memory.
TEST_P(Step09Routes, TransposesEachRoutesShapes) {
  REQUIRE_GPU();
  const course::Variant rect = v();
  for (const Shape& s : std::vector<Shape>{{8192, 4096}, {4096, 8192}, {8191, 4097}, {4097, 8191},
                                           {10000, 1000}, {1000, 10000}, {96, 64}, {64, 96},
                                           {6000, 4000}, {62, 93}, {2048, 96}, {33, 1089},
                                           {3, 30001}, {7, 60013}, {2, 70001}, {5003, 3}}) {
    ASSERT_TRUE(course::check_transpose(rect, Problem{GetParam(), s.rows, s.cols, 1}));
  }
}

// A matrix 4, 8 or 12 bytes past a 16-byte boundary: the last pass must fall back to 4-byte
// units by itself.
TEST_P(Step09Routes, TransposesMatricesOffTheAlignment) {
  REQUIRE_GPU();
  const std::size_t size = course::elem_size(GetParam());
  for (std::size_t shift : {size, 2 * size, 3 * size}) {
    for (const Shape& s : std::vector<Shape>{{128, 64}, {64, 128}, {63, 65}, {1000, 100}}) {
      ASSERT_TRUE(course::check_transpose(v(), Problem{GetParam(), s.rows, s.cols, 1}, false,
                                          shift));
    }
  }
}

// A few shapes of each route, small enough for the sanitizers.
TEST_P(Step09Routes, TransposesSmallShapesOfEveryRoute) {
  REQUIRE_GPU();
  for (const Shape& s : std::vector<Shape>{{3, 5}, {5, 3}, {7, 13}, {63, 65}, {33, 33}, {64, 96},
                                           {96, 64}, {100, 1000}, {1000, 50}, {62, 93},
                                           {257, 511}, {4, 1031}, {200, 3}}) {
    ASSERT_TRUE(course::check_transpose(v(), Problem{GetParam(), s.rows, s.cols, 1}));
  }
}

TEST_P(Step09Routes, ScratchStaysWithinThreeTimesTheLongerSide) {
  REQUIRE_GPU();
  auto plan = std::make_shared<step09::RectPlan>();
  const course::Variant rect = step09::rect_variants(GetParam(), plan)[0];
  for (const Shape& s : std::vector<Shape>{{8192, 4096}, {8191, 4097}, {10000, 1000}, {96, 64},
                                           {1000, 10000}}) {
    const Problem p{GetParam(), s.rows, s.cols, 1};
    ASSERT_TRUE(course::check_transpose(rect, p));
    EXPECT_LE(plan->bytes(), 3 * std::max(s.rows, s.cols) * sizeof(int) + sizeof(int))
        << s.rows << " x " << s.cols;
    const std::string note = step09::scratch_note(*plan, p);
    EXPECT_NE(note.find("x max(rows, cols) elements"), std::string::npos) << note;
  }
}

INSTANTIATE_TEST_SUITE_P(Routes, Step09Routes,
                         ::testing::Values(ElemType::f32, ElemType::f64),
                         [](const ::testing::TestParamInfo<ElemType>& i) {
                           return std::string(course::elem_name(i.param));
                         });

// Past 2^31 elements (8.6 GB of float32): 64-bit indices, one shape per route.
TEST(Step09RoutesLarge, TransposesPast2To31ElementsLarge) {
  REQUIRE_GPU();
  const course::Variant v =
      step09::rect_variants(ElemType::f32, std::make_shared<step09::RectPlan>())[0];
  ASSERT_TRUE(course::check_transpose(v, Problem{ElemType::f32, 65537, 32771, 1}));  // gcd 1
  ASSERT_TRUE(course::check_transpose(v, Problem{ElemType::f32, 65536, 32768, 1}));  // blocks
}

// The target shape in float64 (8.6 GB): rows of 185 KB, one shuffle block per SM.
TEST(Step09RoutesLarge, TransposesTheTargetShapeInFloat64Large) {
  REQUIRE_GPU();
  const course::Variant v =
      step09::rect_variants(ElemType::f64, std::make_shared<step09::RectPlan>())[0];
  ASSERT_TRUE(course::check_transpose(v, Problem{ElemType::f64, 46341, 23170, 1}));
}

// Fewer than 2^32 elements but more than 2^32 4-byte units (17 GB of float64): the cycle pass,
// which moves 4-byte units where rows are not 16-byte multiples, needs 64-bit indices.
TEST(Step09RoutesLarge, TransposesPast2To32UnitsInFloat64Large) {
  REQUIRE_GPU();
  const course::Variant v =
      step09::rect_variants(ElemType::f64, std::make_shared<step09::RectPlan>())[0];
  ASSERT_TRUE(course::check_transpose(v, Problem{ElemType::f64, 80001, 27001, 1}));  // gcd 1
}

// ---------------------------------------------------------------------------------------------
// CPU tests: the passes on host arrays holding 0 .. m n - 1.

Matrix iota(i64 m, i64 n) {
  Matrix a(static_cast<std::size_t>(m * n));
  std::iota(a.begin(), a.end(), 0);
  return a;
}

::testing::AssertionResult is_transpose(const Matrix& got, i64 m, i64 n) {
  for (i64 r = 0; r < n; ++r)
    for (i64 c = 0; c < m; ++c)
      if (got[r * m + c] != c * n + r)
        return ::testing::AssertionFailure() << m << " x " << n << ": output (" << r << ", " << c
                                             << ") holds input " << got[r * m + c];
  return ::testing::AssertionSuccess();
}

/// The cycle table lists every moved index once, each followed by its source.
template <typename Src>
::testing::AssertionResult cycles_follow(const Cycles& cy, i64 size, Src src) {
  std::vector<char> listed(static_cast<std::size_t>(size), 0);
  for (int t = 0; t < cy.count(); ++t) {
    const int first = cy.starts[t], last = cy.starts[t + 1];
    if (last - first < 2) return ::testing::AssertionFailure() << "cycle " << t << " too short";
    for (int s = first; s < last; ++s) {
      const i64 x = cy.order[s], next = s + 1 < last ? cy.order[s + 1] : cy.order[first];
      if (listed[x]++) return ::testing::AssertionFailure() << x << " listed twice";
      if (src(x) != next) return ::testing::AssertionFailure() << "src(" << x << ") != " << next;
    }
  }
  for (i64 x = 0; x < size; ++x)
    if (!listed[x] && src(x) != x) return ::testing::AssertionFailure() << x << " not listed";
  return ::testing::AssertionSuccess();
}

/// The last pass as permute_pieces runs it: per cycle and element of a piece, K rows read ahead
/// of the K written, x0's value kept for the end. With @p most, cycles longer than that are cut
/// into runs first (the lab's CutRuns): a cut run ends on its tail's value, saved before anything
/// moves.
void permute_on_host(Matrix& a, i64 len, const Cycles& whole, int K, int most = 0) {
  const step09_lab::CutCycles cut =
      most ? step09_lab::cut_cycles(whole, most) : step09_lab::CutCycles{whole, {}};
  const Cycles& cy = cut.runs;
  const std::vector<int>& tails = cut.tails;
  std::vector<i64> v(static_cast<std::size_t>(K));
  Matrix saved;
  for (int tail : tails) saved.insert(saved.end(), &a[tail * len], &a[tail * len] + len);
  for (int t = 0; t < cy.count(); ++t) {
    const int* x = cy.order.data() + cy.starts[t];
    const int length = cy.starts[t + 1] - cy.starts[t];
    const bool cut = t < static_cast<int>(tails.size());
    for (i64 e = 0; e < len; ++e) {
      const i64 first_value = cut ? saved[t * len + e] : a[x[0] * len + e];
      for (int s0 = 0; s0 < length; s0 += K) {
        for (int s = 0; s < K; ++s)
          v[s] = s0 + s + 1 < length ? a[x[s0 + s + 1] * len + e] : first_value;
        for (int s = 0; s < K && s0 + s < length; ++s) a[x[s0 + s] * len + e] = v[s];
      }
    }
  }
}

/// The blocks route: every c x c block transposed, then the pieces permuted (cycles longer than
/// @p most cut into runs, the lab's CutRuns; 0: none cut).
Matrix blocks_on_host(i64 m, i64 n, int K, int most = 0) {
  const step09::RectShape s = step09::rect_shape(m, n);
  Matrix a = iota(m, n);
  for (i64 I = 0; I < s.a; ++I)
    for (i64 J = 0; J < s.b; ++J)
      for (i64 y = 0; y < s.c; ++y)
        for (i64 x = 0; x < y; ++x)
          std::swap(a[(I * s.c + y) * n + J * s.c + x], a[(I * s.c + x) * n + J * s.c + y]);
  auto src = [&](i64 p) { return step09::piece_source(p, s.a, s.b, s.c); };
  const Cycles cy = step09::gather_cycles(s.a * s.b * s.c, src);
  EXPECT_TRUE(cycles_follow(cy, s.a * s.b * s.c, src)) << m << " x " << n;
  permute_on_host(a, s.c, cy, K, most);
  return a;
}

/// gcd1's pass 1 as shuffle_rows_gcd1 runs it with blocks of B threads, one block per row.
void shuffle_on_host(Matrix& a, const step09::RectShape& s, unsigned B) {
  using step09::add_mod;
  using step09::mul_mod;
  const unsigned m = static_cast<unsigned>(s.m), n = static_cast<unsigned>(s.n);
  const unsigned k = static_cast<unsigned>(s.k), step = mul_mod(k, B, n);
  Matrix old_row(n);
  for (unsigned i = 0; i < m; ++i) {
    std::copy(&a[i * static_cast<i64>(n)], &a[i * static_cast<i64>(n)] + n, old_row.begin());
    for (unsigned t = 0; t < B; ++t) {
      unsigned from = step09::sub_mod(mul_mod(k, t, n), mul_mod(k, i, n), n);
      for (unsigned j = t; j < n; j += B, from = add_mod(from, step, n)) {
        ASSERT_EQ(from, step09_test::shuffle_source(s, i, j)) << s.m << " x " << s.n;
        a[i * static_cast<i64>(n) + j] = old_row[from];
      }
    }
  }
}

/// gcd1's pass 2 as reflect_columns_gcd1 runs it with H own rows per block in strips of S
/// columns, each block's loads before its stores; checks too that no element is handled by two
/// blocks.
void reflect_on_host(Matrix& a, i64 m64, i64 n64, int H, int S = 32) {
  using step09::next_row;
  const unsigned m = static_cast<unsigned>(m64), n = static_cast<unsigned>(n64);
  const unsigned tiles_down = (m + H - 1) / H, strips = (n + S - 1) / S;
  std::vector<char> handled(a.size(), 0);
  Matrix own(static_cast<std::size_t>(H) * S), band(static_cast<std::size_t>(H + S - 1) * S);
  for (unsigned block = 0; block < tiles_down * strips; ++block) {
    const unsigned tile = block / strips, strip = block - tile * strips;
    const unsigned i0 = tile * H, j0 = strip * S, j0m = j0 % m;
    const unsigned base = step09::band_base(j0m, i0, H, m);
    for (int pass = 0; pass < 2; ++pass) {  // 0: the loads, 1: the stores after the barrier
      for (int t = 0; t < S; ++t) {  // column t of the strip
        const unsigned j = j0 + t, jm = next_row(j0m, t, m);
        auto mine = [&](int r) {
          return j < n && r >= 0 && r < H && i0 + r < m && step09::heads(i0 + r, jm, m);
        };
        for (int ty = 0; ty < 8; ++ty) {
          for (int r = ty; r < H; r += 8) {
            if (!mine(r)) continue;
            i64& at = a[(i0 + r) * n64 + j];
            if (pass == 0) {
              own[r * S + t] = at;
              ASSERT_EQ(handled[&at - a.data()]++, 0) << "handled twice: " << m << " x " << n;
            } else {
              at = band[(H - 1 + t - r) * S + t];
            }
          }
          unsigned row = next_row(base, ty, m);
          for (int q = ty; q < H + S - 1; q += 8, row = next_row(row, 8, m)) {
            const int r = H - 1 + t - q;
            if (!mine(r)) continue;
            ASSERT_EQ(row, step09_test::reflect(jm, i0 + r, m)) << m << " x " << n << " H " << H;
            i64& at = a[row * n64 + j];
            if (pass == 0) {
              band[q * S + t] = at;
              ASSERT_EQ(handled[&at - a.data()]++, 0) << "handled twice: " << m << " x " << n;
            } else {
              at = own[r * S + t];
            }
          }
        }
      }
    }
  }
}

/// The gcd1 route: shuffle, reflection in strips of S columns, row cycles (cut as in
/// blocks_on_host).
Matrix gcd1_on_host(i64 m, i64 n, unsigned B, int H, int K, int most = 0, int S = 32) {
  const step09::RectShape s = step09::rect_shape(m, n);
  Matrix a = iota(m, n);
  shuffle_on_host(a, s, B);
  reflect_on_host(a, m, n, H, S);
  auto src = [&](i64 i) { return step09::row_source(s, i); };
  const Cycles cy = step09::gather_cycles(m, src);
  EXPECT_TRUE(cycles_follow(cy, m, src)) << m << " x " << n;
  permute_on_host(a, n, cy, K, most);
  return a;
}

TEST(CpuStep09Routes, BlocksRouteTransposesEveryShapeUpTo40) {
  for (i64 m = 1; m <= 40; ++m)
    for (i64 n = 1; n <= 40; ++n) {
      const step09::RectShape s = step09::rect_shape(m, n);
      if (std::min(s.a, s.b) > 2) continue;  // the route's condition besides c >= 32
      for (int K : {1, 8, 16}) ASSERT_TRUE(is_transpose(blocks_on_host(m, n, K), m, n));
      for (int most : {1, 2, 3}) ASSERT_TRUE(is_transpose(blocks_on_host(m, n, 2, most), m, n));
    }
}

TEST(CpuStep09Routes, Gcd1RouteTransposesEveryShapeUpTo40) {
  for (i64 m = 2; m <= 40; ++m)
    for (i64 n = 2; n <= 40; ++n) {
      if (std::gcd(m, n) != 1) continue;
      for (unsigned B : {1u, 3u, 32u})
        for (int H : {step09::kReflectRows<32>, 4, 8}) {
          ASSERT_TRUE(is_transpose(gcd1_on_host(m, n, B, H, 16), m, n)) << "B " << B << " H " << H;
        }
      for (int most : {1, 2, 5}) {
        ASSERT_TRUE(is_transpose(gcd1_on_host(m, n, 32, 8, 2, most), m, n)) << "most " << most;
      }
      for (int H : {step09::kReflectRows<64>, 8}) {  // the lab's strips of 64 columns
        ASSERT_TRUE(is_transpose(gcd1_on_host(m, n, 32, H, 16, 0, 64), m, n)) << "H " << H;
      }
    }
}

TEST(CpuStep09Routes, RoutesTransposeLargerShapes) {
  for (const Shape& s : std::vector<Shape>{{96, 64}, {64, 96}, {1000, 50}, {100, 1000},
                                           {6000 / 40, 4000 / 40}, {256, 128}, {33, 99}}) {
    ASSERT_TRUE(is_transpose(blocks_on_host(s.rows, s.cols, 8), s.rows, s.cols));
  }
  for (const Shape& s : std::vector<Shape>{{97, 61}, {63, 65}, {257, 511}, {4, 1031}, {1031, 4},
                                           {123, 4567}, {200, 3}, {511, 256}}) {
    ASSERT_TRUE(is_transpose(gcd1_on_host(s.rows, s.cols, 256, step09::kReflectRows<32>, 16),
                             s.rows, s.cols));
    ASSERT_TRUE(is_transpose(gcd1_on_host(s.rows, s.cols, 256, step09::kReflectRows<64>, 16, 0, 64),
                             s.rows, s.cols));
  }
}

// Shapes past 2^31 elements, too big for the host: follow sampled outputs back through the
// passes (each a gather) to the input element they must hold, with the kernels' index functions.
TEST(CpuStep09Routes, BlocksSampledOutputsPast2To31Elements) {
  for (const Shape& shape : std::vector<Shape>{{65536, 32768}, {100000, 25000}, {98304, 65536},
                                               {8192, 4096}, {10000, 1000}}) {
    const i64 m = shape.rows, n = shape.cols;
    const step09::RectShape s = step09::rect_shape(m, n);
    ASSERT_EQ(step09::choose_route(m, n, 4, kH100SharedLimit), Route::blocks) << m << "x" << n;
    auto src = [&](i64 p) { return step09::piece_source(p, s.a, s.b, s.c); };
    ASSERT_TRUE(cycles_follow(step09::gather_cycles(s.a * s.b * s.c, src), s.a * s.b * s.c,
                              src));
    for (i64 k = 0; k < 20000; ++k) {
      const i64 at = (k * 2654435761LL) % (m * n);
      const i64 from = src(at / s.c), x = at % s.c;    // pass 2: the piece it came from
      const i64 row = from / s.b, J = from % s.b;      // where pass 1 left it: (row, J c + x)
      const i64 I = row / s.c, y = row % s.c;          // block (I, J), its element (y, x) ...
      const i64 input = (I * s.c + x) * n + J * s.c + y;  // ... held the block's (x, y)
      ASSERT_EQ(input, (at % m) * n + at / m) << m << " x " << n << " output index " << at;
    }
  }
}

TEST(CpuStep09Routes, Gcd1SampledOutputsPast2To31Elements) {
  using step09::mul_mod;
  for (const Shape& shape : std::vector<Shape>{{65537, 32771}, {46349, 46341}, {46341, 23170},
                                               {8191, 4097}, {4097, 8191}}) {
    const i64 m = shape.rows, n = shape.cols;
    const step09::RectShape s = step09::rect_shape(m, n);
    ASSERT_EQ(step09::choose_route(m, n, 4, kH100SharedLimit), Route::gcd1) << m << "x" << n;
    auto src = [&](i64 i) { return step09::row_source(s, i); };
    ASSERT_TRUE(cycles_follow(step09::gather_cycles(m, src), m, src));
    const int H = step09::kReflectRows<32>;
    for (i64 k = 0; k < 20000; ++k) {
      const i64 at = (k * 2654435761LL) % (m * n);
      const i64 j = at % n;
      i64 i = src(at / n);  // pass 3
      const unsigned jm = static_cast<unsigned>(j % m);
      if (step09::heads(static_cast<unsigned>(i), jm, static_cast<unsigned>(m))) {
        const i64 i0 = i / H * H, j0 = j / 32 * 32;  // pass 2, through the band of i's block
        const unsigned base = step09::band_base(static_cast<unsigned>(j0 % m),
                                                    static_cast<unsigned>(i0), H,
                                                    static_cast<unsigned>(m));
        i = (base + H - 1 + (j - j0) - (i - i0)) % m;
      } else {
        i = step09_test::reflect(jm, i, m);
      }
      const unsigned k32 = static_cast<unsigned>(s.k), n32 = static_cast<unsigned>(n);
      const i64 col = step09::sub_mod(mul_mod(k32, static_cast<unsigned>(j), n32),
                                          mul_mod(k32, static_cast<unsigned>(i), n32), n32);
      ASSERT_EQ(i * n + col, (at % m) * n + at / m) << m << " x " << n << " output " << at;
    }
  }
}

TEST(CpuStep09Routes, ChoosesTheRouteByGcdAndSharedMemory) {
  using step09::choose_route;
  const std::size_t lim = kH100SharedLimit;
  EXPECT_EQ(choose_route(8192, 4096, 4, lim), Route::blocks);
  EXPECT_EQ(choose_route(10000, 1000, 8, lim), Route::blocks);
  EXPECT_EQ(choose_route(6000, 4000, 4, lim), Route::blocks);  // a = 3, b = 2
  EXPECT_EQ(choose_route(33, 33, 4, lim), Route::blocks);      // a square: tile pairs only
  EXPECT_EQ(choose_route(7, 7, 8, lim), Route::blocks);
  EXPECT_EQ(choose_route(8191, 4097, 4, lim), Route::gcd1);
  EXPECT_EQ(choose_route(46341, 23170, 8, lim), Route::gcd1);     // 185 KB rows
  EXPECT_EQ(choose_route(46341, 23170, 8, 100000), Route::general);  // rows too long
  EXPECT_EQ(choose_route(3, 30001, 8, lim), Route::general);
  EXPECT_EQ(choose_route(62, 93, 4, lim), Route::general);    // gcd 31
  EXPECT_EQ(choose_route(2048, 96, 4, lim), Route::general);  // a piece table of 3 x 2048
  EXPECT_EQ(choose_route(1, 5, 4, lim), Route::none);
  EXPECT_EQ(choose_route(5, 1, 8, lim), Route::none);
  // Every awkward shape is covered by one of the routes.
  for (const Shape& s : course::awkward_shapes()) {
    const Route r = choose_route(s.rows, s.cols, 4, lim);
    const i64 c = std::gcd(s.rows, s.cols);
    if (r == Route::blocks) EXPECT_TRUE(c >= 32 || s.rows == s.cols) << s.rows << "x" << s.cols;
    if (r == Route::gcd1) EXPECT_EQ(c, 1) << s.rows << "x" << s.cols;
  }
}

// The scratch of both routes: the cycle table, order (one int per moved piece or row) and starts
// (one per cycle, plus one); at most 3 max(m, n) + 1 ints.
TEST(CpuStep09Routes, CycleTablesStayWithinThreeTimesTheLongerSide) {
  std::vector<Shape> shapes = course::awkward_shapes();
  for (const Shape& s : std::vector<Shape>{{8192, 4096}, {10000, 1000}, {8191, 4097},
                                           {46341, 23170}, {6000, 4000}, {23170, 46341}})
    shapes.push_back(s);
  for (const Shape& sh : shapes) {
    const i64 m = sh.rows, n = sh.cols;
    const step09::RectShape s = step09::rect_shape(m, n);
    Cycles cy;
    switch (step09::choose_route(m, n, 4, kH100SharedLimit)) {
      case Route::blocks:
        cy = step09::gather_cycles(
            s.a * s.b * s.c, [&](i64 p) { return step09::piece_source(p, s.a, s.b, s.c); });
        break;
      case Route::gcd1:
        cy = step09::gather_cycles(m, [&](i64 i) { return step09::row_source(s, i); });
        break;
      default:
        continue;
    }
    EXPECT_LE(static_cast<i64>(cy.order.size() + cy.starts.size()), 3 * std::max(m, n) + 1)
        << m << " x " << n;
  }
}

// The lab's cut runs (lab/cut_runs.cuh): at most `most` rows, every row once, the cut runs
// first; a run's last row x gathers from src(x), which is the run's tail when it is cut and its
// own first row when its cycle stayed whole.
TEST(CpuStep09Routes, CutRunsCoverTheirCyclesOnce) {
  const step09::RectShape s = step09::rect_shape(8191, 4097);
  auto src = [&](i64 i) { return step09::row_source(s, i); };
  const Cycles cy = step09::gather_cycles(8191, src);  // 18 cycles of 455 rows
  for (int most : {16, 126, 455, 1000}) {
    const step09_lab::CutCycles cut = step09_lab::cut_cycles(cy, most);
    std::vector<int> rows = cut.runs.order, all = cy.order;
    std::sort(rows.begin(), rows.end());
    std::sort(all.begin(), all.end());
    ASSERT_EQ(rows, all) << "most " << most;
    EXPECT_EQ(cut.tails.size(), most < 455 ? 18u * ((455 + most - 1) / most) : 0u);
    for (int t = 0; t < cut.runs.count(); ++t) {
      const int first = cut.runs.starts[t], last = cut.runs.starts[t + 1] - 1;
      ASSERT_LE(last - first + 1, most);
      const bool is_cut = t < static_cast<int>(cut.tails.size());
      EXPECT_EQ(src(cut.runs.order[last]), is_cut ? cut.tails[t] : cut.runs.order[first]) << t;
    }
  }
}

TEST(CpuStep09Routes, ModularArithmeticAtTheEdges) {
  using namespace step09;
  const unsigned big = 0x7FFFFFFF;  // the largest side
  EXPECT_EQ(add_mod(big - 1, big - 1, big), big - 2);
  EXPECT_EQ(sub_mod(0, big - 1, big), 1u);
  EXPECT_EQ(mul_mod(big - 1, big - 1, big), 1u);  // (-1)^2
  EXPECT_EQ(mul_mod(123456789, 1023, 1000003), 123456789ULL * 1023 % 1000003);
  EXPECT_TRUE(heads(0, 5, 7));    // partner 5
  EXPECT_FALSE(heads(5, 5, 7));   // partner 0
  EXPECT_FALSE(heads(6, 5, 7));   // the fixed point: 6 = 5 - 6 mod 7
  EXPECT_FALSE(heads(5, 3, 7));   // a fixed point too: 3 - 5 + 7 = 5
  EXPECT_TRUE(heads(3, 1, 7));    // partner 1 - 3 + 7 = 5, across the wrap
  EXPECT_EQ(band_base(0, 0, 64, 7), static_cast<unsigned>((7 - 63 % 7) % 7));
  EXPECT_EQ(band_base(3, 64, 64, 200), 200u - 124u);
  EXPECT_EQ(next_row(5, 8, 3), 1u);
}

// The launcher checks before it touches the device, so this runs anywhere.
TEST(CpuStep09Routes, LauncherRefusesWhatItCannotDo) {
  step09::RectPlan plan;
  EXPECT_EQ(step09::transpose_inplace_rect<float>(nullptr, 0, 5, plan), cudaErrorInvalidValue);
  EXPECT_EQ(step09::transpose_inplace_rect<float>(nullptr, 2, 1LL << 31, plan),
            cudaErrorInvalidValue);
  EXPECT_EQ(step09::transpose_inplace_rect<float>(nullptr, 1, 1LL << 33, plan), cudaSuccess);
  EXPECT_EQ(step09::transpose_inplace_rect<double>(nullptr, 7, 1, plan), cudaSuccess);
}

}  // namespace
