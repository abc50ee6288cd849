/// @file bank_model.hpp
/// @brief A model of shared-memory banks that runs on the CPU: which bank each element of a
/// tile lives in, and how many ways a warp's access conflicts.
///
/// Shared memory is split into 32 banks of 4-byte words; word w lives in bank w % 32. A warp's
/// access takes as many passes as the largest number of *different* words it touches in any one
/// bank (threads reading the same word share it: a broadcast). That number is the conflict
/// degree: 1 is conflict-free, 32 is fully serialized.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace course {

/// Shared-memory banks on every NVIDIA GPU since Maxwell.
constexpr int kBanks = 32;

/// Maps a tile element (row, col) to its word address in shared memory (4-byte words).
using TileLayout = std::function<std::int64_t(int row, int col)>;

/// `float tile[n][n]`: word row*n + col.
TileLayout plain_layout(int n);
/// `float tile[n][n + 1]`: one word of padding per row, word row*(n+1) + col.
TileLayout padded_layout(int n);
/// `float tile[n][n]` with the column XOR-ed by the row: word row*n + (col ^ (row % 32)).
/// Within a row the XOR only permutes columns (a bijection); down a column each row lands in a
/// different bank.
TileLayout swizzled_layout(int n);
/// A layout from a swizzle function of a reader's own: word row*n + swizzle(row, col).
TileLayout layout_from_swizzle(int n, const std::function<int(int row, int col)>& swizzle);

/// The bank of a word address.
inline int bank_of(std::int64_t word) { return static_cast<int>(((word % kBanks) + kBanks) % kBanks); }

/// The conflict degree of one warp access: the most distinct words any single bank is asked for.
int conflict_degree(const std::vector<std::int64_t>& words);

/// A warp reading row @p row of an n x n tile: thread t reads (row, t), for t < min(32, n).
int row_read_degree(const TileLayout& layout, int n, int row);
/// A warp reading column @p col: thread t reads (t, col), for t < min(32, n).
int column_read_degree(const TileLayout& layout, int n, int col);
/// The worst row_read_degree over every row of the tile.
int worst_row_degree(const TileLayout& layout, int n);
/// The worst column_read_degree over every column of the tile.
int worst_column_degree(const TileLayout& layout, int n);

/// True when, in every row, the n columns land on n distinct words of [row*n, row*n + n): the
/// layout stores every element exactly once and never outside its row (what a swizzle must do).
bool is_row_permutation(const TileLayout& layout, int n);

/// A text picture of the tile: each cell is the bank of that element; the column a warp reads in
/// the transposed read (column 0) is marked. Rows and columns past 32 are elided.
std::string bank_map(const TileLayout& layout, int n, const std::string& name);

}  // namespace course
