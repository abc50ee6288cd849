// Step 08, part 1 - the grid of tiles, for every kernel of the step. Since step 07: blocks are
// numbered on grid.x, up to 2^31 - 1 of them, with 64-bit offsets, so a matrix may pass 2^31
// elements; step 07's order "down the columns" goes down groups of tile rows, tall enough that
// a full GPU's blocks in flight still read each input row in pieces of 1 KB.
//   make step08 && ./step08 --rows 46341 --cols 46341
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>

namespace step08 {

constexpr int kThreads = 256;                   // threads per block: 8 warps
constexpr std::int64_t kBlocksInFlight = 1024;  // about an H100's 8 blocks x 132 SMs (1,056)
constexpr std::int64_t kReadPiece = 1024;       // bytes of each input row those read together

/// Every row (@p len elements of @p size bytes, from address @p p) starts on @p align bytes.
inline bool rows_start_on(int align, std::size_t size, std::int64_t len, std::uintptr_t p) {
  return p % align == 0 && len * static_cast<std::int64_t>(size) % align == 0;
}

/// The type that moves one S-byte element.
template <int S> struct Element;
template <> struct Element<1> { using type = std::uint8_t; };
template <> struct Element<2> { using type = std::uint16_t; };
template <> struct Element<4> { using type = std::uint32_t; };
template <> struct Element<8> { using type = uint2; };
template <> struct Element<16> { using type = uint4; };

struct TileSize { int rows, cols; };  // a tile's rows x cols, in elements

/// Blocks for @p tile over rows x cols, one per tile, or -1 past CUDA's 2^31 - 1 blocks in x.
inline std::int64_t blocks_for(std::int64_t rows, std::int64_t cols, TileSize tile) {
  const std::int64_t tr = (rows + tile.rows - 1) / tile.rows;
  const std::int64_t tc = (cols + tile.cols - 1) / tile.cols;
  if (tr > std::numeric_limits<std::int32_t>::max() / tc) return -1;
  return tr * tc;
}

/// The order of the tiles: block b walks down a group of group_rows tile rows, then one tile
/// column right, and so on; then the next group. The blocks in flight cover a patch group_rows
/// tiles tall, (blocks in flight) / group_rows wide: they write output rows in pieces as tall as
/// the patch (step 07: the side that matters more) and read input rows in pieces as wide.
struct TileGrid {
  std::uint32_t tiles_r = 0;     ///< tiles down the input (rows / tile rows, rounded up)
  std::uint32_t tiles_c = 0;     ///< tiles across the input
  std::uint32_t group_rows = 1;  ///< tile rows per group
  std::uint32_t per_group = 0;   ///< tiles in one full group: group_rows * tiles_c

  __host__ __device__ std::int64_t tiles() const {
    return static_cast<std::int64_t>(tiles_r) * tiles_c;
  }

  // 32-bit arithmetic is enough (below 2^31 tiles) and spares every block a 64-bit division,
  // which the GPU does in software.
  __host__ __device__ void tile(std::uint32_t b, std::int64_t* ty, std::int64_t* tx) const {
    const std::uint32_t group = b / per_group, within = b - group * per_group;
    const std::uint32_t first = group * group_rows;
    const std::uint32_t height = tiles_r - first < group_rows ? tiles_r - first : group_rows;
    *ty = first + within % height;
    *tx = within / height;
  }
};

/// The grid of @p tr x @p tc tiles of @p elem_size-byte elements over rows x cols: groups as
/// tall as they can be while the patch in flight still reads kReadPiece bytes of each input row.
__host__ __device__ inline TileGrid make_grid(std::int64_t rows, std::int64_t cols, int tr,
                                              int tc, int elem_size) {
  const auto tiles_r = static_cast<std::uint32_t>((rows + tr - 1) / tr);
  const auto tiles_c = static_cast<std::uint32_t>((cols + tc - 1) / tc);
  const std::int64_t want = kBlocksInFlight * tc * elem_size / kReadPiece;
  const auto group_rows = static_cast<std::uint32_t>(tiles_r < want ? tiles_r : want);
  return {tiles_r, tiles_c, group_rows, group_rows * tiles_c};
}

}  // namespace step08
