// Exercise 02, part 1 - the swizzle: where element (row, col) of an unpadded 32 x 32 tile is
// stored, so that a warp reading a tile row AND a warp reading a tile column both hit 32
// different banks. The same function runs in the kernel (swizzled.cu) and, on the CPU, in the
// tests that check it with the bank model (common/bank_model.hpp).
//
//   make ex02      builds and runs this exercise's tests (the CPU ones need no GPU)
#pragma once

#include "ex02.cuh"

namespace ex02 {

/// The column of the tile where element (row, col) is stored: tile[row][swizzle(row, col)].
/// Rules: for each row, the 32 columns must go to 32 different places in [0, kTile) (nothing is
/// lost, nothing leaves its row); a warp reading one row (col = 0..31) and a warp reading one
/// column (row = 0..31) must each touch 32 different banks.
__host__ __device__ inline int swizzle(int row, int col) {
  // TODO(exercise): return the swizzled column. One XOR does it (README.md, hints).
  (void)row, (void)col;
  return kSwizzleNotImplemented;  // the tests report "not implemented yet"
}

}  // namespace ex02
