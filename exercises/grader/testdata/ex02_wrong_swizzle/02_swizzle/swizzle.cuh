// MUTANT (exercise 2): the swizzle XORs with row / 2. Each row is still a permutation, so the
// kernel is correct, but rows 2k and 2k+1 put a column in the same bank: 2-way conflicts.
// Caught by: CpuEx02Swizzle.ColumnAccessIsConflictFree (the bank model, no GPU needed).
#pragma once

#include "ex02.cuh"

namespace ex02 {

/// The column of the tile where element (row, col) is stored: tile[row][swizzle(row, col)].
__host__ __device__ inline int swizzle(int row, int col) {
  // kTile is a power of two, so row % kTile is a mask; col < kTile, so the result is too.
  return col ^ ((row & (kTile - 1)) >> 1);  // MUTANT: row / 2
}

}  // namespace ex02
