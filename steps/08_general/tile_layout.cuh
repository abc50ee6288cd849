// Step 08 - any element type: where everything sits. Since step 07 the tile is sized in bytes
// (128 or 256 bytes a side, whatever the element), one XOR swizzle serves every element size,
// and the tile order is a group height computed from the tile's width. All of it is plain
// integer arithmetic, __host__ __device__, so the CPU tests check the very functions the kernels
// call (every unit stored once, no bank conflicts, every tile visited once).
//
//   make step08 && ./step08 --type f16
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "elements.cuh"

namespace step08 {

/// Threads per block: 8 warps.
constexpr int kThreads = 256;
/// Blocks that run at the same time, about: an H100 holds 8 blocks of 256 threads on each of
/// its 132 SMs. Only the tile order uses it (see TileGrid).
constexpr std::int64_t kBlocksInFlight = 1024;
/// The blocks in flight should read each input row in pieces of at least this many bytes.
constexpr std::int64_t kReadPiece = 1024;

/// Element (r, c) of a rows x cols matrix exists.
__host__ __device__ inline bool inside(std::int64_t rows, std::int64_t cols, std::int64_t r,
                                       std::int64_t c) {
  return r >= 0 && r < rows && c >= 0 && c < cols;
}

/// The largest divisor of n that is at most limit (batches of loads that divide the work).
__host__ __device__ constexpr int divisor_at_most(int n, int limit) {
  int d = limit < n ? limit : n;
  while (n % d != 0) --d;
  return d;
}

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
/// group_rows tile rows, then one tile column to the right, then down again, and so on; then the
/// next group. The blocks in flight (kBlocksInFlight) thus cover a patch group_rows tiles tall
/// and kBlocksInFlight / group_rows tiles wide: input rows are read in pieces as wide as the
/// patch, output rows (the patch's input columns) written in pieces as tall as it. Step 07 found
/// the output side to matter more (its "down the columns" order), but a patch one tile column
/// wide reads its input rows one tile at a time, 128 bytes for some tiles. So make_grid makes
/// the group as tall as it can while the patch still reads pieces of kReadPiece bytes: TC * S
/// tile rows for tiles TC elements of S bytes wide. Tiles that share a 32-byte sector (rows
/// that do not start on one) are neighbours in this order too, so the shared sector is still in
/// L2 for the second one.
struct TileGrid {
  std::uint32_t tiles_r = 0;     ///< tiles down the input (rows / TR, rounded up)
  std::uint32_t tiles_c = 0;     ///< tiles across the input (cols / TC, rounded up)
  std::uint32_t group_rows = 1;  ///< tile rows per group
  std::uint32_t per_group = 0;   ///< tiles in one full group: group_rows * tiles_c

  __host__ __device__ std::int64_t tiles() const {
    return static_cast<std::int64_t>(tiles_r) * tiles_c;
  }

  // 32-bit arithmetic is enough (the launcher keeps tiles() below 2^31) and saves every block a
  // 64-bit division, which the GPU does in software.
  __host__ __device__ void tile(std::uint32_t b, std::int64_t* ty, std::int64_t* tx) const {
    const std::uint32_t group = b / per_group, within = b - group * per_group;
    const std::uint32_t first = group * group_rows;
    const std::uint32_t height = tiles_r - first < group_rows ? tiles_r - first : group_rows;
    *ty = first + within % height;
    *tx = within / height;
  }
};

/// The grid of @p tr x @p tc tiles of @p elem_size-byte elements over a rows x cols matrix, for
/// at most 2^31-1 tiles.
__host__ __device__ inline TileGrid make_grid(std::int64_t rows, std::int64_t cols, int tr,
                                              int tc, int elem_size) {
  const auto tiles_r = static_cast<std::uint32_t>((rows + tr - 1) / tr);
  const auto tiles_c = static_cast<std::uint32_t>((cols + tc - 1) / tc);
  // kBlocksInFlight / group tiles across, each tc * elem_size bytes wide, make kReadPiece.
  const std::int64_t want = kBlocksInFlight * tc * elem_size / kReadPiece;
  const auto group_rows = static_cast<std::uint32_t>(tiles_r < want ? tiles_r : want);
  return {tiles_r, tiles_c, group_rows, group_rows * tiles_c};
}

}  // namespace step08
