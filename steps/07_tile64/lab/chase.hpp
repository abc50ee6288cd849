// Step 07's lab - the chain that step07-latency follows (host-only, so the tests can check it on
// the CPU). One node per 128-byte line of the buffer; next[i] is the line visited after line i,
// and the nodes form a single cycle through every line, so a walk of up to `lines` loads never
// comes back to a line it has read.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace step07lab {

constexpr std::size_t kLineBytes = 128;      // one L2 cache line per node
constexpr std::size_t kPageBytes = 2 << 20;  // the GPU's 2 MiB pages

enum class Chase {
  // The pages in address order, the lines of each page in random order: every load misses the
  // caches, and one page (one TLB entry) serves 16384 loads in a row.
  in_page,
  // The lines of the whole buffer in random order: every load also lands on another page, so a
  // buffer larger than the TLBs reach adds the page-table walk to each load.
  random,
};

// The visiting order of the chain: a permutation of 0 .. lines - 1.
inline std::vector<std::uint32_t> chase_order(std::size_t lines, Chase how, std::uint64_t seed) {
  if (lines == 0 || lines > UINT32_MAX) {
    throw std::invalid_argument("chase_order: 1 .. 2^32 - 1 lines");
  }
  std::vector<std::uint32_t> order(lines);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(seed);
  if (how == Chase::random) {
    std::shuffle(order.begin(), order.end(), rng);
  } else {
    constexpr std::size_t kPerPage = kPageBytes / kLineBytes;
    for (std::size_t first = 0; first < lines; first += kPerPage) {
      std::shuffle(order.begin() + first, order.begin() + std::min(lines, first + kPerPage), rng);
    }
  }
  return order;
}

// next[order[i]] = order[i + 1], and the last node points back to the first: one cycle.
inline std::vector<std::uint32_t> chase_next(const std::vector<std::uint32_t>& order) {
  std::vector<std::uint32_t> next(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) next[order[i]] = order[(i + 1) % order.size()];
  return next;
}

}  // namespace step07lab
