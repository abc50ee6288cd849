// Step 08 - the launcher's decisions, as plain host code: which kernel, which tile, for which
// element size, shape and pointers. New since step 07, whose one kernel took one kind of
// problem: here the element size, the rows' alignment on 16 bytes and on 32-byte sectors, and
// the pointers decide. Nothing here needs a GPU, so the CPU tests check every rule.
//
//   make step08 && ./step08 --type f32 --rows 4095 --cols 4097     (prints the path it picks)
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace step08 {

/// The ways the launcher can transpose.
enum class Path {
  copy,       ///< 1 x N or N x 1: the transpose has the same bytes as the input, a cudaMemcpy
  vector,     ///< 1-, 2- or 16-byte elements, every row on both sides on 16 bytes: transpose_vec
  shifted,    ///< 1-byte elements, rows off 16 bytes: transpose_shift (halves: the table row)
  scalar,     ///< 4- or 8-byte elements on any rows: transpose_scalar, one element per access
};

inline const char* path_name(Path p) {
  switch (p) {
    case Path::copy: return "copy";
    case Path::vector: return "16B vectors";
    case Path::shifted: return "shifted vectors";
    default: return "scalar";
  }
}

/// Tile rows x cols, in elements.
struct TileSize { int rows, cols; };

/// The vector kernel's tile per element size: 4 to 32 KB, each side 128 to 256 bytes long (the
/// lab, lab/LAB.md, times other tile shapes for each size).
constexpr TileSize vector_tile(std::size_t elem_size) {
  switch (elem_size) {
    case 1: return {128, 128};  // 128 x 128 bytes (16 KB)
    case 2: return {128, 128};  // 256-byte row pieces on both sides (32 KB)
    case 4: return {64, 64};    // step 07's tile (16 KB)
    case 8: return {32, 32};    // 256-byte row pieces on both sides (8 KB)
    default: return {16, 16};   // 16-byte elements: 256 bytes per side (4 KB)
  }
}

/// The shifted kernel's tile (1- and 2-byte elements), 32 KB, and the rows it loads above its
/// own when the writes are cut on sectors (one sector of elements): tiles step down by the rest.
constexpr TileSize shift_tile(std::size_t elem_size) {
  return elem_size == 1 ? TileSize{256, 128} : TileSize{128, 128};
}
constexpr int shift_lead(std::size_t elem_size) { return static_cast<int>(32 / elem_size); }

/// The scalar kernel's square tile per element size (17-37 KB of shared memory with the lead
/// rows of a cut). 4- and 8-byte elements use 64 x 64, which keeps more loads in flight per
/// thread than 32 x 32 (the lab times both); 16-byte elements stay at 32 x 32 (64 x 64 would
/// pass 48 KB of static shared memory).
constexpr int scalar_tile(std::size_t elem_size) {
  return elem_size <= 2 ? 128 : elem_size <= 8 ? 64 : 32;
}

/// What the launcher will do.
struct Plan {
  Path path = Path::copy;
  TileSize tile = {0, 0};      ///< 0 x 0 for the copy
  bool cut = false;            ///< scalar, shifted: output rows cut on their 32-byte sectors
  std::int64_t blocks = 0;     ///< tiles, one block each (0 for the copy)

  std::string describe() const {
    std::string s = path_name(path);
    if (path != Path::vector && path != Path::copy && cut) s += ", sector-aligned writes";
    return s;
  }
};

constexpr bool valid_elem_size(std::size_t s) {
  return s == 1 || s == 2 || s == 4 || s == 8 || s == 16;
}

/// Blocks needed for @p tile over rows x cols, or -1 when past CUDA's 2^31-1 blocks in x.
inline std::int64_t blocks_for(std::int64_t rows, std::int64_t cols, TileSize tile) {
  const std::int64_t tr = (rows + tile.rows - 1) / tile.rows;
  const std::int64_t tc = (cols + tile.cols - 1) / tile.cols;
  const std::int64_t max_blocks = std::numeric_limits<std::int32_t>::max();
  if (tr > max_blocks / tc) return -1;
  return tr * tc;
}

/// True when the matrix can be transposed at all: a supported element size, rows, cols >= 1,
/// a size that fits in 64 bits, and pointers aligned to the element size (16 bytes at most).
inline bool valid_problem(std::size_t elem_size, std::int64_t rows, std::int64_t cols,
                          std::uintptr_t in, std::uintptr_t out) {
  if (!valid_elem_size(elem_size) || rows < 1 || cols < 1) return false;
  const std::int64_t s = static_cast<std::int64_t>(elem_size);
  if (rows > std::numeric_limits<std::int64_t>::max() / cols / s) return false;
  return in % elem_size == 0 && out % elem_size == 0;
}

/// Every input row starts on a 16-byte boundary: the buffer does, and a row is whole vectors.
inline bool input_rows_aligned(std::size_t elem_size, std::int64_t cols, std::uintptr_t in) {
  return in % 16 == 0 && (cols * static_cast<std::int64_t>(elem_size)) % 16 == 0;
}
/// Every output row (rows elements long) starts on a 16-byte boundary.
inline bool output_rows_aligned(std::size_t elem_size, std::int64_t rows, std::uintptr_t out) {
  return out % 16 == 0 && (rows * static_cast<std::int64_t>(elem_size)) % 16 == 0;
}

/// Every output row starts on a 32-byte sector.
inline bool output_rows_on_sectors(std::size_t elem_size, std::int64_t rows, std::uintptr_t out) {
  return out % 32 == 0 && (rows * static_cast<std::int64_t>(elem_size)) % 32 == 0;
}

/// Whether 16-byte vectors are worth it for @p elem_size-byte elements. For 1 and 2 bytes they
/// are: one element per access leaves a warp's access at 32 or 64 bytes, one or two sectors,
/// and the scalar kernel well below the vector kernel (the lesson's tables). For 4 and 8 bytes a
/// warp's scalar access is already 128 or 256 bytes, whole sectors, and the scalar kernel's
/// 64 x 64 tile measured level with or ahead of the vector kernel on the aligned float and
/// double shapes. 16-byte elements are vectors either way.
constexpr bool vectors_pay(std::size_t elem_size) { return elem_size != 4 && elem_size != 8; }

/// Decides how to transpose the rows x cols matrix of @p elem_size-byte elements at device
/// address @p in into @p out. Returns false, leaving @p plan alone, when no kernel can.
///   1 x N, N x 1              -> copy (the transposed matrix has the same bytes)
///   both sides aligned, and   -> vector, the fast path for narrow elements: every access
///   vectors_pay(elem_size)       16 bytes, whole tiles unchecked
///   1-byte elements           -> shifted: aligned vectors shifted into place in registers
///   otherwise                 -> scalar: one element per access (2-byte elements too: on
///                                misaligned rows the scalar kernel measured ahead of the
///                                shifted vectors for halves, behind them for bytes)
/// shifted and scalar cut each output row on its own sectors when the rows do not start on one.
inline bool plan_transpose(std::size_t elem_size, std::int64_t rows, std::int64_t cols,
                           std::uintptr_t in, std::uintptr_t out, Plan* plan) {
  if (!valid_problem(elem_size, rows, cols, in, out)) return false;
  Plan p;
  if (rows == 1 || cols == 1) {  // p.path is Path::copy
    *plan = p;
    return true;
  }
  const bool in_ok = input_rows_aligned(elem_size, cols, in);
  const bool out_ok = output_rows_aligned(elem_size, rows, out);
  TileSize step{0, 0};  // how far apart the tiles are: the tile less its lead rows if shifted
  p.cut = !output_rows_on_sectors(elem_size, rows, out);
  if (in_ok && out_ok && vectors_pay(elem_size)) {
    p.path = Path::vector;
    p.tile = step = vector_tile(elem_size);
    p.cut = false;
  } else if (elem_size == 1) {
    p.path = Path::shifted;
    p.tile = step = shift_tile(elem_size);
    if (p.cut) step.rows -= shift_lead(elem_size);
  } else {  // 16-byte elements are always aligned once their pointers are (checked above)
    p.path = Path::scalar;
    p.tile = step = {scalar_tile(elem_size), scalar_tile(elem_size)};
  }
  p.blocks = blocks_for(rows, cols, step);
  if (p.blocks < 0) return false;
  *plan = p;
  return true;
}

}  // namespace step08
