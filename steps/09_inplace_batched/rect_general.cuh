// Step 09, part 3 - a rectangle in place: the general passes, for any shape (RECTANGLES.md,
// "Every other shape"). The lesson's routes (inplace_rect.cuh) hand them the shapes they do not
// take (gcd 2 to 31, rows longer than shared memory), and the lab times them as the baseline
// (id rect-general), the course's first version of this part. The transpose is taken apart into
// moves that each keep an element in its row or its column (rect_index.cuh has the arithmetic),
// one pass each: column reflections (pairs swapped through shared memory), a row shuffle, two
// rounds of row swaps; four passes when gcd = 1, five otherwise.
//
//   make step09 && ./step09 --mode inplace --rows 8190 --cols 4094 --only general
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>

#include "device_buffer.cuh"
#include "rect_index.cuh"

namespace step09 {

/// Column j reflected about row floor(j / per) (mod m): per = b, the pre-reflection; per = 1, the
/// column reflection. A 32 x 8 block swaps the pairs whose upper element is in its 32x32 tile. The
/// centre moves down at most one row per column, so the partners lie in 63 consecutive rows, the
/// band: both sides go into shared memory as row pieces, then come back swapped.
template <typename T>
__global__ void __launch_bounds__(256)
    reflect_columns(T* a, i64 m, i64 n, i64 per, i64 tiles_down) {
  __shared__ T own[32][33];
  __shared__ T band[63][33];
  const i64 i0 = (blockIdx.x % tiles_down) * 32, j0 = (blockIdx.x / tiles_down) * 32;
  const int t = threadIdx.x;
  const i64 j = j0 + t;
  const int delta = static_cast<int>(j / per - j0 / per);  // 0..31 rows below column j0's centre
  const i64 center = (j / per) % m;
  const i64 base = wrap(j0 / per - i0 - 31, m);  // the row of band[0]
  unsigned mine = 0;  // bit r: row i0 + r of column j swaps with a partner below it
  for (int r = 0; r < 32; ++r) {
    const i64 i = i0 + r;
    const i64 partner = center - i < 0 ? center - i + m : center - i;
    if (j < n && i < m && i < partner) mine |= 1u << r;
  }
  // The partner of row i0 + r is band row 31 + delta - r.
  auto band_row = [&](int q) { const i64 x = base + q; return x < m ? x : x % m; };
  auto swapped = [&](int r) { return r >= 0 && r < 32 && (mine >> r & 1); };
  for (int r = threadIdx.y; r < 32; r += 8)
    if (swapped(r)) own[r][t] = a[(i0 + r) * n + j];
  for (int q = threadIdx.y; q < 63; q += 8)
    if (swapped(31 + delta - q)) band[q][t] = a[band_row(q) * n + j];
  __syncthreads();  // every element this block overwrites is in shared memory
  for (int r = threadIdx.y; r < 32; r += 8)
    if (swapped(r)) a[(i0 + r) * n + j] = band[31 + delta - r][t];
  for (int q = threadIdx.y; q < 63; q += 8)
    if (swapped(31 + delta - q)) a[band_row(q) * n + j] = own[31 + delta - q][t];
}

/// The row shuffle: row i, and when c > 1 its mirror (m - i) mod m (which turns the pre-
/// reflection into a rotation), read whole into `buf`, then written back gathered, each from the
/// other. `buf` is shared memory, or, for rows too long for it, two rows of global scratch.
template <typename T>
__global__ void shuffle_rows(T* a, RectShape s, bool mirror, T* scratch) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* const buf = scratch ? scratch + 2 * s.n * blockIdx.x : reinterpret_cast<T*>(smem);
  const i64 n = s.n, rows = mirror ? s.m / 2 + 1 : s.m;
  for (i64 i = blockIdx.x; i < rows; i += gridDim.x) {
    const i64 i2 = mirror ? wrap(s.m - i, s.m) : i;
    const bool two = i2 != i;
    for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
      buf[j] = a[i * n + j];
      if (two) buf[n + j] = a[i2 * n + j];
    }
    __syncthreads();
    const T* const old_i2 = two ? buf + n : buf;
    ShuffleWalk w(s, i, threadIdx.x, blockDim.x), w2(s, i2, threadIdx.x, blockDim.x);
    for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
      a[i * n + j] = old_i2[w.source()];
      if (two) a[i2 * n + j] = buf[w2.source()];
      w.advance();
      w2.advance();
    }
    __syncthreads();  // before the next row overwrites buf
  }
}

/// The row swaps, one round: rows x and partner[x] swapped, by the block of the smaller one.
template <typename T>
__global__ void swap_rows(T* a, i64 n, const int* partner) {
  const i64 x = blockIdx.x, y = partner[x];
  if (y <= x) return;
  for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
    const T v = a[x * n + j];
    a[x * n + j] = a[y * n + j];
    a[y * n + j] = v;
  }
}

constexpr int kScratchBlocks = 8;  // row-shuffle blocks when rows live in global scratch

/// What a shape needs besides its matrix, made by its first call and kept: the row swaps' 2 m
/// partners, and the row shuffle's global rows when its rows do not fit in shared memory.
struct GeneralPlan {
  i64 m = 0, n = 0;
  std::size_t elem = 0;
  course::DeviceBuffer partners, rows;
  std::size_t bytes() const { return partners.bytes() + rows.bytes(); }
};

/// Transposes the rows x cols matrix at @p a in place, into cols x rows: any sides below 2^31,
/// else cudaErrorInvalidValue. A 1 x N or N x 1 matrix is its own transpose: nothing runs.
template <typename T>
cudaError_t transpose_rect_general(T* a, i64 rows, i64 cols, GeneralPlan& plan,
                                   cudaStream_t stream = nullptr) {
  if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
  if (rows == 1 || cols == 1) return cudaSuccess;
  const i64 tiles_down = (rows + 31) / 32, strips = (cols + 31) / 32;
  if (std::max(rows, cols) > INT_MAX || tiles_down * strips > INT_MAX) return cudaErrorInvalidValue;
  const RectShape s = rect_shape(rows, cols);
  const bool mirror = s.c > 1;
  const std::size_t row_bytes = (mirror ? 2 : 1) * cols * sizeof(T);
  int device = 0, limit = 0;  // shared memory one block may have
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const bool in_shared = row_bytes <= static_cast<std::size_t>(limit);
  if (plan.m != rows || plan.n != cols || plan.elem != sizeof(T)) {  // a new shape: plan it
    const std::vector<int> partners = row_swaps(s);
    plan.partners = course::DeviceBuffer(2 * rows * sizeof(int));
    CUDA_CHECK(cudaMemcpy(plan.partners.as<int>(), partners.data(), 2 * rows * sizeof(int),
                          cudaMemcpyHostToDevice));
    plan.rows = in_shared ? course::DeviceBuffer()
                          : course::DeviceBuffer(kScratchBlocks * 2 * cols * sizeof(T));
    plan.m = rows, plan.n = cols, plan.elem = sizeof(T);
  }
  if (in_shared) {
    CUDA_CHECK(cudaFuncSetAttribute(shuffle_rows<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(row_bytes)));
  }
  const unsigned tiles = static_cast<unsigned>(tiles_down * strips);
  const int threads = cols < 512 ? static_cast<int>((cols + 31) / 32 * 32) : 512;
  if (mirror) {  // the pre-reflection
    reflect_columns<T><<<tiles, dim3(32, 8), 0, stream>>>(a, rows, cols, s.b, tiles_down);
  }
  const unsigned shuffles = in_shared ? static_cast<unsigned>(mirror ? rows / 2 + 1 : rows)
                                      : kScratchBlocks;
  shuffle_rows<T><<<shuffles, in_shared ? threads : 1024, in_shared ? row_bytes : 0, stream>>>(
      a, s, mirror, in_shared ? nullptr : plan.rows.as<T>());
  reflect_columns<T><<<tiles, dim3(32, 8), 0, stream>>>(a, rows, cols, 1, tiles_down);
  for (const int* round : {plan.partners.as<int>(), plan.partners.as<int>() + rows}) {
    swap_rows<T><<<static_cast<unsigned>(rows), threads, 0, stream>>>(a, cols, round);
  }
  return cudaGetLastError();
}

}  // namespace step09
