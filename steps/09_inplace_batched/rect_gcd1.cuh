// Step 09, part 4 - a rectangle of coprime sides in place (COPRIME.md): passes 1 and 2 of the
// gcd1 route, which part 3's launcher (inplace_rect.cuh) runs before its cycle pass. Where
// gcd(m, n) = 1 the m x n matrix has no square blocks to transpose; instead each row is shuffled
// (pass 1), each column reflected (pass 2), and whole rows then move along cycles (pass 3,
// part 3's kernel). Catanzaro, Keller and Garland's decomposition (PPoPP 2014) with c = 1.
//
//   make step09 && ./step09 --mode inplace --rows 8191 --cols 4097
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "check.cuh"
#include "rect_index.cuh"

namespace step09 {

/// x y mod n for x, y < 2^32; (x + y) mod n and (x - y) mod n for x, y < n < 2^31, by one
/// comparison instead of a division.
__host__ __device__ inline unsigned mul_mod(unsigned x, unsigned y, unsigned n) {
  return static_cast<unsigned>(static_cast<std::uint64_t>(x) * y % n);
}
__host__ __device__ inline unsigned add_mod(unsigned x, unsigned y, unsigned n) {
  return x + y >= n ? x + y - n : x + y;
}
__host__ __device__ inline unsigned sub_mod(unsigned x, unsigned y, unsigned n) {
  return x >= y ? x - y : x + n - y;
}

/// The gcd1 reflection: whether row i of a column whose centre is jm (= j mod m) heads its pair,
/// the smaller of i and its partner (jm - i) mod m; a fixed point heads nothing.
__host__ __device__ inline bool heads(unsigned i, unsigned jm, unsigned m) {
  return i <= jm ? 2 * i < jm : 2 * i < jm + m;
}

/// The matrix row of band row 0 of the block whose own rows start at i0, in the strip of columns
/// starting at j0 (j0m = j0 mod m): own row r of lane t pairs with band row H - 1 + t - r.
/// With j0m, i0 < m it needs no 64-bit division, which the device runs as a subroutine.
__host__ __device__ inline unsigned band_base(unsigned j0m, unsigned i0, int H, unsigned m) {
  return sub_mod(sub_mod(j0m, i0, m), static_cast<unsigned>(H - 1) % m, m);
}

/// @p row moved @p by rows down, mod m (by may exceed m in a tiny matrix).
__host__ __device__ inline unsigned next_row(unsigned row, unsigned by, unsigned m) {
  for (row += by; row >= m;) row -= m;
  return row;
}

/// gcd1, pass 1: row i gathered, new[i][j] = old[i][k (j - i) mod n], the row whole in shared
/// memory. Column j = threadIdx.x + r blockDim.x reads column k j - k i (mod n): a thread starts
/// there and adds k blockDim.x (mod n) per column, no division per element.
template <typename T, typename Index>
__global__ void __launch_bounds__(1024) shuffle_rows_gcd1(T* a, unsigned n, unsigned k) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* const old_row = reinterpret_cast<T*>(smem);
  T* const row = a + static_cast<Index>(blockIdx.x) * n;
  for (unsigned j = threadIdx.x; j < n; j += blockDim.x) {
    __pipeline_memcpy_async(&old_row[j], &row[j], sizeof(T));
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();  // the whole row is in shared memory
  const unsigned step = mul_mod(k, blockDim.x, n);
  unsigned from = sub_mod(mul_mod(k, threadIdx.x, n), mul_mod(k, blockIdx.x, n), n);
  for (unsigned j = threadIdx.x; j < n; j += blockDim.x, from = add_mod(from, step, n)) {
    row[j] = old_row[from];
  }
}

/// gcd1, pass 2: column j reflected about row j mod m, row i <-> (j - i) mod m. A block owns H
/// rows of a strip of 32 columns and swaps the pairs whose smaller row lies there (heads()). The
/// partners lie in a band of H + 31 rows: band row q of lane t is the partner of own row
/// H - 1 + t - q. A lane reads a diagonal of either array, 33 words apart: 32 banks, no pad.
/// Which own rows head a pair is tested once per row, into a 64-bit mask per column that the four
/// loops read (kMask = false tests again at each use: the lab's rect-row-tests). Each loop runs
/// H / 8 or (H + 38) / 8 times whatever the thread, so the compiler unrolls it whole. Blocks go
/// along a tile row, strip after strip.
template <typename T, int H, typename Index, bool kMask = true>
__global__ void __launch_bounds__(256)
    reflect_columns_gcd1(T* a, unsigned m, unsigned n, unsigned strips) {
  static_assert(H <= 64 && H % 8 == 0, "one bit per own row, 8 rows of threads");
  constexpr int kOwn = H / 8, kBand = (H + 31 + 7) / 8;  // rows per thread; the last may be past
  __shared__ T own[H][32];
  __shared__ T band[H + 31][32];
  __shared__ unsigned long long heads_mask[32];  // bit r: own row r of column j0 + t heads a pair
  const unsigned tile = blockIdx.x / strips, strip = blockIdx.x - tile * strips, i0 = tile * H;
  const unsigned j0 = strip * 32, j0m = j0 % m, j = j0 + threadIdx.x;
  const unsigned jm = next_row(j0m, threadIdx.x, m);  // j mod m, the column's centre
  const int t = threadIdx.x, y = threadIdx.y;
  auto test = [&](int r) { return j < n && i0 + r < m && heads(i0 + r, jm, m); };
  if (y == 0) heads_mask[t] = 0;
  __syncthreads();
  unsigned long long bits = 0;  // this thread's own rows
#pragma unroll
  for (int k = 0, r = y; k < kOwn; ++k, r += 8) {
    bits |= static_cast<unsigned long long>(test(r)) << r;
  }
  if (kMask && bits) atomicOr(&heads_mask[t], bits);
  if (!__syncthreads_or(bits != 0)) return;  // about half the blocks: their rows are all partners
  const unsigned long long mask = heads_mask[t];
  auto head = [&](int r) { return kMask ? (mask >> r & 1) != 0 : test(r); };  // 0 <= r < H
  auto partner = [&](int q) {  // band row q of this column is a partner (q >= H + 31: r < 0)
    const int r = H - 1 + t - q;
    return r >= 0 && r < H && head(r);
  };
  auto at = [&](unsigned row) -> T& { return a[static_cast<Index>(row) * n + j]; };
  const unsigned first = next_row(band_base(j0m, i0, H, m), y, m);
#pragma unroll
  for (int k = 0, r = y; k < kOwn; ++k, r += 8) {
    if (head(r)) __pipeline_memcpy_async(&own[r][t], &at(i0 + r), sizeof(T));
  }
  unsigned row = first;
#pragma unroll
  for (int k = 0, q = y; k < kBand; ++k, q += 8, row = next_row(row, 8, m)) {
    if (partner(q)) __pipeline_memcpy_async(&band[q][t], &at(row), sizeof(T));
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();  // every element this block overwrites is in shared memory
#pragma unroll
  for (int k = 0, r = y; k < kOwn; ++k, r += 8) {
    if (head(r)) at(i0 + r) = band[H - 1 + t - r][t];
  }
  row = first;
#pragma unroll
  for (int k = 0, q = y; k < kBand; ++k, q += 8, row = next_row(row, 8, m)) {
    if (partner(q)) at(row) = own[H - 1 + t - q][t];
  }
}

constexpr int kReflectRows = 64;  // own rows of one block of the reflection (band: + 31)

/// Passes 1 and 2 of an m x n matrix with gcd(m, n) = 1 whose rows fit in shared memory.
template <typename T, typename Index, bool kMask>
void gcd1_rows_and_columns(T* a, const RectShape& s, cudaStream_t stream) {
  const unsigned m = static_cast<unsigned>(s.m), n = static_cast<unsigned>(s.n);
  const std::size_t row_bytes = n * sizeof(T);
  const int threads = n < 256 ? (n + 31) / 32 * 32 : row_bytes > 64 * 1024 ? 1024 : 256;
  CUDA_CHECK(cudaFuncSetAttribute(shuffle_rows_gcd1<T, Index>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(row_bytes)));
  shuffle_rows_gcd1<T, Index><<<m, threads, row_bytes, stream>>>(a, n, static_cast<unsigned>(s.k));
  const unsigned tiles_down = (m + kReflectRows - 1) / kReflectRows, strips = (n + 31) / 32;
  reflect_columns_gcd1<T, kReflectRows, Index, kMask>
      <<<tiles_down * strips, dim3(32, 8), 0, stream>>>(a, m, n, strips);
}

}  // namespace step09
