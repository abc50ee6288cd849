// CPU tests of the terminal table of common/report.hpp: the columns stay aligned whatever the
// length of a kernel's name, the CSV keeps every name whole, and a problem the L2 can hold says so.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report.hpp"

namespace course {
namespace {

ResultRow make_row(const std::string& kernel, const std::string& block, const std::string& tile,
                   const std::string& verified) {
  ResultRow row;
  row.kernel = kernel;
  row.block = block;
  row.tile = tile;
  row.median_ms = 0.123456;
  row.min_ms = 0.1;
  row.gbps = 2800.4;
  row.pct_copy = 95.6;
  row.pct_peak = 83.5;
  row.verified = verified;
  return row;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(CpuReport, TableColumnsStayAlignedForLongNames) {
  Report r;
  r.step = "step07";
  r.problem = {ElemType::f32, 8192, 8192, 1};
  r.device.name = "Some GPU";
  const std::string longest = "tile64, 256 thr x 4 float4, squares of 8x8, down the columns, quads";
  r.rows = {make_row("copy: cudaMemcpy device to device", "-", "-", "-"),
            make_row(longest, "256", "64x64", "yes"),
            make_row("short", "32x8", "32x32", "skipped"),
            make_row("refused one", "1024x1", "-", "refused")};
  std::ostringstream out;
  print_table(out, r);
  const std::vector<std::string> lines = lines_of(out.str());

  std::size_t header = 0;
  while (header < lines.size() && lines[header].rfind("kernel", 0) != 0) ++header;
  ASSERT_LT(header + 2 + r.rows.size(), lines.size() + 1) << out.str();
  const std::string& head = lines[header];
  const std::size_t block_at = head.find("block"), tile_at = head.find("tile");
  const std::size_t gbps_end = head.find("GB/s") + 4, verified_at = head.find("verified");
  ASSERT_GT(block_at, longest.size()) << "the kernel column is narrower than its longest name";
  EXPECT_GE(lines[header + 1].size(), verified_at) << "the rule under the header is too short";

  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const std::string& line = lines[header + 2 + i];
    const ResultRow& row = r.rows[i];
    SCOPED_TRACE(line);
    EXPECT_EQ(line.substr(0, row.kernel.size()), row.kernel);
    EXPECT_EQ(line.find_first_not_of(' ', row.kernel.size()), block_at);
    EXPECT_EQ(line.substr(block_at, row.block.size()), row.block);
    EXPECT_EQ(line.substr(tile_at, row.tile.size()), row.tile);
    // Numbers are right-aligned under their headers; the verdict starts under its header.
    const std::string gbps = row.verified == "refused" ? "-" : "2800";
    EXPECT_EQ(line.substr(gbps_end - gbps.size(), gbps.size()), gbps);
    EXPECT_EQ(line.substr(verified_at), row.verified);
  }
  // The CSV is unchanged by the table's widths: every name whole, one line per row.
  const std::string csv = csv_rows(r);
  EXPECT_NE(csv.find("\"" + longest + "\""), std::string::npos) << csv;
  EXPECT_EQ(lines_of(csv).size(), r.rows.size());
}

TEST(CpuReport, SaysWhenTheL2CanHoldTheProblem) {
  const std::int64_t l2 = 50 << 20;  // an H100's L2
  const Problem i8_small{ElemType::i8, 4095, 4097, 1};     // 33.6 MB moved
  const Problem f16_rect{ElemType::f16, 8192, 2048, 1};    // 67.1 MB: under twice the L2
  const Problem f32_rect{ElemType::f32, 8192, 2048, 1};    // 134 MB: past twice the L2
  const Problem f32_square{ElemType::f32, 8192, 8192, 1};  // 537 MB, the default
  EXPECT_NE(l2_note(i8_small.bytes_moved(), l2).find("33.6 MB moved"), std::string::npos);
  EXPECT_NE(l2_note(i8_small.bytes_moved(), l2).find("50 MiB L2"), std::string::npos);
  EXPECT_FALSE(l2_note(f16_rect.bytes_moved(), l2).empty());
  EXPECT_EQ(l2_note(f32_rect.bytes_moved(), l2), "");
  EXPECT_EQ(l2_note(f32_square.bytes_moved(), l2), "");
  EXPECT_EQ(l2_note(i8_small.bytes_moved(), 0), "") << "an unknown L2 says nothing";

  // The table carries the note under the device line, and only then.
  Report r;
  r.step = "step08";
  r.problem = i8_small;
  r.device.name = "Some GPU";
  r.device.l2_bytes = l2;
  r.rows = {make_row("auto", "256", "256x128", "yes")};
  std::ostringstream small;
  print_table(small, r);
  const std::vector<std::string> lines = lines_of(small.str());
  ASSERT_GE(lines.size(), 4u) << small.str();
  EXPECT_EQ(lines[3], l2_note(i8_small.bytes_moved(), l2)) << small.str();
  r.problem = f32_square;
  std::ostringstream large;
  print_table(large, r);
  EXPECT_EQ(large.str().find("note:"), std::string::npos) << large.str();
}

}  // namespace
}  // namespace course
