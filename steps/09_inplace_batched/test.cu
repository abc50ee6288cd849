// Step 09 tests: in place on awkward square sizes and on every awkward rectangle, batches of
// awkward shapes (one matrix, a few, more than 65535), in-place batches, and the CPU-checkable
// pieces: the tile-pair numbering, the rectangle's index arithmetic pass by pass, the chunk
// walker, the group plan, the launchers' refusals and the --mode contract. The variants tried
// and not taught are tested in lab/test.cu.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "options.hpp"
#include "test_rect_reference.hpp"
#include "testing.cuh"
#include "variants.cuh"

namespace {

using step09_test::reflect;
using step09_test::shuffle_source;

using course::ElemType;
using course::Problem;
using course::Variant;
using step09::Mode;

/// A kernel of one mode with the element type it was built for.
struct Case {
  Variant v;
  ElemType type;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.v.name << " " << elem_name(c.type); }

std::vector<Case> cases(Mode mode) {
  std::vector<Case> list;
  for (ElemType t : {ElemType::f32, ElemType::f64}) {
    for (const Variant& v : step09::variants(mode, t)) list.push_back({v, t});
  }
  return list;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return course::variant_test_name(::testing::TestParamInfo<Variant>(info.param.v, info.index)) +
         "_" + elem_name(info.param.type);
}

/// Whole-matrix kernels refuse a matrix that does not fit in shared memory, by design; every
/// other refusal fails the test.
::testing::AssertionResult check(const Variant& v, const Problem& p) {
  const bool whole = v.name.find("whole matrices") != std::string::npos;
  const bool may_refuse =
      whole && step09::plan_groups(p.rows, p.cols, course::elem_size(p.type), p.batch).group == 0;
  return course::check_transpose(v, p, may_refuse);
}

// ---------------------------------------------------------------------------------------------
// In place, one square matrix. The input patterns are unique per element, so a pair swapped
// twice (back where it started), a diagonal tile written half-transposed or an edge tile cut
// wrong all show up as a mismatch that names the element.

class Step09InPlace : public ::testing::TestWithParam<Case> {};

TEST_P(Step09InPlace, TransposesAwkwardSquareSizes) {
  REQUIRE_GPU();
  for (std::int64_t n : course::awkward_square_sizes()) {
    ASSERT_TRUE(check(GetParam().v, Problem{GetParam().type, n, n, 1}));
  }
}

TEST_P(Step09InPlace, TransposesLargeSquaresLarge) {
  REQUIRE_GPU();
  // The lesson's odd size: every tile row and column ends in a partial tile.
  ASSERT_TRUE(check(GetParam().v, Problem{GetParam().type, 8191, 8191, 1}));
}

INSTANTIATE_TEST_SUITE_P(InPlace, Step09InPlace, ::testing::ValuesIn(cases(Mode::inplace)),
                         case_name);

// ---------------------------------------------------------------------------------------------
// In place, one rectangle: the lesson's routes (inplace_rect.cuh; the general passes where they
// take none) on every awkward shape (primes, 1 x N, N x 1, one side a multiple of the other, gcd
// above 1 and not), both types. test_rect_routes.cu tests each route on its own shapes.

class Step09InPlaceRect : public ::testing::TestWithParam<ElemType> {
 protected:
  Variant v() const {
    return step09::rect_variants(GetParam(), std::make_shared<step09::RectPlan>())[0];
  }
};

TEST_P(Step09InPlaceRect, TransposesAwkwardShapes) {
  REQUIRE_GPU();
  ASSERT_TRUE(course::check_awkward_shapes(v(), GetParam()));
}

TEST_P(Step09InPlaceRect, TransposesSquaresToo) {
  REQUIRE_GPU();  // --mode inplace sends squares to the tile pairs; the routes do them as well
  for (std::int64_t n : course::awkward_square_sizes()) {
    ASSERT_TRUE(course::check_transpose(v(), Problem{GetParam(), n, n, 1}));
  }
}

// Rows longer than shared memory: the general passes, through global scratch rows.
TEST_P(Step09InPlaceRect, TransposesRowsLongerThanSharedMemory) {
  REQUIRE_GPU();
  for (const course::Shape& s : std::vector<course::Shape>{{3, 30000}, {7, 60013}, {2, 70001}}) {
    ASSERT_TRUE(course::check_transpose(v(), Problem{GetParam(), s.rows, s.cols, 1}));
  }
}

INSTANTIATE_TEST_SUITE_P(InPlaceRect, Step09InPlaceRect,
                         ::testing::Values(ElemType::f32, ElemType::f64),
                         [](const ::testing::TestParamInfo<ElemType>& i) {
                           return std::string(elem_name(i.param));
                         });

// ---------------------------------------------------------------------------------------------
// Batched, out of place: each matrix of the batch is checked against the batched CPU reference.

class Step09Batched : public ::testing::TestWithParam<Case> {};

TEST_P(Step09Batched, TransposesAwkwardShapesOneMatrix) {
  REQUIRE_GPU();
  for (const course::Shape& s : course::awkward_shapes()) {
    ASSERT_TRUE(check(GetParam().v, Problem{GetParam().type, s.rows, s.cols, 1}));
  }
}

TEST_P(Step09Batched, TransposesAwkwardShapesThreeMatrices) {
  REQUIRE_GPU();
  for (const course::Shape& s : course::awkward_shapes()) {
    ASSERT_TRUE(check(GetParam().v, Problem{GetParam().type, s.rows, s.cols, 3}));
  }
}

TEST_P(Step09Batched, TransposesMoreMatricesThanGridYAndZAllow) {
  REQUIRE_GPU();
  ASSERT_TRUE(check(GetParam().v, Problem{GetParam().type, 2, 3, 70000}));
  ASSERT_TRUE(check(GetParam().v, Problem{GetParam().type, 1, 1, 65537}));
}

TEST_P(Step09Batched, TransposesTheLessonShapesSmaller) {
  REQUIRE_GPU();
  const ElemType t = GetParam().type;
  for (const Problem& p :
       {Problem{t, 32, 48, 1000}, Problem{t, 48, 32, 333}, Problem{t, 32, 32, 100},
        Problem{t, 64, 64, 64}, Problem{t, 128, 128, 5}, Problem{t, 2048, 128, 2},
        Problem{t, 128, 2048, 2}}) {
    ASSERT_TRUE(check(GetParam().v, p));
  }
}

TEST_P(Step09Batched, TransposesTheLessonShapesLarge) {
  REQUIRE_GPU();
  const ElemType t = GetParam().type;
  for (const Problem& p : {Problem{t, 64, 64, 16384}, Problem{t, 128, 128, 4096},
                           Problem{t, 2048, 128, 64}}) {
    ASSERT_TRUE(check(GetParam().v, p));
  }
}

INSTANTIATE_TEST_SUITE_P(Batched, Step09Batched, ::testing::ValuesIn(cases(Mode::batched)),
                         case_name);

// ---------------------------------------------------------------------------------------------
// Batched, in place: several square sizes and batch sizes.

class Step09InPlaceBatched : public ::testing::TestWithParam<Case> {};

TEST_P(Step09InPlaceBatched, TransposesAwkwardSquareSizesThreeMatrices) {
  REQUIRE_GPU();
  for (std::int64_t n : course::awkward_square_sizes()) {
    ASSERT_TRUE(check(GetParam().v, Problem{GetParam().type, n, n, 3}));
  }
}

TEST_P(Step09InPlaceBatched, TransposesSeveralBatchSizes) {
  REQUIRE_GPU();
  for (std::int64_t n : {1, 2, 17, 32, 33, 64, 65, 100, 256}) {
    for (std::int64_t b : {1, 2, 7, 40}) {
      ASSERT_TRUE(check(GetParam().v, Problem{GetParam().type, n, n, b}));
    }
  }
}

TEST_P(Step09InPlaceBatched, TransposesMoreMatricesThanGridYAndZAllow) {
  REQUIRE_GPU();
  ASSERT_TRUE(check(GetParam().v, Problem{GetParam().type, 2, 2, 70000}));
  ASSERT_TRUE(check(GetParam().v, Problem{GetParam().type, 3, 3, 65537}));
}

TEST_P(Step09InPlaceBatched, TransposesTheLessonShapeLarge) {
  REQUIRE_GPU();
  ASSERT_TRUE(check(GetParam().v, Problem{GetParam().type, 256, 256, 1024}));
}

INSTANTIATE_TEST_SUITE_P(InPlaceBatched, Step09InPlaceBatched,
                         ::testing::ValuesIn(cases(Mode::inplace_batched)), case_name);

// ---------------------------------------------------------------------------------------------
// CPU tests: no GPU needed.

// Every pair of the upper triangle of a t x t tile grid comes out exactly once, and nothing
// below the diagonal: the reason no tile is swapped twice.
TEST(CpuStep09TilePairs, NumbersEveryUpperPairExactlyOnce) {
  for (unsigned t = 1; t <= 300; ++t) {
    std::vector<char> seen(static_cast<std::size_t>(t) * t, 0);
    const unsigned pairs = static_cast<unsigned>(step09::triangle(t));
    for (unsigned k = 0; k < pairs; ++k) {
      const step09::TilePair p = step09::upper_pair(k);
      ASSERT_LE(p.i, p.j) << "k = " << k << " of a " << t << " x " << t << " grid";
      ASSERT_LT(p.j, t) << "k = " << k << " of a " << t << " x " << t << " grid";
      char& s = seen[static_cast<std::size_t>(p.i) * t + p.j];
      ASSERT_EQ(s, 0) << "pair (" << p.i << ", " << p.j << ") visited twice";
      s = 1;
    }
  }
}

// Near the top of the grid the float root is inexact; the corrections must make it exact.
TEST(CpuStep09TilePairs, ExactUpToTheGridLimit) {
  for (unsigned long long j : {1000ULL, 4096ULL, 46340ULL, 65000ULL, 65534ULL}) {
    for (long long d = -3; d <= 3; ++d) {
      const unsigned k = static_cast<unsigned>(static_cast<long long>(step09::triangle(j)) + d);
      const step09::TilePair p = step09::upper_pair(k);
      EXPECT_LE(p.i, p.j) << k;
      EXPECT_EQ(step09::triangle(p.j) + p.i, k) << k;
    }
  }
  const step09::TilePair last = step09::upper_pair(0x7FFFFFFE);
  EXPECT_EQ(step09::triangle(last.j) + last.i, 0x7FFFFFFEULL);
  EXPECT_LE(last.i, last.j);
}

// The rectangle's passes, applied on the host with the kernels' own index functions, in the
// kernels' order, to the numbers 0 .. m n - 1: the result must be the transpose exactly.
std::vector<std::int64_t> rect_passes_on_host(std::int64_t m, std::int64_t n, std::int64_t step) {
  const step09::RectShape s = step09::rect_shape(m, n);
  std::vector<std::int64_t> a(static_cast<std::size_t>(m * n)), b(a.size());
  std::iota(a.begin(), a.end(), 0);
  auto reflect_all = [&](std::int64_t per) {  // the reflections: column j about row j / per
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) b[i * n + j] = a[reflect(j / per, i, m) * n + j];
    a.swap(b);
  };
  if (s.c > 1) reflect_all(s.b);
  for (std::int64_t i = 0; i < m; ++i) {  // the row shuffle, by the walker a thread runs
    const std::int64_t from = s.c > 1 ? step09::wrap(m - i, m) : i;
    for (std::int64_t j0 = 0; j0 < std::min(step, n); ++j0) {
      step09::ShuffleWalk w(s, i, j0, step);
      for (std::int64_t j = j0; j < n; j += step, w.advance()) {
        EXPECT_EQ(w.source(), shuffle_source(s, i, j)) << m << "x" << n << " " << i;
        b[i * n + j] = a[from * n + w.source()];
      }
    }
  }
  a.swap(b);
  reflect_all(1);
  const std::vector<int> partner = step09::row_swaps(s);
  for (const int* round : {partner.data(), partner.data() + m}) {  // the row swaps
    for (std::int64_t x = 0; x < m; ++x) {
      const std::int64_t y = round[x];
      EXPECT_EQ(round[y], x) << "not a swap: " << m << "x" << n << " row " << x;
      if (y > x) std::swap_ranges(&a[x * n], &a[x * n] + n, &a[y * n]);
    }
  }
  return a;
}

::testing::AssertionResult is_transpose(const std::vector<std::int64_t>& got, std::int64_t m,
                                        std::int64_t n) {
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t c = 0; c < m; ++c)
      if (got[r * m + c] != c * n + r)
        return ::testing::AssertionFailure() << m << " x " << n << ": output (" << r << ", " << c
                                             << ") holds input " << got[r * m + c];
  return ::testing::AssertionSuccess();
}

TEST(CpuStep09Rect, PassesTransposeEveryShapeUpTo40) {
  for (std::int64_t m = 1; m <= 40; ++m)
    for (std::int64_t n = 1; n <= 40; ++n)
      for (std::int64_t step : {1, 3, 32}) {
        ASSERT_TRUE(is_transpose(rect_passes_on_host(m, n, step), m, n));
      }
}

TEST(CpuStep09Rect, PassesTransposeLargerAndAwkwardShapes) {
  for (const course::Shape& s : course::awkward_shapes()) {
    ASSERT_TRUE(is_transpose(rect_passes_on_host(s.rows, s.cols, 256), s.rows, s.cols));
  }
  for (const course::Shape& s : std::vector<course::Shape>{
           {97, 61}, {128, 96}, {200, 300}, {1000, 30}, {30, 1000}, {511, 1022}, {360, 84}}) {
    ASSERT_TRUE(is_transpose(rect_passes_on_host(s.rows, s.cols, 512), s.rows, s.cols));
  }
}

// Shapes past 2^31 elements, too big to run on the host: follow sampled outputs back through
// the passes (each a gather) to the input element they must hold.
TEST(CpuStep09Rect, SampledOutputsPast2To31Elements) {
  for (const course::Shape& shape : std::vector<course::Shape>{
           {65537, 32771}, {46341, 46349}, {46340, 46360}, {65536, 40960}, {8191, 4097}}) {
    const std::int64_t m = shape.rows, n = shape.cols;
    const step09::RectShape s = step09::rect_shape(m, n);
    const std::vector<int> partner = step09::row_swaps(s);
    for (std::int64_t k = 0; k < 20000; ++k) {
      const std::int64_t at = (k * 2654435761LL) % (m * n);
      std::int64_t i = at / n, j = at % n;
      i = partner[m + i];  // the second round of swaps, then the first
      i = partner[i];
      i = reflect(j, i, m);
      const std::int64_t from_row = s.c > 1 ? step09::wrap(m - i, m) : i;
      j = shuffle_source(s, i, j);
      i = from_row;
      if (s.c > 1) i = reflect(j / s.b, i, m);
      const std::int64_t want = (at % m) * n + at / m;  // output (at / m, at % m) of n x m
      ASSERT_EQ(i * n + j, want) << m << " x " << n << " output index " << at;
    }
    step09::ShuffleWalk w(s, m - 1, 3, 512);
    for (std::int64_t j = 3; j < n; j += 512, w.advance()) {
      ASSERT_EQ(w.source(), shuffle_source(s, m - 1, j)) << m << " x " << n;
    }
  }
}

// The reflection kernel's band: within a strip of 32 columns the centre j / per climbs by at
// most 31, so the partner of row i0 + r of column j is band row 31 + delta - r of 0..62.
TEST(CpuStep09Rect, ReflectionPartnersLieInTheBand) {
  for (const course::Shape& sh : course::awkward_shapes()) {
    const step09::RectShape s = step09::rect_shape(sh.rows, sh.cols);
    for (std::int64_t per : {s.b, std::int64_t{1}}) {
      for (std::int64_t j0 = 0; j0 < s.n; j0 += 32) {
        for (std::int64_t i0 = 0; i0 < s.m; i0 += 32) {
          const std::int64_t base = step09::wrap(j0 / per - i0 - 31, s.m);
          for (std::int64_t j = j0; j < std::min(j0 + 32, s.n); ++j) {
            const std::int64_t delta = j / per - j0 / per;
            ASSERT_GE(delta, 0);
            ASSERT_LE(delta, 31);
            for (std::int64_t r = 0; r < 32 && i0 + r < s.m; ++r) {
              ASSERT_EQ(reflect(j / per, i0 + r, s.m), (base + 31 + delta - r) % s.m);
            }
          }
        }
      }
    }
  }
}

TEST(CpuStep09Rect, ShapeConstants) {
  const step09::RectShape s = step09::rect_shape(10000, 1000);
  EXPECT_EQ(s.c, 1000);
  EXPECT_EQ(s.a, 10);
  EXPECT_EQ(s.b, 1);
  EXPECT_EQ(s.k, 0);
  const step09::RectShape t = step09::rect_shape(8191, 4097);
  EXPECT_EQ(t.c, 1);
  EXPECT_EQ(t.a * t.k % t.b, 1);  // k = a^-1 mod b
  const step09::RectShape u = step09::rect_shape(46340, 46360);
  EXPECT_EQ(u.c, 20);
  EXPECT_EQ(u.a * u.k % u.b, 1);
}

// The chunk walker agrees with division everywhere, for every stride and shape it meets.
TEST(CpuStep09ChunkPos, AgreesWithDivision) {
  const int shapes[][2] = {{1, 1},  {2, 3},  {3, 2},   {32, 48}, {48, 32},
                           {64, 64}, {7, 13}, {1, 4099}, {4099, 1}, {33, 1}};
  for (const auto& s : shapes) {
    const int rows = s[0], cols = s[1];
    for (int stride : {1, 7, 256, 1024}) {
      for (int start : {0, 5, 255}) {
        step09::ChunkPos p(start, stride, rows, cols);
        for (int i = start; i < start + 200 * stride; i += stride) {
          ASSERT_EQ(p.matrix, i / (rows * cols)) << rows << "x" << cols << " index " << i;
          ASSERT_EQ(p.row, i % (rows * cols) / cols) << rows << "x" << cols << " index " << i;
          ASSERT_EQ(p.col, i % cols) << rows << "x" << cols << " index " << i;
          p.advance();
        }
      }
    }
  }
}

TEST(CpuStep09Groups, PlanFitsSharedMemoryAndMovesEnoughBytes) {
  using step09::plan_groups;
  EXPECT_EQ(plan_groups(64, 64, 4, 16384).group, 1);
  EXPECT_EQ(plan_groups(64, 64, 4, 16384).smem_bytes, 64u * 65 * 4);  // odd pitch: 65
  EXPECT_EQ(plan_groups(32, 32, 4, 1000).group, 4);
  EXPECT_EQ(plan_groups(32, 48, 4, 1000).group, 2);
  EXPECT_EQ(plan_groups(32, 48, 4, 1000).smem_bytes, 2u * 32 * 49 * 4);
  EXPECT_EQ(plan_groups(2, 3, 4, 70000).group, 682);
  EXPECT_EQ(plan_groups(2, 3, 4, 5).group, 5);          // never more than the batch
  EXPECT_EQ(plan_groups(64, 64, 8, 10).group, 1);       // 33 KB of f64
  EXPECT_EQ(plan_groups(128, 128, 4, 4096).group, 0);   // 64 KB: the tiled kernel's job
  EXPECT_EQ(plan_groups(2048, 128, 4, 64).group, 0);
  EXPECT_EQ(plan_groups(1LL << 20, 1, 4, 1).group, 0);  // no overflow on huge sides
  for (const course::Shape& s : course::awkward_shapes()) {
    for (std::size_t size : {4u, 8u}) {
      const step09::GroupPlan g = plan_groups(s.rows, s.cols, size, 1 << 20);
      if (g.group == 0) continue;
      EXPECT_LE(g.smem_bytes, 48u * 1024) << s.rows << "x" << s.cols;
      EXPECT_GE(static_cast<std::int64_t>(g.group) * s.rows * s.cols * size * 2,
                std::min<std::int64_t>(16 * 1024, s.rows * s.cols * size))
          << s.rows << "x" << s.cols;  // at least half the target (or one whole matrix)
    }
  }
}

// The launchers check before launching, so this runs anywhere.
TEST(CpuStep09Launchers, RefuseWhatTheyCannotDo) {
  float* none = nullptr;
  // In place: square only.
  EXPECT_EQ((step09::transpose_inplace<float, 64, 8>(none, 4, 5, 1)), cudaErrorInvalidValue);
  EXPECT_EQ((step09::transpose_inplace<float, 32, 8>(none, 0, 0, 1)), cudaErrorInvalidValue);
  // More tile pairs than one grid holds.
  EXPECT_EQ((step09::transpose_inplace<float, 64, 8>(none, 1, 1, 1LL << 31)),
            cudaErrorInvalidValue);
  EXPECT_EQ((step09::transpose_inplace<float, 32, 8>(none, 65536LL * 32 + 1, 65536LL * 32 + 1, 1)),
            cudaErrorInvalidValue);
  EXPECT_EQ((step09::transpose_batched<float, 64, 4>(none, none, 1, 1, 1LL << 31)),
            cudaErrorInvalidValue);
  EXPECT_EQ((step09::transpose_batched<float, 64, 4>(none, none, 1LL << 37, 1LL << 37, 1)),
            cudaErrorInvalidValue);
  // Whole matrices: one must fit in shared memory.
  EXPECT_EQ(step09::transpose_grouped<float>(none, none, 128, 128, 10), cudaErrorInvalidValue);
  // The rectangle: no empty side, sides below 2^31 (a 1 x N matrix needs no launch at all).
  step09::RectPlan plan;
  EXPECT_EQ(step09::transpose_inplace_rect<float>(none, 0, 5, plan), cudaErrorInvalidValue);
  EXPECT_EQ(step09::transpose_inplace_rect<float>(none, 2, 1LL << 31, plan), cudaErrorInvalidValue);
  EXPECT_EQ(step09::transpose_inplace_rect<float>(none, 1, 1LL << 33, plan), cudaSuccess);
  EXPECT_EQ(step09::transpose_inplace_rect<double>(nullptr, 7, 1, plan), cudaSuccess);
  // The tile pairs refuse a rectangle, through the harness's entry point.
  for (Mode mode : {Mode::inplace, Mode::inplace_batched}) {
    for (const Case& c : cases(mode)) {
      EXPECT_EQ(c.v.launch(Problem{c.type, 4, 5, 1}, none, none, nullptr), cudaErrorInvalidValue)
          << c.v.name;
      EXPECT_EQ(c.v.launch(Problem{c.type, 48, 32, 7}, none, none, nullptr), cudaErrorInvalidValue)
          << c.v.name;
    }
  }
}

// Names start with the family, so that `kernels=` in a lesson table picks one family, and the
// in-place flag matches the mode.
TEST(CpuStep09Modes, NamesAndInPlaceFlagsFollowTheMode) {
  auto starts = [](const std::string& s, const std::string& prefix) {
    return s.rfind(prefix, 0) == 0;
  };
  for (ElemType t : {ElemType::f32, ElemType::f64}) {
    for (const Variant& v : step09::variants(Mode::inplace, t)) {
      EXPECT_TRUE(starts(v.name, "in-place tile pairs")) << v.name;
      EXPECT_TRUE(v.in_place) << v.name;
    }
    for (const Variant& v : step09::rect_variants(t, std::make_shared<step09::RectPlan>())) {
      EXPECT_TRUE(starts(v.name, "in-place rectangle")) << v.name;
      EXPECT_TRUE(v.in_place) << v.name;
    }
    for (const Variant& v : step09::variants(Mode::batched, t)) {
      EXPECT_TRUE(starts(v.name, "batched ")) << v.name;
      EXPECT_FALSE(v.in_place) << v.name;
    }
    for (const Variant& v : step09::variants(Mode::inplace_batched, t)) {
      EXPECT_TRUE(starts(v.name, "in-place batched ")) << v.name;
      EXPECT_TRUE(v.in_place) << v.name;
    }
  }
}

std::vector<Variant> from_args(const std::vector<std::string>& args) {
  return step09::from_options(course::parse_options(step09::info(), args));
}

TEST(CpuStep09Modes, CommandLineContract) {
  using course::UsageError;
  // A rectangle in place gets the passes; a square the tile pairs.
  for (const auto& [rows, cols] :
       {std::pair{"4", "5"}, std::pair{"8191", "4097"}, std::pair{"1", "9"}}) {
    const std::vector<Variant> got =
        from_args({"--mode", "inplace", "--rows", rows, "--cols", cols});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].name.rfind("in-place rectangle", 0), 0u) << got[0].name;
  }
  EXPECT_EQ(from_args({"--mode", "inplace", "--rows", "64", "--cols", "64"})[0].name.rfind(
                "in-place tile pairs", 0),
            0u);
  EXPECT_THROW(from_args({"--mode", "inplace", "--rows", "2", "--cols", "3000000000"}), UsageError);
  EXPECT_NO_THROW(from_args({"--mode", "inplace", "--rows", "1", "--cols", "3000000000"}));
  EXPECT_THROW(from_args({"--mode", "inplace-batched", "--rows", "64", "--cols", "32",
                          "--batch", "8"}),
               UsageError);
  EXPECT_THROW(from_args({"--mode", "inplace", "--rows", "64", "--cols", "64", "--batch", "2"}),
               UsageError);
  EXPECT_THROW(from_args({"--mode", "sideways"}), UsageError);
  EXPECT_THROW(from_args({"--type", "f16"}), UsageError);
  EXPECT_EQ(from_args({"--mode", "batched", "--rows", "32", "--cols", "48", "--batch", "1000"})
                .size(),
            2u);
  EXPECT_EQ(from_args({"--mode", "inplace-batched", "--rows", "256", "--cols", "256", "--batch",
                       "1024", "--type", "f64"})
                .size(),
            2u);
  // The default mode is inplace, on the default square.
  for (const Variant& v : from_args({})) EXPECT_TRUE(v.in_place) << v.name;
}

// Each refusal is one line that names the option; from_options decides it from the options
// alone, so it needs no device (the harness builds the list before it looks for one).
TEST(CpuStep09Modes, RefusalsAreOneLineNamingTheOption) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--mode", "inplace", "--rows", "3", "--cols", "3000000000"}, "--rows x --cols"},
      {{"--mode", "inplace-batched", "--rows", "8", "--cols", "9", "--batch", "5"},
       "--mode inplace-batched"},
      {{"--batch", "5"}, "--batch"},
  };
  for (const auto& [args, option] : bad) {
    try {
      from_args(args);
      ADD_FAILURE() << "accepted: " << option;
    } catch (const course::UsageError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(option, 0), 0u) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

}  // namespace
