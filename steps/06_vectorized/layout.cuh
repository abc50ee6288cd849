// Step 06 - where each element of the 32 x 32 tile lives in shared memory, for a kernel that
// moves VEC floats (4 * VEC bytes) per access. Host and device code: the kernel indexes the tile
// with it, and the tests feed the same function to the CPU bank model (common/bank_model.hpp).
//
//   make step06 && ./step06
#pragma once

#include <cuda_runtime.h>

namespace step06 {

constexpr int kTile = 32;  // the tile is kTile x kTile floats

enum class Layout {
  // float tile[32][32 + VEC]: VEC words of padding keep every row 4*VEC-byte aligned, so a thread
  // stores its vector with one shared store. Reading a column then costs VEC-way bank conflicts
  // (2-way for float2, 4-way for float4): one read instruction visits rows VEC apart, which are
  // VEC*(32+VEC) words, i.e. VEC*VEC banks, apart, so its 32/VEC rows find only 32/(VEC*VEC)
  // different banks.
  padded,
  // float tile[32][32] with whole vectors permuted inside each row: vector slot q of row r is
  // stored at slot q ^ (r / VEC). Vectors stay whole and aligned (one shared store each), and a
  // column read instruction (32/VEC lanes on rows VEC apart, times VEC neighbouring columns)
  // lands on 32 different banks.
  swizzled,
};

// Words per tile row.
template <int VEC, Layout L>
constexpr int kPitch = L == Layout::padded ? kTile + VEC : kTile;

// The word index of tile element (r, c).
template <int VEC, Layout L>
__host__ __device__ constexpr int tile_index(int r, int c) {
  if constexpr (L == Layout::padded) {
    return r * kPitch<VEC, L> + c;
  } else {
    constexpr int kSlots = kTile / VEC;  // vectors per row; a power of two, so XOR stays inside
    const int slot = (c / VEC) ^ ((r / VEC) % kSlots);
    return r * kTile + slot * VEC + c % VEC;
  }
}

}  // namespace step06
