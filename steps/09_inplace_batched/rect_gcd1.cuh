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
/// rows of a strip of S columns and swaps the pairs whose smaller row lies there (heads()). The
/// partners lie in a band of H + S - 1 rows: band row q of column c is the partner of own row
/// H - 1 + c - q. A warp reads a diagonal of either array, S + 1 words apart: 32 banks, no pad.
/// Lane t takes columns c = t + 32 u, u < S / 32 (S = 64: the lab's rect-strip64, 256 bytes of a
/// float32 row per warp). Which own rows head a pair is tested once per row, into a 64-bit mask
/// per column that the four loops read (kMask = false tests again at each use: the lab's
/// rect-row-tests). Each loop runs H / 8 or (H + S + 6) / 8 times whatever the thread, so the
/// compiler unrolls it whole. Blocks go along a tile row, strip after strip.
template <typename T, int H, typename Index, bool kMask = true, int S = 32>
__global__ void __launch_bounds__(256)
    reflect_columns_gcd1(T* a, unsigned m, unsigned n, unsigned strips) {
  static_assert(H <= 64 && H % 8 == 0 && S % 32 == 0, "a bit per own row, 8 rows of threads");
  constexpr int kOwn = H / 8, kBand = (H + S - 1 + 7) / 8, kU = S / 32;  // the last may be past
  __shared__ T own[H][S];
  __shared__ T band[H + S - 1][S];
  __shared__ unsigned long long heads_mask[S];  // bit r: own row r of column j0 + c heads a pair
  const unsigned tile = blockIdx.x / strips, strip = blockIdx.x - tile * strips, i0 = tile * H;
  const unsigned j0 = strip * S, j0m = j0 % m;
  const int t = threadIdx.x, y = threadIdx.y;
  unsigned jm[kU];  // j mod m, the centre of column c = t + 32 u
#pragma unroll
  for (int u = 0; u < kU; ++u) jm[u] = next_row(j0m, t + 32 * u, m);
  auto test = [&](int u, int r) {
    return j0 + t + 32 * u < n && i0 + r < m && heads(i0 + r, jm[u], m);
  };
  if (y == 0) {
    for (int u = 0; u < kU; ++u) heads_mask[t + 32 * u] = 0;
  }
  __syncthreads();
  bool any = false;  // this thread's own rows head a pair
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    unsigned long long bits = 0;
#pragma unroll
    for (int k = 0, r = y; k < kOwn; ++k, r += 8) {
      bits |= static_cast<unsigned long long>(test(u, r)) << r;
    }
    if (kMask && bits) atomicOr(&heads_mask[t + 32 * u], bits);
    any |= bits != 0;
  }
  if (!__syncthreads_or(any)) return;  // about half the blocks: their rows are all partners
  unsigned long long mask[kU];
#pragma unroll
  for (int u = 0; u < kU; ++u) mask[u] = heads_mask[t + 32 * u];
  auto head = [&](int u, int r) { return kMask ? (mask[u] >> r & 1) != 0 : test(u, r); };
  auto partner = [&](int u, int q) {  // band row q of column t + 32 u is a partner (or r < 0)
    const int r = H - 1 + t + 32 * u - q;
    return r >= 0 && r < H && head(u, r);
  };
  auto at = [&](unsigned row, int u) -> T& {
    return a[static_cast<Index>(row) * n + j0 + t + 32 * u];
  };
  const unsigned first = next_row(band_base(j0m, i0, H, m), y, m);
#pragma unroll
  for (int k = 0, r = y; k < kOwn; ++k, r += 8) {
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      if (head(u, r)) __pipeline_memcpy_async(&own[r][t + 32 * u], &at(i0 + r, u), sizeof(T));
    }
  }
  unsigned row = first;
#pragma unroll
  for (int k = 0, q = y; k < kBand; ++k, q += 8, row = next_row(row, 8, m)) {
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      if (partner(u, q)) __pipeline_memcpy_async(&band[q][t + 32 * u], &at(row, u), sizeof(T));
    }
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();  // every element this block overwrites is in shared memory
#pragma unroll
  for (int k = 0, r = y; k < kOwn; ++k, r += 8) {
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      if (head(u, r)) at(i0 + r, u) = band[H - 1 + t + 32 * u - r][t + 32 * u];
    }
  }
  row = first;
#pragma unroll
  for (int k = 0, q = y; k < kBand; ++k, q += 8, row = next_row(row, 8, m)) {
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      if (partner(u, q)) at(row, u) = own[H - 1 + t + 32 * u - q][t + 32 * u];
    }
  }
}

/// Own rows of one block of the reflection: 64 in strips of 32 columns, 48 in the lab's strips
/// of 64 (float32: 40 KB of shared memory with the band).
template <int S>
constexpr int kReflectRows = S == 32 ? 64 : 48;

/// Passes 1 and 2 of an m x n matrix with gcd(m, n) = 1 whose rows fit in shared memory; the
/// reflection in strips of S columns (4-byte types; 32 for wider ones).
template <typename T, typename Index, bool kMask, int kStrip = 32>
void gcd1_rows_and_columns(T* a, const RectShape& s, cudaStream_t stream) {
  constexpr int S = sizeof(T) == 4 ? kStrip : 32, H = kReflectRows<S>;
  const unsigned m = static_cast<unsigned>(s.m), n = static_cast<unsigned>(s.n);
  const std::size_t row_bytes = n * sizeof(T);
  const int threads = n < 256 ? (n + 31) / 32 * 32 : row_bytes > 64 * 1024 ? 1024 : 256;
  CUDA_CHECK(cudaFuncSetAttribute(shuffle_rows_gcd1<T, Index>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(row_bytes)));
  shuffle_rows_gcd1<T, Index><<<m, threads, row_bytes, stream>>>(a, n, static_cast<unsigned>(s.k));
  const unsigned tiles_down = (m + H - 1) / H, strips = (n + S - 1) / S;
  reflect_columns_gcd1<T, H, Index, kMask, S>
      <<<tiles_down * strips, dim3(32, 8), 0, stream>>>(a, m, n, strips);
}

}  // namespace step09
