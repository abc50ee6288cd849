/// @file square_checks.hpp
/// @brief The CPU checks of exercise 3's functions (the in-place transpose by pairs of tiles):
/// which tiles a block owns, where each element of a tile is, how many blocks the launch needs.
/// Part of index_checks.hpp, which includes it; the Verdict, the domains and the helpers are there.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "index_checks.hpp"

namespace exercise::checks {

// ---------------------------------------------------------------------------------------------
// Exercise 3: the in-place transpose of an n x n matrix by pairs of tiles.

/// Tile (row, col) and its mirror (col, row), counted in tiles; {kOutside, kOutside} for a
/// block that has no pair.
struct Pair {
  std::int64_t row;
  std::int64_t col;
};

using BlocksForSquare = std::function<std::int64_t(std::int64_t n)>;
using PairOfBlock = std::function<Pair(std::int64_t n, std::int64_t block)>;
/// element_index(n, tile_row, tile_col, i, j): the index of element (i, j) of that tile in the
/// n x n matrix, or kOutside.
using ElementIndex = std::function<std::int64_t(std::int64_t n, std::int64_t tile_row,
                                                std::int64_t tile_col, int i, int j)>;

/// A refusal counts only if something is accepted: blocks_for gives n = 1 and n = 65 at least one
/// block and at most one per tile.
inline Verdict square_accepts_a_real_size(const BlocksForSquare& blocks_for) {
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{65}}) {
    const std::int64_t got = blocks_for(n), t = ceil_div(n, kTile);
    if (got == kNotImplemented) return Verdict::not_written("blocks_for");
    if (got < 1 || got > t * t) {
      return Verdict::fail("blocks_for(n = " + std::to_string(n) + ") = " + std::to_string(got) +
                           ", expected between 1 and " + std::to_string(t * t) + ": refusing the "
                           "sizes that do not fit counts only if the ones that do are accepted");
    }
  }
  return Verdict::pass();
}

/// blocks_for(n) answers 0 for n < 1 and for every size of limit_square_sizes(), and accepts a
/// real size.
inline Verdict square_refuses_past_grid_limit(const BlocksForSquare& blocks_for) {
  const Verdict accepts = square_accepts_a_real_size(blocks_for);
  if (!accepts.ok) return accepts;
  std::vector<std::int64_t> sizes = {0, -3};
  sizes.insert(sizes.end(), limit_square_sizes().begin(), limit_square_sizes().end());
  for (std::int64_t n : sizes) {
    const std::int64_t got = blocks_for(n);
    if (got == kNotImplemented) return Verdict::not_written("blocks_for");
    if (got != 0) {
      const std::int64_t t = ceil_div(n, kTile);
      std::ostringstream m;
      m << "blocks_for(n = " << n << ") = " << got << ", expected 0: ";
      if (n < 1) {
        m << "an empty matrix must be refused";
      } else {
        m << "the matrix has " << t << " x " << t << " tiles, " << t * (t + 1) / 2
          << " pairs: more than gridDim.x holds (" << kMaxBlocks << ")";
      }
      return Verdict::fail(m.str());
    }
  }
  return Verdict::pass();
}

/// Over blocks 0..blocks_for(n)-1, the working blocks' pairs share out the T x T tiles of the
/// matrix: every tile in exactly one pair, a diagonal tile alone (its own mirror). Also: 1 <=
/// blocks_for(n) <= T * T on every size up to the largest where one block per tile fits.
inline Verdict every_tile_in_one_pair(const BlocksForSquare& blocks_for,
                                      const PairOfBlock& pair_of_block) {
  std::vector<std::int64_t> sizes = index_square_sizes();
  sizes.insert(sizes.end(), {2047, 2049, 4099});
  for (std::int64_t n : {std::int64_t{100000}, kLargestSquareForOneBlockPerTile}) {
    const std::int64_t t = ceil_div(n, kTile), got = blocks_for(n);
    if (got == kNotImplemented) return Verdict::not_written("blocks_for");
    if (got < 1 || got > t * t) {
      return Verdict::fail("blocks_for(n = " + std::to_string(n) + ") = " + std::to_string(got) +
                           ", expected between 1 and " + std::to_string(t * t) + " (" +
                           std::to_string(t) + " x " + std::to_string(t) +
                           " tiles): a grid that large still fits in gridDim.x");
    }
  }
  for (std::int64_t n : sizes) {
    const std::int64_t t = ceil_div(n, kTile), blocks = blocks_for(n);
    if (blocks == kNotImplemented) return Verdict::not_written("blocks_for");
    if (blocks < 1 || blocks > t * t) {
      return Verdict::fail("blocks_for(n = " + std::to_string(n) + ") = " +
                           std::to_string(blocks) + ", expected between " +
                           std::to_string(t * (t + 1) / 2) + " (one block per pair) and " +
                           std::to_string(t * t) + " (one block per tile)");
    }
    std::vector<std::int64_t> owner(static_cast<std::size_t>(t * t), -1);
    for (std::int64_t b = 0; b < blocks; ++b) {
      const Pair p = pair_of_block(n, b);
      if (p.row == kNotImplemented || p.col == kNotImplemented) {
        return Verdict::not_written("pair_of_block");
      }
      if (p.row == kOutside && p.col == kOutside) continue;  // a block with nothing to do
      const std::string call = "pair_of_block(n = " + std::to_string(n) + ", block = " +
                               std::to_string(b) + ") = {" + std::to_string(p.row) + ", " +
                               std::to_string(p.col) + "}";
      if (p.row < 0 || p.row >= t || p.col < 0 || p.col >= t) {
        return Verdict::fail(call + ": the tiles are 0.." + std::to_string(t - 1) +
                             " each way ({kOutside, kOutside} for a block with no pair)");
      }
      for (const Pair& tile : {p, Pair{p.col, p.row}}) {
        std::int64_t& who = owner[static_cast<std::size_t>(tile.row * t + tile.col)];
        if (who == b) continue;  // a diagonal tile is its own mirror
        if (who >= 0) {
          return Verdict::fail(call + ", but block " + std::to_string(who) +
                               " already owns tile (" + std::to_string(tile.row) + ", " +
                               std::to_string(tile.col) +
                               "): two blocks would swap it, and the second would put it back" +
                               " (or read what the first has overwritten)");
        }
        who = b;
      }
    }
    for (std::int64_t k = 0; k < t * t; ++k) {
      if (owner[static_cast<std::size_t>(k)] >= 0) continue;
      return Verdict::fail("n = " + std::to_string(n) + " (" + std::to_string(t) + " x " +
                           std::to_string(t) + " tiles, blocks 0.." + std::to_string(blocks - 1) +
                           "): tile (" + std::to_string(k / t) + ", " + std::to_string(k % t) +
                           ") is in no block's pair, so it is never transposed");
    }
  }
  return Verdict::pass();
}

namespace detail {

inline std::string element_call(std::int64_t n, std::int64_t tr, std::int64_t tc, int i, int j) {
  std::ostringstream s;
  s << "element_index(n = " << n << ", tile_row = " << tr << ", tile_col = " << tc
    << ", i = " << i << ", j = " << j << ")";
  return s.str();
}

}  // namespace detail

/// Over every tile (tile_row, tile_col) of the T x T grid and i, j in 0..31, element_index
/// names every element of the n x n matrix exactly once and nothing outside it.
inline Verdict every_element_in_one_place(const ElementIndex& element_index) {
  for (std::int64_t n : index_square_sizes()) {
    const std::int64_t t = ceil_div(n, kTile);
    std::vector<std::int64_t> first(static_cast<std::size_t>(n * n), -1);
    for (std::int64_t tr = 0; tr < t; ++tr) {
      for (std::int64_t tc = 0; tc < t; ++tc) {
        for (int i = 0; i < kTile; ++i) {
          for (int j = 0; j < kTile; ++j) {
            const std::int64_t v = element_index(n, tr, tc, i, j);
            if (v == kNotImplemented) return Verdict::not_written("element_index");
            if (v == kOutside) continue;
            if (v < 0 || v >= n * n) {
              return Verdict::fail(detail::element_call(n, tr, tc, i, j) + " = " +
                                   std::to_string(v) + ": outside the matrix (indices 0.." +
                                   std::to_string(n * n - 1) +
                                   "; return kOutside for an element outside it)");
            }
            std::int64_t& who = first[static_cast<std::size_t>(v)];
            if (who >= 0) {
              const std::int64_t w = who;
              return Verdict::fail(
                  "element " + detail::element(v, n) + " of the " + std::to_string(n) + " x " +
                  std::to_string(n) + " matrix has two places: " +
                  detail::element_call(n, w / (t * kTile * kTile), w / (kTile * kTile) % t,
                                       static_cast<int>(w / kTile % kTile),
                                       static_cast<int>(w % kTile)) +
                  " and " + detail::element_call(n, tr, tc, i, j) + " are both " +
                  std::to_string(v));
            }
            who = ((tr * t + tc) * kTile + i) * kTile + j;
          }
        }
      }
    }
    for (std::int64_t v = 0; v < n * n; ++v) {
      if (first[static_cast<std::size_t>(v)] >= 0) continue;
      const std::int64_t r = v / n, c = v % n;
      return Verdict::fail("element " + detail::element(v, n) + " of the " + std::to_string(n) +
                           " x " + std::to_string(n) + " matrix is in no tile: expected " +
                           detail::element_call(n, r / kTile, c / kTile,
                                                static_cast<int>(r % kTile),
                                                static_cast<int>(c % kTile)) +
                           " = " + std::to_string(v));
    }
  }
  return Verdict::pass();
}

/// What the kernel does with a pair: element (i, j) of the mirror tile (tile_col, tile_row)
/// receives element (j, i) of tile (tile_row, tile_col). So element_index(n, tc, tr, i, j) must be
/// the transposed place of element_index(n, tr, tc, j, i), and kOutside exactly together.
inline Verdict mirror_places_transposed(const ElementIndex& element_index) {
  for (std::int64_t n : index_square_sizes()) {
    const std::int64_t t = ceil_div(n, kTile);
    std::int64_t moved = 0;  // elements mapped to their place: all of them, or it is vacuous
    for (std::int64_t tr = 0; tr < t; ++tr) {
      for (std::int64_t tc = 0; tc < t; ++tc) {
        for (int i = 0; i < kTile; ++i) {
          for (int j = 0; j < kTile; ++j) {
            const std::int64_t src = element_index(n, tr, tc, j, i);
            const std::int64_t dst = element_index(n, tc, tr, i, j);
            if (src == kNotImplemented || dst == kNotImplemented) {
              return Verdict::not_written("element_index");
            }
            if (src == kOutside && dst == kOutside) continue;
            if (src >= 0 && src < n * n && dst == src % n * n + src / n) {
              ++moved;
              continue;
            }
            const std::string from = detail::element_call(n, tr, tc, j, i);
            const std::string to = detail::element_call(n, tc, tr, i, j);
            if (src == kOutside || dst == kOutside) {
              return Verdict::fail(from + " = " + std::to_string(src) + " but " + to + " = " +
                                   std::to_string(dst) +
                                   ": an element and its transposed place are either both inside"
                                   " the matrix or both outside");
            }
            if (src < 0 || src >= n * n) {
              return Verdict::fail(from + " = " + std::to_string(src) + ": outside the matrix");
            }
            const std::int64_t want = (src % n) * n + src / n;
            if (dst != want) {
              return Verdict::fail(from + " = " + std::to_string(src) + ", element " +
                                   detail::element(src, n) +
                                   "; its transposed place is element " +
                                   detail::element(want, n) + ", index " + std::to_string(want) +
                                   ", but " + to + " = " + std::to_string(dst));
            }
          }
        }
      }
    }
    if (moved < n * n) return detail::vacuous("element_index", n, n, moved);
  }
  return Verdict::pass();
}

/// Consecutive j (threadIdx.x) give consecutive indices along a tile row, on every tile.
inline Verdict square_warps_consecutive(const ElementIndex& element_index) {
  for (std::int64_t n : index_square_sizes()) {
    const std::int64_t t = ceil_div(n, kTile);
    std::int64_t inside = 0;  // answers inside the matrix: all of its elements, or it is vacuous
    for (std::int64_t tr = 0; tr < t; ++tr) {
      for (std::int64_t tc = 0; tc < t; ++tc) {
        for (int i = 0; i < kTile; ++i) {
          int j0 = -1;
          std::int64_t v0 = 0;
          for (int j = 0; j < kTile; ++j) {
            const std::int64_t v = element_index(n, tr, tc, i, j);
            if (v == kNotImplemented) return Verdict::not_written("element_index");
            if (v == kOutside) continue;
            ++inside;
            if (j0 < 0) {
              j0 = j;
              v0 = v;
            } else if (v != v0 + (j - j0)) {
              return Verdict::fail(
                  "a warp moving row " + std::to_string(i) + " of tile (" + std::to_string(tr) +
                  ", " + std::to_string(tc) + ") is not one run of neighbours (not coalesced): " +
                  detail::element_call(n, tr, tc, i, j0) + " = " + std::to_string(v0) + " but " +
                  detail::element_call(n, tr, tc, i, j) + " = " + std::to_string(v) +
                  ", expected " + std::to_string(v0 + (j - j0)));
            }
          }
        }
      }
    }
    if (inside < n * n) return detail::vacuous("element_index", n, n, inside);
  }
  return Verdict::pass();
}

}  // namespace exercise::checks
