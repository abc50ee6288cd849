// Exercise 02, reference answer, part 1 - the swizzle: element (row, col) of an unpadded 32 x 32
// tile is stored in column col XOR row. Within a row, XOR with a fixed number only shuffles the
// 32 columns (a bijection), so the row still holds each element once. Down a column, the 32 rows
// XOR col with 32 different numbers, so the 32 elements land in 32 different banks.
//
//   make test   (runs build/bin/test_ex02_solution, the exercise's tests on this answer)
#pragma once

#include "ex02.cuh"

namespace ex02 {

/// The column of the tile where element (row, col) is stored: tile[row][swizzle(row, col)].
__host__ __device__ inline int swizzle(int row, int col) {
  // kTile is a power of two, so row % kTile is a mask; col < kTile, so the result is too.
  return col ^ (row & (kTile - 1));
}

}  // namespace ex02
