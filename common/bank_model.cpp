#include "bank_model.hpp"

#include <algorithm>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

namespace course {

TileLayout plain_layout(int n) {
  return [n](int row, int col) { return static_cast<std::int64_t>(row) * n + col; };
}

TileLayout padded_layout(int n) {
  return [n](int row, int col) { return static_cast<std::int64_t>(row) * (n + 1) + col; };
}

TileLayout swizzled_layout(int n) {
  return [n](int row, int col) {
    return static_cast<std::int64_t>(row) * n + (col ^ (row % kBanks));
  };
}

TileLayout layout_from_swizzle(int n, const std::function<int(int, int)>& swizzle) {
  return [n, swizzle](int row, int col) {
    return static_cast<std::int64_t>(row) * n + swizzle(row, col);
  };
}

int conflict_degree(const std::vector<std::int64_t>& words) {
  std::map<int, std::set<std::int64_t>> per_bank;
  for (std::int64_t w : words) per_bank[bank_of(w)].insert(w);
  std::size_t worst = 0;
  for (const auto& [bank, distinct] : per_bank) worst = std::max(worst, distinct.size());
  return static_cast<int>(worst);
}

namespace {
int warp_degree(int n, const std::function<std::int64_t(int)>& word_of_thread) {
  std::vector<std::int64_t> words;
  for (int t = 0; t < std::min(kBanks, n); ++t) words.push_back(word_of_thread(t));
  return conflict_degree(words);
}
}  // namespace

int row_read_degree(const TileLayout& layout, int n, int row) {
  return warp_degree(n, [&](int t) { return layout(row, t); });
}

int column_read_degree(const TileLayout& layout, int n, int col) {
  return warp_degree(n, [&](int t) { return layout(t, col); });
}

int worst_row_degree(const TileLayout& layout, int n) {
  int worst = 0;
  for (int r = 0; r < n; ++r) worst = std::max(worst, row_read_degree(layout, n, r));
  return worst;
}

int worst_column_degree(const TileLayout& layout, int n) {
  int worst = 0;
  for (int c = 0; c < n; ++c) worst = std::max(worst, column_read_degree(layout, n, c));
  return worst;
}

bool is_row_permutation(const TileLayout& layout, int n) {
  for (int r = 0; r < n; ++r) {
    std::set<std::int64_t> seen;
    for (int c = 0; c < n; ++c) {
      const std::int64_t w = layout(r, c) - static_cast<std::int64_t>(r) * n;
      if (w < 0 || w >= n || !seen.insert(w).second) return false;
    }
  }
  return true;
}

std::string bank_map(const TileLayout& layout, int n, const std::string& name) {
  const int shown = std::min(n, 32);
  std::ostringstream s;
  s << name << " (" << n << "x" << n << " words): bank of each element; [ ] = column 0, which one"
    << " warp reads in the transposed read\n     ";
  // Column 0 is 4 characters wide ("[ b]"), every other column 3 (" bb"): the digits line up.
  for (int c = 0; c < shown; ++c) s << " " << std::setw(2) << c << (c == 0 ? " " : "");
  s << (n > shown ? " ..." : "") << "\n";
  for (int r = 0; r < shown; ++r) {
    s << std::setw(4) << r << " ";
    for (int c = 0; c < shown; ++c) {
      const int b = bank_of(layout(r, c));
      if (c == 0) {
        s << "[" << std::setw(2) << b << "]";
      } else {
        s << " " << std::setw(2) << b;
      }
    }
    s << (n > shown ? " ..." : "") << "\n";
  }
  if (n > shown) s << "  ...\n";
  s << "warp reads a row: " << worst_row_degree(layout, n) << "-way; reads a column: "
    << worst_column_degree(layout, n) << "-way (1 = conflict-free)\n";
  return s.str();
}

}  // namespace course
