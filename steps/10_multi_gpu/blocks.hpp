// Step 10 - where every piece of a matrix split over G GPUs lives: which rows each GPU holds,
// and where each piece sits in the send and receive buffers, chunk by chunk. Host code only, so
// the CPU tests check every rule; multi_transpose.cuh moves the bytes.
//
// The R x C input is cut into G blocks of rows; GPU g holds block g. The transpose (C x R) is cut
// the same way, so GPU g gets output rows = input COLUMNS of block g of the C columns. GPU s's
// piece for GPU d is the input block s, columns of block d: count(s) x count(d) elements.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace step10 {

/// n items cut into `parts` consecutive blocks whose sizes differ by one at most: the first
/// n % parts blocks have one more. A block may be empty (fewer items than parts).
struct Blocks {
  std::int64_t n;
  int parts;

  std::int64_t count(int p) const { return n / parts + (p < n % parts ? 1 : 0); }
  std::int64_t first(int p) const { return p * (n / parts) + std::min<std::int64_t>(p, n % parts); }
  /// The block that holds item i (0 <= i < n).
  int owner(std::int64_t i) const {
    const std::int64_t q = n / parts, big = (n % parts) * (q + 1);  // items in the larger blocks
    return static_cast<int>(i < big ? i / (q + 1) : n % parts + (i - big) / q);
  }
};

/// One GPU's rows cut into k chunks that go through the pipeline one after another. Each chunk
/// is a whole number of kChunkRows rows (the last one less), so that the pieces of a chunk start
/// on 16 bytes for every element size; with few rows the last chunks are empty.
inline constexpr std::int64_t kChunkRows = 64;
struct Chunks {
  std::int64_t rows;
  int k;

  std::int64_t step() const { return ((rows + k - 1) / k + kChunkRows - 1) / kChunkRows * kChunkRows; }
  std::int64_t first(int c) const { return std::min(rows, c * step()); }
  std::int64_t count(int c) const { return std::min(rows, first(c) + step()) - first(c); }
};

/// A run of elements in a buffer: where it starts and how many.
struct Piece {
  std::int64_t offset;
  std::int64_t count;
};

/// The problem as every GPU sees it: the whole matrix, the element size, G and the chunks.
struct Layout {
  std::int64_t rows, cols;  ///< the whole input matrix
  std::size_t elem;         ///< bytes per element
  int gpus;                 ///< G
  int chunks;               ///< chunks per GPU (the same on every GPU)

  Blocks row_blocks() const { return {rows, gpus}; }  ///< input rows of each GPU
  Blocks col_blocks() const { return {cols, gpus}; }  ///< output rows (input columns) of each
  Chunks chunks_of(int g) const { return {row_blocks().count(g), chunks}; }

  /// Elements of GPU g's input block (and send buffer), and of its output block.
  std::int64_t in_elems(int g) const { return row_blocks().count(g) * cols; }
  std::int64_t out_elems(int g) const { return col_blocks().count(g) * rows; }

  /// In GPU s's send buffer: chunk c of its rows, transposed (cols x h), holds the piece for each
  /// GPU d as its rows col_blocks().first(d).. : contiguous, count(d) x h; on 16 bytes but in the
  /// last chunk, whose h may be any number.
  Piece sent(int s, int d, int c) const {
    const Chunks ch = chunks_of(s);
    return {ch.first(c) * cols + col_blocks().first(d) * ch.count(c),
            col_blocks().count(d) * ch.count(c)};
  }
  /// Elements in 16 bytes (one at least): every piece in the receive buffer starts on 16 bytes.
  std::int64_t align() const { return elem >= 16 ? 1 : static_cast<std::int64_t>(16 / elem); }
  /// In GPU d's receive buffer: the piece of chunk c from GPU s, in the order of the input rows
  /// it came from, so that every piece has its own place; the k-th piece moved on by up to k + 1
  /// times 16 bytes so that it starts on 16 bytes (NCCL copies aligned pieces faster).
  Piece received(int d, int s, int c) const {
    const std::int64_t q = align(), k = static_cast<std::int64_t>(s) * chunks + c;
    const std::int64_t at = col_blocks().count(d) * (row_blocks().first(s) + chunks_of(s).first(c));
    return {(at + k * q + q - 1) / q * q, col_blocks().count(d) * chunks_of(s).count(c)};
  }
  /// Elements of GPU d's receive buffer: its output block and room for the alignment.
  std::int64_t recv_elems(int d) const { return out_elems(d) + (static_cast<std::int64_t>(gpus) * chunks + 1) * align(); }
  /// The first column of every output row on GPU d that the piece of chunk c from GPU s fills:
  /// its input rows' numbers in the whole matrix (the same on every GPU d).
  std::int64_t column(int s, int c) const { return row_blocks().first(s) + chunks_of(s).first(c); }
};

/// Chunks per GPU when not given: one per 128 MiB of the largest input block, 4 to 32. More
/// chunks leave less of the first pack and the last place outside the transfers; each costs one
/// more NCCL launch and handshake (the lab times 1 to 64).
inline int auto_chunks(std::int64_t rows, std::int64_t cols, std::size_t elem, int gpus) {
  if (gpus == 1) return 1;  // nothing to overlap: the whole transpose is one local pass
  const double bytes = static_cast<double>(Blocks{rows, gpus}.count(0)) * cols * elem;
  return static_cast<int>(std::clamp(bytes / (128.0 * (1 << 20)) + 0.5, 4.0, 32.0));
}

}  // namespace step10
