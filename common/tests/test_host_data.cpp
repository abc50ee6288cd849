// CPU tests of the pieces every verification rests on: bit patterns, the CPU reference, the
// verifier, the peak formula and the report.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <sstream>
#include <vector>

#include "device_info.hpp"
#include "host_data.hpp"
#include "report.hpp"

namespace course {
namespace {

std::vector<std::uint8_t> pattern(ElemType t, std::int64_t n, std::uint64_t seed) {
  std::vector<std::uint8_t> v(static_cast<std::size_t>(n) * elem_size(t));
  fill_pattern(t, v.data(), n, seed);
  return v;
}

// One element's pattern, alone (step 10 checks its GPU's block element by element), is the one
// the whole fill gives it, for every type.
TEST(CpuPattern, OneElementAloneMatchesTheWholeFill) {
  const std::int64_t n = 4099;
  for (ElemType t : all_elem_types()) {
    const auto v = pattern(t, n, 987654321);
    const std::size_t size = elem_size(t);
    std::uint8_t one[16];
    for (std::int64_t i = 0; i < n; ++i) {
      pattern_element(t, i, 987654321, one);
      ASSERT_EQ(std::memcmp(one, &v[static_cast<std::size_t>(i) * size], size), 0)
          << elem_name(t) << " element " << i;
    }
  }
}

TEST(CpuPattern, FourByteElementsAreUniqueNeverNaNAndNeverPoison) {
  const std::int64_t n = 1 << 20;
  const auto v = pattern(ElemType::f32, n, 12345);
  std::set<std::uint32_t> seen;
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &v[4 * i], 4);
    ASSERT_TRUE(seen.insert(bits).second) << "repeated pattern at " << i;
    ASSERT_FALSE(is_nan_bits(ElemType::f32, &v[4 * i]));
    ASSERT_NE((bits & 0x7F800000u), 0x7F800000u) << "infinity or NaN at " << i;
  }
  // Past 2^24, where row*N+col stored as a float starts to repeat, the patterns still differ.
  std::uint32_t a, b;
  const auto far = pattern(ElemType::f32, (1 << 24) + 2, 7);
  std::memcpy(&a, &far[4 * (1 << 24)], 4);
  std::memcpy(&b, &far[4 * ((1 << 24) + 1)], 4);
  EXPECT_NE(a, b);
}

// 1- and 2-byte patterns cannot all differ, but they must not repeat with a period either: a
// kernel that mixes up elements 128 (or 2^15) apart would pass every test on a pattern that did.
TEST(CpuPattern, NarrowPatternsHaveNoPeriod) {
  for (ElemType t : {ElemType::i8, ElemType::f16}) {
    const std::size_t s = elem_size(t);
    const std::int64_t period = s == 1 ? 128 : 32768, n = 4 * period;
    const auto v = pattern(t, n, 4242);
    std::int64_t same = 0;
    for (std::int64_t i = 0; i + period < n; ++i) {
      same += std::memcmp(&v[i * s], &v[(i + period) * s], s) == 0;
    }
    // Independent values agree about once in 2^7 (2^15); a periodic pattern agrees always.
    EXPECT_LT(same, (n - period) / 16) << elem_name(t);
  }
}

TEST(CpuPattern, EveryTypeAvoidsNaNAndPoisonAndDependsOnTheSeed) {
  for (ElemType t : all_elem_types()) {
    const std::size_t s = elem_size(t);
    const auto v = pattern(t, 4096, 99), w = pattern(t, 4096, 100);
    EXPECT_NE(v, w) << elem_name(t) << ": the seed must change the input";
    for (std::int64_t i = 0; i < 4096; ++i) {
      const std::uint8_t* e = &v[i * s];
      ASSERT_FALSE(is_nan_bits(t, e)) << elem_name(t) << " element " << i;
      bool all_poison = true;
      for (std::size_t k = 0; k < s; ++k) all_poison = all_poison && e[k] == kPoisonByte;
      ASSERT_FALSE(all_poison) << elem_name(t) << " element " << i;
    }
  }
}

TEST(CpuPattern, PoisonIsNaNForEveryFloatType) {
  const std::uint8_t poison[16] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                   0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  for (ElemType t : {ElemType::f32, ElemType::f64, ElemType::f16, ElemType::bf16}) {
    EXPECT_TRUE(is_nan_bits(t, poison)) << elem_name(t);
  }
  const std::uint8_t one_f32[4] = {0x00, 0x00, 0x80, 0x3F};  // 1.0f
  const std::uint8_t inf_f32[4] = {0x00, 0x00, 0x80, 0x7F};
  EXPECT_FALSE(is_nan_bits(ElemType::f32, one_f32));
  EXPECT_FALSE(is_nan_bits(ElemType::f32, inf_f32));
  EXPECT_FALSE(is_nan_bits(ElemType::i8, poison));
}

TEST(CpuReference, TransposesAHandWrittenExample) {
  // 2 matrices of 2 x 3 bytes -> 2 matrices of 3 x 2.
  const Problem p{ElemType::i8, 2, 3, 2};
  const std::vector<std::uint8_t> in = {1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15, 16};
  const std::vector<std::uint8_t> want = {1, 4, 2, 5, 3, 6, 11, 14, 12, 15, 13, 16};
  std::vector<std::uint8_t> out(in.size());
  cpu_transpose(p, in.data(), out.data());
  EXPECT_EQ(out, want);
}

TEST(CpuReference, MovesWholeElementsOfEverySizeAndTwiceIsIdentity) {
  for (ElemType t : all_elem_types()) {
    const Problem p{t, 67, 130, 3}, back{t, 130, 67, 3};
    const auto in = pattern(t, p.elements(), 5);
    std::vector<std::uint8_t> once(in.size()), twice(in.size());
    cpu_transpose(p, in.data(), once.data());
    cpu_transpose(back, once.data(), twice.data());
    EXPECT_EQ(twice, in) << elem_name(t);
    const std::size_t s = elem_size(t);
    // Element (r, c) of matrix 1 lands at (c, r) of output matrix 1.
    const std::int64_t r = 5, c = 77, m = 1;
    EXPECT_EQ(0, std::memcmp(&in[((m * 67 + r) * 130 + c) * s], &once[((m * 130 + c) * 67 + r) * s], s));
  }
}

TEST(CpuVerifier, AcceptsTheReference) {
  const Problem p{ElemType::f32, 33, 65, 2};
  const auto in = pattern(p.type, p.elements(), 1);
  std::vector<std::uint8_t> ref(in.size());
  cpu_transpose(p, in.data(), ref.data());
  const VerifyResult r = verify_transpose(p, ref.data(), ref.data());
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_TRUE(r.message.empty());
}

TEST(CpuVerifier, CatchesOneWrongBitAndNamesIt) {
  const Problem p{ElemType::f32, 33, 65, 2};  // output: 2 matrices of 65 x 33
  const auto in = pattern(p.type, p.elements(), 2);
  std::vector<std::uint8_t> ref(in.size());
  cpu_transpose(p, in.data(), ref.data());
  auto got = ref;
  const std::int64_t m = 1, row = 40, col = 17;
  const std::size_t at = static_cast<std::size_t>(((m * 65 + row) * 33 + col) * 4);
  got[at] ^= 0x01;
  const VerifyResult r = verify_transpose(p, ref.data(), got.data());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("matrix 1, (row 40, col 17) of the 65 x 33 output"), std::string::npos)
      << r.message;
  EXPECT_NE(r.message.find("expected " + hex_bits(p.type, &ref[at])), std::string::npos);
  EXPECT_NE(r.message.find("got " + hex_bits(p.type, &got[at])), std::string::npos);
}

TEST(CpuVerifier, ReportsTheFirstMismatch) {
  const Problem p{ElemType::i8, 300, 300, 1};
  const auto in = pattern(p.type, p.elements(), 3);
  std::vector<std::uint8_t> ref(in.size());
  cpu_transpose(p, in.data(), ref.data());
  auto got = ref;
  got[299 * 300 + 5] ^= 0x10;
  got[7 * 300 + 3] ^= 0x10;
  const VerifyResult r = verify_transpose(p, ref.data(), got.data());
  EXPECT_NE(r.message.find("(row 7, col 3)"), std::string::npos) << r.message;
}

TEST(CpuVerifier, CatchesAnUnwrittenElement) {
  const Problem p{ElemType::f64, 10, 20, 1};
  const auto in = pattern(p.type, p.elements(), 4);
  std::vector<std::uint8_t> ref(in.size());
  cpu_transpose(p, in.data(), ref.data());
  auto got = ref;
  std::memset(&got[(19 * 10 + 9) * 8], kPoisonByte, 8);  // the very last element
  const VerifyResult r = verify_transpose(p, ref.data(), got.data());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("(row 19, col 9)"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("never written"), std::string::npos) << r.message;
}

TEST(CpuVerifier, NaNNeverPassesEvenWhenTheBitsMatch) {
  const Problem p{ElemType::f32, 1, 4, 1};
  const std::uint32_t nan = 0x7FC00001u, one = 0x3F800000u;
  const std::uint32_t values[4] = {one, one, nan, one};
  std::vector<std::uint8_t> ref(16), got(16);
  std::memcpy(ref.data(), values, 16);
  std::memcpy(got.data(), values, 16);
  const VerifyResult r = verify_transpose(p, ref.data(), got.data());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("(row 2, col 0)"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("NaN"), std::string::npos) << r.message;
}

TEST(CpuPeak, MatchesTheH100Datasheet) {
  // H100 SXM5: HBM3 at 2619 MHz on a 5120-bit bus.
  EXPECT_NEAR(theoretical_peak_gbps(2619000, 5120), 3352.3, 0.1);
  // A 1000 MHz, 256-bit GDDR memory: 2 x 1e9 x 32 bytes = 64 GB/s.
  EXPECT_DOUBLE_EQ(theoretical_peak_gbps(1000000, 256), 64.0);
}

TEST(CpuReport, RatesAndCsvAreConsistent) {
  Report r;
  r.step = "step01";
  r.problem = {ElemType::f32, 1000, 1000, 2};  // 8 MB in, 8 MB out: 16e6 bytes moved
  r.device.name = "Some GPU, rev \"A\"";
  r.device.peak_gbps = 3200;
  r.copy_gbps = 1600;
  ResultRow row;
  row.id = "read-32x8";
  row.kernel = "naive, coalesced read";
  row.block = "32x8";
  row.tile = "-";
  row.median_ms = 0.01;  // 16e6 bytes / 1e-5 s = 1600 GB/s
  row.verified = "yes";
  fill_rates(r, &row);
  EXPECT_NEAR(row.gbps, 1600, 1e-9);
  EXPECT_NEAR(row.pct_copy, 100, 1e-9);
  EXPECT_NEAR(row.pct_peak, 50, 1e-9);
  r.rows.push_back(row);
  const std::string csv = csv_rows(r);
  EXPECT_EQ(csv.rfind("step01,read-32x8,\"naive, coalesced read\",32x8,-,f32,1000,1000,2,0.01,0,"
                      "1600.0,100.0,50.0,yes,"
                      "\"Some GPU, rev \"\"A\"\"\"", 0), 0u) << csv;
  std::ostringstream table;
  print_table(table, r);
  EXPECT_NE(table.str().find("naive, coalesced read"), std::string::npos);
  EXPECT_NE(table.str().find("1600"), std::string::npos);
}

}  // namespace
}  // namespace course
