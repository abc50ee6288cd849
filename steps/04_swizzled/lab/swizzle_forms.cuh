// Step 04's lab - how the swizzle is written, at one element per thread. The lesson's kernel
// stores element (r, c) at column c ^ r and never reduces r, because r is a thread index in
// 0..31. The general form reduces the row to the 32 banks first; this lab measures what that costs
// when written `row & 31` and when written `row % 32` on a signed int, with step 03's padded
// tile as the control, all in one run.
//
//   make step04-lab && ./step04-lab
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "transpose.cuh"

namespace step04_lab {

using step04::kTile;

enum class Form {
  padded,  // step 03: tile[32][33], no permutation
  xor_row, // the lesson: c ^ r
  and_31,  // c ^ (r & 31): one AND per shared access
  mod_32,  // c ^ (r % 32), r a signed int: % must be right for negative r too
};

template <Form F>
__host__ __device__ __forceinline__ int column(int row, int col) {
  if constexpr (F == Form::padded) {
    return col;
  } else if constexpr (F == Form::xor_row) {
    return col ^ row;
  } else if constexpr (F == Form::and_31) {
    return col ^ (row & 31);
  } else {
    return col ^ (row % 32);
  }
}

template <typename T, Form F>
__global__ void __launch_bounds__(kTile * kTile)
transpose_form(const T* __restrict__ in, T* __restrict__ out, std::int64_t rows,
               std::int64_t cols, unsigned tiles_x) {
  __shared__ T tile[kTile][F == Form::padded ? kTile + 1 : kTile];
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x / tiles_x) * kTile;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.x % tiles_x) * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;

  std::int64_t r = row0 + ty, c = col0 + tx;
  if (r < rows && c < cols) tile[ty][column<F>(ty, tx)] = in[r * cols + c];

  __syncthreads();

  r = col0 + ty;
  c = row0 + tx;
  if (r < cols && c < rows) out[r * rows + c] = tile[tx][column<F>(tx, ty)];
}

// The lesson's launcher with the form as a parameter: one 32x32-thread block per tile;
// cudaErrorInvalidValue, without launching, on an empty shape or a grid past gridDim.x.
template <Form F, typename T>
cudaError_t transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream = nullptr) {
  const std::int64_t blocks = step04::tile_blocks(rows, cols, kTile);
  if (blocks == 0) return cudaErrorInvalidValue;
  const auto tiles_x = static_cast<unsigned>((cols + kTile - 1) / kTile);
  transpose_form<T, F><<<static_cast<unsigned>(blocks), dim3(kTile, kTile), 0, stream>>>(
      in, out, rows, cols, tiles_x);
  return cudaGetLastError();
}

}  // namespace step04_lab
