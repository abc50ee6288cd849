// HOSTILE (exercise 2): a swizzle with two faces. On the host (what the CPU tests and the bank
// model check) it is the XOR swizzle; on the device (#ifdef __CUDA_ARCH__, what the kernel runs)
// it is no swizzle at all, so the kernel is correct but full of bank conflicts.
// What must happen: the grader evaluates ex02::swizzle in a kernel of its own and compares with
// the host's values: the one-swizzle entry fails and the swizzle's points are lost (GPU needed;
// without one the CPU entries pass and that entry is not graded).
#pragma once

#include "ex02.cuh"

namespace ex02 {

/// The column of the tile where element (row, col) is stored: tile[row][swizzle(row, col)].
__host__ __device__ inline int swizzle(int row, int col) {
  // kTile is a power of two, so row % kTile is a mask; col < kTile, so the result is too.
#ifdef __CUDA_ARCH__
  (void)row;
  return col;  // HOSTILE: the device never swizzles
#else
  return col ^ (row & (kTile - 1));
#endif
}

}  // namespace ex02
