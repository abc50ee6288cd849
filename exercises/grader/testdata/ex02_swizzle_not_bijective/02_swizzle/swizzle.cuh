// MUTANT (exercise 2): the swizzle adds and masks to 16 columns, so two columns of a row share a
// place and half of the row is lost.
// Caught by: CpuEx02Swizzle.KeepsEveryElementInItsRow (bank model, CPU), and every GPU test.
#pragma once

#include "ex02.cuh"

namespace ex02 {

/// The column of the tile where element (row, col) is stored: tile[row][swizzle(row, col)].
__host__ __device__ inline int swizzle(int row, int col) {
  // kTile is a power of two, so row % kTile is a mask; col < kTile, so the result is too.
  return (col + row) & (kTile / 2 - 1);  // MUTANT: only 16 places
}

}  // namespace ex02
