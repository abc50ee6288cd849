// Step 09 lab: the in-place rectangle with its column reflections done without shared memory.
// What changed from the general passes (../rect_general.cuh): one thread per element swaps it
// with its partner directly. The element's own row piece is read and written whole by a warp,
// but the partners of a warp's 32 columns lie on 32 different rows (an anti-diagonal in the
// column reflection), so that side costs a 32-byte sector per 4-byte element unless L2 merges
// the neighbours.
//
//   make step09-lab && ./step09-lab --rows 8191 --cols 4097 --only "reflections in place"
#pragma once

#include <algorithm>
#include <climits>

#include "rect_general.cuh"

namespace step09_lab {

using step09::i64;

/// The partner of row i in a column reflected about row `center`.
__host__ __device__ inline i64 reflect(i64 center, i64 i, i64 m) {
  return step09::wrap(center - i, m);
}

/// Column j reflected about row floor(j / per), each pair swapped by the thread of its upper
/// element: rows of the grid's y dimension loop down the matrix (at most 65535 blocks there).
template <typename T>
__global__ void reflect_columns_direct(T* a, i64 m, i64 n, i64 per) {
  const i64 j = static_cast<i64>(blockIdx.x) * 32 + threadIdx.x;
  if (j >= n) return;
  const i64 center = (j / per) % m;
  for (i64 i = static_cast<i64>(blockIdx.y) * blockDim.y + threadIdx.y; i < m;
       i += static_cast<i64>(gridDim.y) * blockDim.y) {
    const i64 p = reflect(center, i, m);
    if (i < p) {
      const T v = a[i * n + j];
      a[i * n + j] = a[p * n + j];
      a[p * n + j] = v;
    }
  }
}

/// The general passes (../rect_general.cuh) with reflect_columns_direct for both reflections;
/// the same plan.
template <typename T>
cudaError_t transpose_rect_direct(T* a, i64 rows, i64 cols, step09::GeneralPlan& plan,
                                  cudaStream_t stream = nullptr) {
  if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
  if (rows == 1 || cols == 1) return cudaSuccess;
  if (std::max(rows, cols) > INT_MAX) return cudaErrorInvalidValue;
  // The row shuffle and the row swaps exactly as the general launcher runs them (repeated
  // here: that launcher has no switch for a variant it does not teach).
  const step09::RectShape s = step09::rect_shape(rows, cols);
  const bool mirror = s.c > 1;
  const std::size_t row_bytes = (mirror ? 2 : 1) * cols * sizeof(T);
  int device = 0, limit = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const bool in_shared = row_bytes <= static_cast<std::size_t>(limit);
  if (plan.m != rows || plan.n != cols || plan.elem != sizeof(T)) {
    const std::vector<int> partners = step09::row_swaps(s);
    plan.partners = course::DeviceBuffer(2 * rows * sizeof(int));
    CUDA_CHECK(cudaMemcpy(plan.partners.as<int>(), partners.data(), 2 * rows * sizeof(int),
                          cudaMemcpyHostToDevice));
    plan.rows = in_shared ? course::DeviceBuffer()
                          : course::DeviceBuffer(step09::kScratchBlocks * 2 * cols * sizeof(T));
    plan.m = rows, plan.n = cols, plan.elem = sizeof(T);
  }
  if (in_shared) {
    CUDA_CHECK(cudaFuncSetAttribute(step09::shuffle_rows<T>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(row_bytes)));
  }
  const dim3 grid(static_cast<unsigned>((cols + 31) / 32),
                  static_cast<unsigned>(std::min<i64>((rows + 7) / 8, 65535)));
  const int threads = cols < 512 ? static_cast<int>((cols + 31) / 32 * 32) : 512;
  if (mirror) reflect_columns_direct<T><<<grid, dim3(32, 8), 0, stream>>>(a, rows, cols, s.b);
  const unsigned shuffles = in_shared ? static_cast<unsigned>(mirror ? rows / 2 + 1 : rows)
                                      : step09::kScratchBlocks;
  step09::shuffle_rows<T><<<shuffles, in_shared ? threads : 1024, in_shared ? row_bytes : 0,
                            stream>>>(a, s, mirror, in_shared ? nullptr : plan.rows.as<T>());
  reflect_columns_direct<T><<<grid, dim3(32, 8), 0, stream>>>(a, rows, cols, 1);
  for (const int* round : {plan.partners.as<int>(), plan.partners.as<int>() + rows}) {
    step09::swap_rows<T><<<static_cast<unsigned>(rows), threads, 0, stream>>>(a, cols, round);
  }
  return cudaGetLastError();
}

}  // namespace step09_lab
