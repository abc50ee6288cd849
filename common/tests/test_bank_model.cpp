// CPU tests of the bank model: the facts lessons 02-05 rely on, and that a wrong layout is caught.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bank_model.hpp"

namespace course {
namespace {

TEST(CpuBankModel, ConflictDegreeCountsDistinctWordsPerBank) {
  EXPECT_EQ(conflict_degree({0, 1, 2, 3}), 1);         // four banks
  EXPECT_EQ(conflict_degree({5, 5, 5, 5}), 1);         // one word: a broadcast, not a conflict
  EXPECT_EQ(conflict_degree({0, 32}), 2);              // two words of bank 0
  EXPECT_EQ(conflict_degree({0, 32, 64, 64, 1}), 3);   // three distinct words of bank 0
  std::vector<std::int64_t> column;                    // 32 words, 32 apart
  for (int t = 0; t < 32; ++t) column.push_back(32 * t);
  EXPECT_EQ(conflict_degree(column), 32);
  EXPECT_EQ(bank_of(33), 1);
  EXPECT_EQ(bank_of(-1), 31);
}

// Lesson 02: the plain tile's column is one bank, 32 times over.
TEST(CpuBankModel, PlainColumnReadIs32Way) {
  for (int n : {32, 64}) {
    EXPECT_EQ(worst_column_degree(plain_layout(n), n), 32) << n;
    for (int c = 0; c < n; ++c) EXPECT_EQ(column_read_degree(plain_layout(n), n, c), 32) << n;
  }
  // A 16-wide tile: 16 threads over two banks, 8 words each.
  EXPECT_EQ(worst_column_degree(plain_layout(16), 16), 8);
}

// Lessons 03 and 04: padding and swizzling both make every column conflict-free.
TEST(CpuBankModel, PaddedAndSwizzledColumnReadsAreConflictFree) {
  for (int n : {16, 32, 64}) {
    EXPECT_EQ(worst_column_degree(padded_layout(n), n), 1) << n;
    EXPECT_EQ(worst_column_degree(swizzled_layout(n), n), 1) << n;
  }
}

// The row read (the tile's fill from global memory) stays conflict-free in all three layouts.
TEST(CpuBankModel, RowReadIsConflictFreeInEveryLayout) {
  for (int n : {16, 32, 64}) {
    EXPECT_EQ(worst_row_degree(plain_layout(n), n), 1) << n;
    EXPECT_EQ(worst_row_degree(padded_layout(n), n), 1) << n;
    EXPECT_EQ(worst_row_degree(swizzled_layout(n), n), 1) << n;
  }
}

// Lesson 04: the XOR only permutes each row, so the tile holds every element exactly once.
TEST(CpuBankModel, SwizzleIsARowPermutation) {
  for (int n : {16, 32, 64}) {
    EXPECT_TRUE(is_row_permutation(swizzled_layout(n), n)) << n;
    EXPECT_TRUE(is_row_permutation(plain_layout(n), n)) << n;
  }
  // Padding moves row r to words r*(n+1)..: not a permutation within [r*n, r*n + n).
  EXPECT_FALSE(is_row_permutation(padded_layout(32), 32));
}

// Swizzles a learner might write by mistake, each caught by one of the two checks.
TEST(CpuBankModel, WrongSwizzlesAreCaught) {
  const int n = 32;
  // Rows 2k and 2k+1 XOR by the same value: a permutation, but two rows share each bank.
  const TileLayout half_row = layout_from_swizzle(n, [](int r, int c) { return c ^ (r / 2); });
  EXPECT_TRUE(is_row_permutation(half_row, n));
  EXPECT_EQ(worst_column_degree(half_row, n), 2);
  // Folding the columns into 16: two columns of a row land on one word (not a permutation).
  const TileLayout folded =
      layout_from_swizzle(n, [](int r, int c) { return (c + r) % 16; });
  EXPECT_FALSE(is_row_permutation(folded, n));
  // XOR with only 4 bits of the row: rows r and r + 16 collide, 2-way.
  const TileLayout four_bits = layout_from_swizzle(n, [](int r, int c) { return c ^ (r % 16); });
  EXPECT_TRUE(is_row_permutation(four_bits, n));
  EXPECT_EQ(worst_column_degree(four_bits, n), 2);
  // XOR past the tile: for a 16-wide tile, row % 32 is fine, but c ^ (r + 16) leaves the row.
  const TileLayout outside = layout_from_swizzle(16, [](int r, int c) { return c ^ (r + 16); });
  EXPECT_FALSE(is_row_permutation(outside, 16));
  // A rotation, (c + r) % n, is a valid alternative: a permutation and conflict-free.
  const TileLayout rotated = layout_from_swizzle(n, [n](int r, int c) { return (c + r) % n; });
  EXPECT_TRUE(is_row_permutation(rotated, n));
  EXPECT_EQ(worst_column_degree(rotated, n), 1);
}

TEST(CpuBankModel, BankMapMarksColumnZeroAndStatesTheDegrees) {
  const std::string plain = bank_map(plain_layout(32), 32, "plain");
  EXPECT_NE(plain.find("plain (32x32 words)"), std::string::npos);
  EXPECT_NE(plain.find("  31 [ 0]  1  2"), std::string::npos) << plain;
  EXPECT_NE(plain.find("reads a row: 1-way; reads a column: 32-way"), std::string::npos);
  const std::string padded = bank_map(padded_layout(32), 32, "padded");
  EXPECT_NE(padded.find("   1 [ 1]  2  3"), std::string::npos) << padded;
  EXPECT_NE(padded.find("reads a column: 1-way"), std::string::npos);
}

}  // namespace
}  // namespace course
