// Step 09 tests: in place on awkward square sizes, batches of awkward shapes (one matrix, a few,
// more than 65535), in-place batches, and the CPU-checkable pieces: the tile-pair numbering, the
// chunk walker, the group plan, the launchers' refusals and the --mode contract. The variants
// tried and not taught are tested in lab/test.cu.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "options.hpp"
#include "testing.cuh"
#include "variants.cuh"

namespace {

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
  // Every in-place variant refuses a rectangle, through the harness's entry point.
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
  EXPECT_THROW(from_args({"--mode", "inplace", "--rows", "4", "--cols", "5"}), UsageError);
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
      {{"--mode", "inplace", "--rows", "100", "--cols", "200"}, "--mode inplace"},
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
