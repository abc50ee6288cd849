// Step 08 - any element type: where everything sits. The shared-memory layout of a tile, which
// thread handles which vector, and the order in which tiles are visited. All of it is plain
// integer arithmetic, __host__ __device__, so the CPU tests check the very functions the kernel
// calls (every unit stored once, no bank conflicts, every tile visited once).
//
//   make step08 && ./step08 --type f16
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "elements.cuh"

namespace step08 {

/// Threads per block: 8 warps.
constexpr int kThreads = 256;
/// Tiles are visited in groups of this many tile rows (see TileGrid).
constexpr unsigned kGroupRows = 8;

/// The tile of one block: TR rows x TC columns of S-byte elements.
///
/// Shared memory holds the tile already transposed: TC rows (one per output row, i.e. per input
/// column), each TR * S bytes long, made of units. Unit u of row c holds input rows k*u .. k*u+k-1
/// of column c. A row is read back in 16-byte chunks. To keep both the unit writes and the chunk
/// reads free of bank conflicts, chunk q of row c is stored at chunk q ^ swizzle(c): an XOR only
/// permutes chunks within a row, and swizzle(c) differs for the 8 column vectors a warp writes
/// at once (see the lesson).
template <int S, int TR, int TC>
struct TileShape {
  static constexpr int kElem = S;
  static constexpr int kRows = TR;
  static constexpr int kCols = TC;
  static constexpr int kPack = Pack<S>::kRows;            // k: input rows per register block
  static constexpr int kVec = 16 / S;                     // V: elements per 16-byte vector
  static constexpr int kUnit = S < 4 ? 4 : S;             // U: bytes per shared-memory unit
  static constexpr int kUnitsPerChunk = 16 / kUnit;
  static constexpr int kUnitRows = TR / kPack;            // units in one output row of the tile
  static constexpr int kRowBytes = TR * S;                // bytes of one output row of the tile
  static constexpr int kInVecs = TC / kVec;               // vectors in one input row of the tile
  static constexpr int kOutChunks = TR / kVec;            // chunks in one output row of the tile
  static constexpr int kBytes = TR * TC * S;
  // Load phase: a warp takes 8 vectors x 4 unit rows (see load_slot); store phase: 256 chunks.
  static constexpr int kLoadPasses = kUnitRows * kInVecs / kThreads;
  static constexpr int kStorePasses = TC * kOutChunks / kThreads;

  static_assert(S == 1 || S == 2 || S == 4 || S == 8 || S == 16, "element size");
  static_assert(TC * S % 128 == 0 && TR * S % 128 == 0,
                "a tile row must be whole 128-byte lines on both sides: 8 vectors per warp "
                "row, and 8 chunks for the XOR swizzle to permute");
  static_assert(kUnitRows % 4 == 0 && TC % 4 == 0, "a warp spans 4 unit rows (and 4 columns)");
  static_assert(kUnitRows * kInVecs % kThreads == 0, "whole load passes");
  static_assert(TC * kOutChunks % kThreads == 0, "whole store passes");
  static_assert(kBytes <= 48 * 1024, "static shared memory");

  // Unsigned arithmetic: every index is non-negative, and the divisions by powers of two
  // become shifts.
  __host__ __device__ static constexpr unsigned swizzle(unsigned c) { return (c / kVec) % 8; }

  /// Byte offset of unit u of output row c (input column c of the tile). The V columns of one
  /// input vector share their swizzle, so unit_offset(vec*V + e, u) is
  /// unit_offset(vec*V, u) + e * kRowBytes: the kernel computes one offset per vector.
  __host__ __device__ static constexpr unsigned unit_offset(unsigned c, unsigned u) {
    const unsigned byte = u * kUnit;
    return c * kRowBytes + ((byte / 16) ^ swizzle(c)) * 16 + byte % 16;
  }
  /// Byte offset of 16-byte chunk q of output row c.
  __host__ __device__ static constexpr unsigned chunk_offset(unsigned c, unsigned q) {
    return c * kRowBytes + (q ^ swizzle(c)) * 16;
  }
};

/// Which vector of which row a thread takes: a warp covers 8 consecutive vectors (128 bytes, a
/// whole cache line) of 4 consecutive rows, so every load instruction reads 4 full lines and
/// every 4-byte unit it then writes to shared memory lands in its own bank.
struct Slot {
  int vec;  ///< vector (chunk) index along the row
  int row;  ///< row index: unit row when loading, output row of the tile when storing
};

/// The slot of thread @p t in pass @p p, for rows of @p vecs_per_row vectors (a multiple of 8).
__host__ __device__ constexpr Slot load_slot(unsigned vecs_per_row, unsigned t, unsigned p) {
  const unsigned lane = t % 32, task = t / 32 + (kThreads / 32) * p;
  const unsigned groups = vecs_per_row / 8;
  return {static_cast<int>(lane % 8 + 8 * (task % groups)),
          static_cast<int>(lane / 8 + 4 * (task / groups))};
}

/// The order of the tiles. Block b takes the tile given by tile(b): it walks down a group of
/// kGroupRows tile rows, then one tile column to the right, then down again, and so on. Blocks
/// that run at the same time then cover a compact patch of the matrix, so a 32-byte sector shared
/// by two neighbouring tiles (rows that do not start on a sector boundary) is read and written
/// by both while it is still in L2, on either side of the transpose.
struct TileGrid {
  std::uint32_t tiles_r = 0;    ///< tiles down the input (rows / TR, rounded up)
  std::uint32_t tiles_c = 0;    ///< tiles across the input (cols / TC, rounded up)
  std::uint32_t per_group = 0;  ///< tiles in one group: min(kGroupRows, tiles_r) * tiles_c

  __host__ __device__ std::int64_t tiles() const {
    return static_cast<std::int64_t>(tiles_r) * tiles_c;
  }

  // 32-bit arithmetic is enough (the launcher keeps tiles() below 2^31) and saves every block a
  // 64-bit division, which the GPU does in software.
  __host__ __device__ void tile(std::uint32_t b, std::int64_t* ty, std::int64_t* tx) const {
    const std::uint32_t group = b / per_group, within = b - group * per_group;
    const std::uint32_t first = group * kGroupRows;
    const std::uint32_t height = tiles_r - first < kGroupRows ? tiles_r - first : kGroupRows;
    *ty = first + within % height;
    *tx = within / height;
  }
};

/// The grid of @p tr x @p tc tiles over a rows x cols matrix, for at most 2^31-1 tiles.
__host__ __device__ inline TileGrid make_grid(std::int64_t rows, std::int64_t cols, int tr,
                                              int tc) {
  const auto tiles_r = static_cast<std::uint32_t>((rows + tr - 1) / tr);
  const auto tiles_c = static_cast<std::uint32_t>((cols + tc - 1) / tc);
  const std::uint32_t height = tiles_r < kGroupRows ? tiles_r : kGroupRows;
  return {tiles_r, tiles_c, height * tiles_c};
}

}  // namespace step08
