/// @file index_checks.hpp
/// @brief The CPU checks of the exercises' index functions: which element each thread of each
/// block reads and writes, which tiles a block owns, how many blocks the launch needs.
///
/// Each exercise's index logic is a set of small functions the reader writes and the kernel
/// itself calls (declared in exNN.cuh). They only compute indices, so the CPU can sweep them over
/// every block and every tile element of many awkward shapes and check what the kernel will do:
/// every element read once and written once, each to its transposed place, nothing outside the
/// matrix, a warp's 32 accesses on 32 neighbouring addresses, and a grid that covers the tiles.
///
/// Host-only and free of GoogleTest and CUDA: the checks take the functions as std::function and
/// return a Verdict whose message names the first violation (shape, block, element, value), so
/// that the same checks can also judge values recorded elsewhere.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "shapes.hpp"

namespace exercise::checks {

constexpr int kTile = 32;                          ///< every exercise moves 32 x 32 tiles
constexpr std::int64_t kOutside = -1;              ///< an index function's "outside the matrix"
constexpr std::int64_t kNotImplemented = -2;       ///< what the skeletons' functions return
constexpr std::int64_t kMaxBlocks = 2147483647;    ///< gridDim.x's limit (2^31 - 1)

/// What a check found: ok, or the first violation; @p todo names a function that still returns
/// kNotImplemented (the test then says "not implemented yet").
struct Verdict {
  bool ok = true;
  std::string message;
  std::string todo;

  static Verdict pass() { return {}; }
  static Verdict fail(const std::string& why) { return {false, why, ""}; }
  static Verdict not_written(const std::string& function) {
    return {false, function + " returns kNotImplemented", function};
  }
};

/// ceil(a / b) for a >= 0, b > 0.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// ---------------------------------------------------------------------------------------------
// The domains: the shapes the checks sweep. Small enough to sweep every block and element (about
// a million function calls per check), awkward enough that each classic mistake shows.

/// Shapes for the out-of-place exercises: 1 x N and N x 1, primes, one off the tile, tall and
/// wide with a whole number of tiles one way only, squares.
inline const std::vector<course::Shape>& index_shapes() {
  static const std::vector<course::Shape> shapes = {
      {1, 1},     {1, 2},     {2, 1},     {1, 37},    {37, 1},     {1, 4099},   {4099, 1},
      {2, 2},     {3, 5},     {5, 3},     {7, 13},    {31, 31},    {32, 32},    {33, 33},
      {64, 32},   {32, 64},   {63, 65},   {65, 63},   {64, 64},    {127, 129},  {96, 2048},
      {2048, 96}, {100, 1000}, {1000, 100}, {1000, 50}, {50, 1000}, {257, 511}, {4, 1031},
      {1031, 4},  {33, 3000}, {3000, 33},
  };
  return shapes;
}

/// Shapes with more 32 x 32 tiles than a one-dimensional grid holds (kMaxBlocks): a launcher
/// must refuse them. 1482912 = 32 x 46341, and 46341^2 is the first square past 2^31 - 1.
inline const std::vector<course::Shape>& limit_shapes() {
  static const std::vector<course::Shape> shapes = {
      {1, std::int64_t{1} << 36},  {std::int64_t{1} << 36, 1},   {1482912, 1482912},
      {1482912, 1482881},          {std::int64_t{1} << 33, std::int64_t{1} << 33},
  };
  return shapes;
}

/// The largest shapes a one-dimensional grid still holds: one block per tile fits.
inline const std::vector<course::Shape>& near_limit_shapes() {
  static const std::vector<course::Shape> shapes = {
      {1482880, 1482880},                     // 46340^2 tiles = 2,147,395,600
      {1, (std::int64_t{1} << 36) - 32},      // 2^31 - 1 tiles in one row
      {(std::int64_t{1} << 36) - 32, 1},
      {65536 * 32 + 1, 1000},                 // past gridDim.y's 65535: fine in one dimension
  };
  return shapes;
}

/// Sizes for the in-place exercise (n x n): the course's awkward square sizes.
inline const std::vector<std::int64_t>& index_square_sizes() {
  return course::awkward_square_sizes();
}

/// Sizes whose tile pairs are too many for a one-dimensional grid, whether the grid has one
/// block per tile (T^2) or one per pair (T (T + 1) / 2), T = ceil(n / 32).
inline const std::vector<std::int64_t>& limit_square_sizes() {
  static const std::vector<std::int64_t> sizes = {3000000, std::int64_t{1} << 33};
  return sizes;
}

/// The largest size where one block per tile still fits: T = 46340 tiles a side, T^2 blocks.
constexpr std::int64_t kLargestSquareForOneBlockPerTile = 1482880;

// ---------------------------------------------------------------------------------------------
// Exercises 1 and 2: the out-of-place tiled transpose, one block per tile of the INPUT.

/// blocks_for(rows, cols): how many blocks the launch needs (0: refuse the shape).
using BlocksFor = std::function<std::int64_t(std::int64_t rows, std::int64_t cols)>;
/// input_index / output_index(rows, cols, block, i, j): the index that element (i, j) of the
/// block's input (output) tile has in the input (output) matrix, or kOutside.
using TileIndex = std::function<std::int64_t(std::int64_t rows, std::int64_t cols,
                                             std::int64_t block, int i, int j)>;

namespace detail {

inline std::string shape_name(std::int64_t rows, std::int64_t cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

/// A check of how elements are mapped passes only if elements ARE mapped: a function that
/// answers kOutside everywhere would break no rule about the places it names.
inline Verdict vacuous(const char* fn, std::int64_t rows, std::int64_t cols,
                       std::int64_t inside) {
  return Verdict::fail(std::string(fn) + " names " + std::to_string(inside) +
                       " elements inside the " + shape_name(rows, cols) +
                       " matrix over all blocks and threads, not all " +
                       std::to_string(rows * cols) + ": it answers kOutside for elements that "
                       "are inside, so those would never be moved");
}

inline std::string call(const char* fn, std::int64_t rows, std::int64_t cols, std::int64_t block,
                        int i, int j) {
  std::ostringstream s;
  s << fn << "(rows = " << rows << ", cols = " << cols << ", block = " << block << ", i = " << i
    << ", j = " << j << ")";
  return s.str();
}

/// (row, col) of index @p v in a matrix whose rows are @p width long, as text.
inline std::string element(std::int64_t v, std::int64_t width) {
  return "(" + std::to_string(v / width) + ", " + std::to_string(v % width) + ")";
}

/// Where a block of a one-dimensional grid over tiles_x tiles per row starts, as text.
inline std::string tile_of(std::int64_t block, std::int64_t tiles_x) {
  return "tile (" + std::to_string(block / tiles_x) + ", " + std::to_string(block % tiles_x) +
         ")";
}

/// Every element of a @p rows x @p cols matrix is the answer of @p f for exactly one (block, i,
/// j), and no answer is outside it. @p fn and @p what ("read", "written") name it in messages.
inline Verdict covers_once(const TileIndex& f, const char* fn, const char* what, bool output) {
  for (const course::Shape& s : index_shapes()) {
    const std::int64_t rows = s.rows, cols = s.cols;
    const std::int64_t tiles_x = ceil_div(cols, kTile), blocks = tiles_x * ceil_div(rows, kTile);
    // The matrix this function indexes: the input is rows x cols, the output cols x rows.
    const std::int64_t width = output ? rows : cols, height = output ? cols : rows;
    const char* matrix = output ? "output" : "input";
    std::vector<std::int64_t> first(static_cast<std::size_t>(rows * cols), -1);  // who, (b,i,j)
    for (std::int64_t b = 0; b < blocks; ++b) {
      for (int i = 0; i < kTile; ++i) {
        for (int j = 0; j < kTile; ++j) {
          const std::int64_t v = f(rows, cols, b, i, j);
          if (v == kNotImplemented) return Verdict::not_written(fn);
          if (v == kOutside) continue;
          if (v < 0 || v >= rows * cols) {
            std::ostringstream m;
            m << call(fn, rows, cols, b, i, j) << " = " << v << ": outside the "
              << shape_name(height, width) << " " << matrix << " (indices 0.." << rows * cols - 1
              << "; return kOutside for an element outside the matrix)";
            return Verdict::fail(m.str());
          }
          std::int64_t& who = first[static_cast<std::size_t>(v)];
          if (who >= 0) {
            std::ostringstream m;
            m << "the " << shape_name(height, width) << " " << matrix << "'s element "
              << element(v, width) << " is " << what << " twice: "
              << call(fn, rows, cols, who / (kTile * kTile), static_cast<int>(who / kTile % kTile),
                      static_cast<int>(who % kTile))
              << " and " << call(fn, rows, cols, b, i, j) << " are both " << v;
            return Verdict::fail(m.str());
          }
          who = (b * kTile + i) * kTile + j;
        }
      }
    }
    for (std::int64_t v = 0; v < rows * cols; ++v) {
      if (first[static_cast<std::size_t>(v)] >= 0) continue;
      // Which block should have had it, by the input's tiles.
      const std::int64_t r = output ? v % width : v / width, c = output ? v / width : v % width;
      const std::int64_t b = (r / kTile) * tiles_x + c / kTile;
      std::ostringstream m;
      m << "the " << shape_name(height, width) << " " << matrix << "'s element "
        << element(v, width) << " (index " << v << ") is never " << what << " (rows = " << rows
        << ", cols = " << cols << ", blocks 0.." << blocks - 1 << "). It belongs to the input's "
        << "tile (" << r / kTile << ", " << c / kTile << "), block " << b << " = " << r / kTile
        << " x tiles_x + " << c / kTile << " with tiles_x = ceil(cols / 32) = " << tiles_x
        << ", as element (" << (output ? c % kTile : r % kTile) << ", "
        << (output ? r % kTile : c % kTile) << ") of its " << matrix << " tile";
      return Verdict::fail(m.str());
    }
  }
  return Verdict::pass();
}

/// For every block and tile row i, the elements j = 0..31 that are inside the matrix have
/// consecutive indices, so that a warp's 32 accesses fall on neighbouring addresses.
inline Verdict consecutive(const TileIndex& f, const char* fn, const char* what) {
  for (const course::Shape& s : index_shapes()) {
    const std::int64_t rows = s.rows, cols = s.cols;
    const std::int64_t blocks = ceil_div(cols, kTile) * ceil_div(rows, kTile);
    std::int64_t inside = 0;  // answers inside the matrix: all of its elements, or it is vacuous
    for (std::int64_t b = 0; b < blocks; ++b) {
      for (int i = 0; i < kTile; ++i) {
        int j0 = -1;
        std::int64_t v0 = 0;
        for (int j = 0; j < kTile; ++j) {
          const std::int64_t v = f(rows, cols, b, i, j);
          if (v == kNotImplemented) return Verdict::not_written(fn);
          if (v == kOutside) continue;
          ++inside;
          if (j0 < 0) {
            j0 = j;
            v0 = v;
          } else if (v != v0 + (j - j0)) {
            std::ostringstream m;
            m << "a warp " << what << " row " << i << " of block " << b << "'s tile is not one "
              << "run of neighbours (not coalesced): " << call(fn, rows, cols, b, i, j0) << " = "
              << v0 << " but " << call(fn, rows, cols, b, i, j) << " = " << v << ", expected "
              << v0 + (j - j0) << ". Consecutive j (threadIdx.x) must give consecutive indices";
            return Verdict::fail(m.str());
          }
        }
      }
    }
    if (inside < rows * cols) return vacuous(fn, rows, cols, inside);
  }
  return Verdict::pass();
}

}  // namespace detail

/// blocks_for gives one block per 32 x 32 tile of the input on every shape of index_shapes()
/// and on the largest shapes a grid holds, and 0 (refuse) for an empty shape.
inline Verdict one_block_per_input_tile(const BlocksFor& blocks_for) {
  const std::vector<course::Shape> empty = {{0, 5}, {5, 0}, {0, 0}, {-1, 7}, {7, -1}};
  for (const course::Shape& s : empty) {
    const std::int64_t got = blocks_for(s.rows, s.cols);
    if (got == kNotImplemented) return Verdict::not_written("blocks_for");
    if (got != 0) {
      return Verdict::fail("blocks_for(rows = " + std::to_string(s.rows) + ", cols = " +
                           std::to_string(s.cols) + ") = " + std::to_string(got) +
                           ": an empty shape must give 0 (the launcher then refuses it)");
    }
  }
  std::vector<course::Shape> shapes = index_shapes();
  shapes.insert(shapes.end(), near_limit_shapes().begin(), near_limit_shapes().end());
  for (const course::Shape& s : shapes) {
    const std::int64_t tiles_y = ceil_div(s.rows, kTile), tiles_x = ceil_div(s.cols, kTile);
    const std::int64_t got = blocks_for(s.rows, s.cols);
    if (got == kNotImplemented) return Verdict::not_written("blocks_for");
    if (got != tiles_x * tiles_y) {
      std::ostringstream m;
      m << "blocks_for(rows = " << s.rows << ", cols = " << s.cols << ") = " << got
        << ", expected " << tiles_x * tiles_y << ": one block per 32 x 32 tile of the input, "
        << "ceil(rows / 32) x ceil(cols / 32) = " << tiles_y << " x " << tiles_x;
      if (tiles_x * tiles_y <= kMaxBlocks) m << " (that many blocks fit in gridDim.x)";
      return Verdict::fail(m.str());
    }
  }
  return Verdict::pass();
}

/// A refusal counts only if something is accepted: blocks_for gives the 1 x 1 and 33 x 65 shapes
/// their blocks (1 and 6). A blocks_for that answers 0 for every shape refuses nothing by
/// judgement, and a launcher that follows it refuses everything.
inline Verdict accepts_a_real_shape(const BlocksFor& blocks_for) {
  for (const course::Shape& s : {course::Shape{1, 1}, course::Shape{33, 65}}) {
    const std::int64_t got = blocks_for(s.rows, s.cols), want = ceil_div(s.rows, kTile) *
                                                                ceil_div(s.cols, kTile);
    if (got == kNotImplemented) return Verdict::not_written("blocks_for");
    if (got != want) {
      return Verdict::fail("blocks_for(rows = " + std::to_string(s.rows) + ", cols = " +
                           std::to_string(s.cols) + ") = " + std::to_string(got) + ", expected " +
                           std::to_string(want) + ": refusing the shapes that do not fit counts "
                           "only if the ones that do are accepted");
    }
  }
  return Verdict::pass();
}

/// blocks_for answers 0 for every shape of limit_shapes() (more tiles than kMaxBlocks), without
/// overflowing, and accepts a real shape.
inline Verdict refuses_past_grid_limit(const BlocksFor& blocks_for) {
  const Verdict accepts = accepts_a_real_shape(blocks_for);
  if (!accepts.ok) return accepts;
  for (const course::Shape& s : limit_shapes()) {
    const std::int64_t got = blocks_for(s.rows, s.cols);
    if (got == kNotImplemented) return Verdict::not_written("blocks_for");
    if (got != 0) {
      std::ostringstream m;
      m << "blocks_for(rows = " << s.rows << ", cols = " << s.cols << ") = " << got
        << ", expected 0: the shape has " << ceil_div(s.rows, kTile) << " x "
        << ceil_div(s.cols, kTile) << " tiles, more than gridDim.x holds (" << kMaxBlocks
        << "), so the launcher must refuse it";
      return Verdict::fail(m.str());
    }
  }
  return Verdict::pass();
}

/// Over blocks 0..tiles-1 and i, j in 0..31, input_index reads every input element exactly
/// once and nothing outside the input.
inline Verdict reads_every_input_element_once(const TileIndex& input_index) {
  return detail::covers_once(input_index, "input_index", "read", false);
}

/// The same for output_index and the output (cols x rows).
inline Verdict writes_every_output_element_once(const TileIndex& output_index) {
  return detail::covers_once(output_index, "output_index", "written", true);
}

/// What the kernel does with the two: output element (i, j) of block b's output tile receives
/// tile[j][i], which holds input element (j, i) of its input tile. So output_index(b, i, j)
/// must be the transposed place of input_index(b, j, i): input (r, c), index r * cols + c, goes
/// to output (c, r), index c * rows + r; and kOutside exactly when that input is kOutside.
inline Verdict writes_to_transposed_place(const TileIndex& input_index,
                                          const TileIndex& output_index) {
  for (const course::Shape& s : index_shapes()) {
    const std::int64_t rows = s.rows, cols = s.cols;
    const std::int64_t blocks = ceil_div(cols, kTile) * ceil_div(rows, kTile);
    std::int64_t moved = 0;  // elements mapped to their place: all of them, or it is vacuous
    for (std::int64_t b = 0; b < blocks; ++b) {
      for (int i = 0; i < kTile; ++i) {
        for (int j = 0; j < kTile; ++j) {
          const std::int64_t src = input_index(rows, cols, b, j, i);
          const std::int64_t dst = output_index(rows, cols, b, i, j);
          if (src == kNotImplemented) return Verdict::not_written("input_index");
          if (dst == kNotImplemented) return Verdict::not_written("output_index");
          if (src == kOutside && dst == kOutside) continue;
          if (src >= 0 && src < rows * cols && dst == src % cols * rows + src / cols) {
            ++moved;
            continue;
          }
          // Something is wrong: say what.
          const std::string read = detail::call("input_index", rows, cols, b, j, i);
          const std::string write = detail::call("output_index", rows, cols, b, i, j);
          if (src != kOutside && (src < 0 || src >= rows * cols)) {
            return Verdict::fail(read + " = " + std::to_string(src) + ": outside the input");
          }
          if (src == kOutside) {
            return Verdict::fail(
                write + " = " + std::to_string(dst) + ", but the tile element it writes, " +
                "tile[" + std::to_string(j) + "][" + std::to_string(i) + "], was never loaded (" +
                read + " is kOutside): the kernel would write garbage" +
                (dst >= rows * cols || dst < 0 ? ", outside the output" : "") +
                ". An output element outside the matrix must be kOutside too");
          }
          const std::int64_t r = src / cols, c = src % cols, want = c * rows + r;
          std::ostringstream m;
          m << "on " << detail::shape_name(rows, cols) << ", tile[" << j << "][" << i
            << "] of block " << b << " holds input element (" << r << ", " << c << ") (" << read
            << " = " << src << "); it belongs at output element (" << c << ", " << r
            << "), index " << c << " x rows + " << r << " = " << want << ", but " << write
            << " = " << dst;
          if (dst == kOutside) {
            m << " (kOutside: the element would never be written)";
          } else if (dst == c * cols + r) {
            m << " = " << c << " x cols + " << r << ": an output row is rows = " << rows
              << " elements long, not cols";
          }
          return Verdict::fail(m.str());
        }
      }
    }
    if (moved < rows * cols) return detail::vacuous("input_index", rows, cols, moved);
  }
  return Verdict::pass();
}

/// A warp (j = threadIdx.x = 0..31 along a tile row) reads 32 neighbours of an input row and
/// writes 32 neighbours of an output row: both sides coalesced.
inline Verdict warps_read_and_write_consecutive(const TileIndex& input_index,
                                                const TileIndex& output_index) {
  Verdict v = detail::consecutive(input_index, "input_index", "reading");
  if (!v.ok) return v;
  return detail::consecutive(output_index, "output_index", "writing");
}

}  // namespace exercise::checks

#include "square_checks.hpp"  // exercise 3's checks, on the same foundations
