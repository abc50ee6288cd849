// Step 09 lab: a rectangle in place in two or three passes. What changed from the lesson's passes
// (../inplace_rect.cuh, four or five of them): where gcd(m, n) = c >= 32 the matrix is a grid of
// c x c blocks, transposed in place by the square kernel's tile pairs, after which whole pieces of
// c elements move along cycles (two passes). Where c = 1, the lesson's row shuffle and column
// reflection stay, with 32-bit indices, additions instead of divisions and a closed form for
// which rows head a pair, and the two rounds of row swaps become one walk along the cycles of the
// row gather (three passes). Other shapes run the lesson's passes. The index arithmetic is in
// three_pass_index.cuh.
//
//   make step09-lab && ./step09-lab --rows 8192 --cols 4096 --only "three passes"
//   ./step09-lab --rows 8191 --cols 4097 --type f64
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "device_buffer.cuh"
#include "harness.cuh"
#include "inplace.cuh"
#include "inplace_rect.cuh"
#include "three_pass_index.cuh"

namespace step09_lab {

/// Pass 1 of blocks: block (I, J) of the a x b grid of c x c blocks, rows @p ld elements apart,
/// transposed in place. The lesson's tile pairs (../inplace.cuh), with blockIdx.x = block * pairs
/// + k and the block's corner as the matrix origin.
template <typename T, int TILE, int ROWS, typename Index>
__global__ void __launch_bounds__(TILE * ROWS, 2048 / (TILE * ROWS))
    block_tile_pairs(T* matrix, Index ld, unsigned c, unsigned b, unsigned pairs) {
  constexpr int kPerThread = TILE / ROWS;
  __shared__ T tile_ij[TILE][TILE + 1];
  __shared__ T tile_ji[TILE][TILE + 1];
  const unsigned block = blockIdx.x / pairs, I = block / b, J = block - I * b;
  const step09::TilePair pair = step09::upper_pair(blockIdx.x - block * pairs);
  T* const a = matrix + static_cast<Index>(I) * c * ld + static_cast<Index>(J) * c;
  const unsigned r0 = pair.i * TILE, c0 = pair.j * TILE;
  const int h = static_cast<int>(min(c - r0, static_cast<unsigned>(TILE)));
  const int w = static_cast<int>(min(c - c0, static_cast<unsigned>(TILE)));
  const bool diagonal = pair.i == pair.j;
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int r = ty + k * ROWS;
    if (r < h && tx < w) {
      __pipeline_memcpy_async(&tile_ij[r][tx], &a[(r0 + r) * ld + c0 + tx], sizeof(T));
    }
    if (!diagonal && r < w && tx < h) {
      __pipeline_memcpy_async(&tile_ji[r][tx], &a[(c0 + r) * ld + r0 + tx], sizeof(T));
    }
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();  // both tiles are in shared memory: no other block touches them
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int r = ty + k * ROWS;
    if (r < w && tx < h) a[(c0 + r) * ld + r0 + tx] = tile_ij[tx][r];
    if (!diagonal && r < h && tx < w) a[(r0 + r) * ld + c0 + tx] = tile_ji[tx][r];
  }
}

/// Pass 2 of blocks and pass 3 of gcd1: pieces of @p len units (a unit is 4, 8 or 16 bytes) moved
/// along the cycles of a gather, new[x_s] = old[x_s+1]. One warp takes one cycle and 32
/// consecutive units of every piece on it, and keeps K loads in flight: the rows x_s+1 .. x_s+K
/// are read before x_s .. x_s+K-1 are written, which is safe because only x0 is needed after it
/// is written (its value is kept from the start). The cycle's piece numbers come from the table
/// 32 at a time, one per lane, and reach the other lanes by shuffles.
template <typename U, int K, typename Index>
__global__ void __launch_bounds__(256)
    permute_pieces(U* a, Index len, const int* __restrict__ order, const int* __restrict__ starts,
                   unsigned cycles, unsigned chunks) {
  static_assert(K < 32, "x_s .. x_s+K come from one window of 32 table entries");
  const unsigned long long warp = blockIdx.x * 8ULL + threadIdx.x / 32;
  const unsigned cycle = static_cast<unsigned>(warp / chunks);
  if (cycle >= cycles) return;  // the whole warp: the shuffles below need all 32 lanes
  const int lane = threadIdx.x % 32;
  const Index e = static_cast<Index>(warp - static_cast<unsigned long long>(cycle) * chunks) * 32 +
                  lane;
  const bool active = e < len;
  const int first = starts[cycle], length = starts[cycle + 1] - first;
  const int* const x = order + first;
  int window = x[lane < length ? lane : length - 1];  // x_(s0 + lane)
  const int x0 = __shfl_sync(~0u, window, 0);          // every lane, before any branch
  U first_value{};
  if (active) first_value = a[static_cast<Index>(x0) * len + e];
  for (int s0 = 0; s0 < length; s0 += K) {
    const int ahead = s0 + K + lane;
    const int next = ahead < length ? x[ahead] : 0;  // the next window, fetched early
    U v[K];
#pragma unroll
    for (int s = 0; s < K; ++s) {
      const int from = __shfl_sync(~0u, window, s + 1);
      v[s] = first_value;  // x_length is x0
      if (active && s0 + s + 1 < length) v[s] = a[static_cast<Index>(from) * len + e];
    }
#pragma unroll
    for (int s = 0; s < K; ++s) {
      const int to = __shfl_sync(~0u, window, s);
      if (active && s0 + s < length) a[static_cast<Index>(to) * len + e] = v[s];
    }
    window = next;
  }
}

/// Pass 1 of gcd1: row i gathered, new[i][j] = old[i][k (j - i) mod n], the row held whole in
/// shared memory. Blocks stay resident and loop over rows i = blockIdx.x, + gridDim.x, ...; a
/// thread's column j = threadIdx.x + r blockDim.x has source k j - k i (mod n), so it keeps
/// k threadIdx.x, adds k blockDim.x per column and subtracts k gridDim.x per row: no division.
template <typename T, typename Index>
__global__ void __launch_bounds__(1024)
    shuffle_rows_gcd1(T* a, unsigned m, unsigned n, unsigned k, unsigned k_block,
                      unsigned k_grid) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* const old_row = reinterpret_cast<T*>(smem);
  const unsigned kt = mul_mod(k, threadIdx.x, n);
  unsigned ki = mul_mod(k, blockIdx.x, n);
  for (unsigned i = blockIdx.x; i < m; i += gridDim.x, ki = add_mod(ki, k_grid, n)) {
    T* const row = a + static_cast<Index>(i) * n;
    for (unsigned j = threadIdx.x; j < n; j += blockDim.x) {
      __pipeline_memcpy_async(&old_row[j], &row[j], sizeof(T));
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();  // the whole row is in shared memory
    unsigned from = sub_mod(kt, ki, n);
    for (unsigned j = threadIdx.x; j < n; j += blockDim.x, from = add_mod(from, k_block, n)) {
      row[j] = old_row[from];
    }
    __syncthreads();  // before the next row overwrites old_row
  }
}

/// Pass 2 of gcd1: column j reflected about row j mod m, row i <-> (j - i) mod m. A block owns
/// H rows of a strip of 32 columns and swaps the pairs whose smaller row lies there (heads()),
/// so each pair is swapped once. The partners lie in a band of H + 31 rows; band row q of lane t
/// is the partner of own row H - 1 + t - q. A lane reads a diagonal of either array, whose
/// addresses are 33 words apart: 32 different banks without a pad.
template <typename T, int H, typename Index>
__global__ void __launch_bounds__(256)
    reflect_columns_gcd1(T* a, unsigned m, unsigned n, unsigned tiles_down) {
  __shared__ T own[H][32];
  __shared__ T band[H + 31][32];
  const unsigned strip = blockIdx.x / tiles_down, tile = blockIdx.x - strip * tiles_down;
  const unsigned i0 = tile * H, j0 = strip * 32, j0m = j0 % m;
  const int t = threadIdx.x;
  const unsigned j = j0 + t, jm = next_row(j0m, t, m);  // jm = j mod m, the column's centre
  auto mine = [&](int r) {  // row i0 + r of this column heads a pair
    return j < n && r >= 0 && r < H && i0 + r < m && heads(i0 + r, jm, m);
  };
  bool any = false;
  for (int r = threadIdx.y; r < H; r += 8) any |= mine(r);
  if (!__syncthreads_or(any)) return;  // about half the blocks: their rows are all partners

  const unsigned first = next_row(band_base(j0m, i0, H, m), threadIdx.y, m);
  for (int r = threadIdx.y; r < H; r += 8) {
    if (mine(r)) {
      __pipeline_memcpy_async(&own[r][t], &a[static_cast<Index>(i0 + r) * n + j], sizeof(T));
    }
  }
  unsigned row = first;
  for (int q = threadIdx.y; q < H + 31; q += 8, row = next_row(row, 8, m)) {
    if (mine(H - 1 + t - q)) {
      __pipeline_memcpy_async(&band[q][t], &a[static_cast<Index>(row) * n + j], sizeof(T));
    }
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();  // every element this block overwrites is in shared memory
  for (int r = threadIdx.y; r < H; r += 8) {
    if (mine(r)) a[static_cast<Index>(i0 + r) * n + j] = band[H - 1 + t - r][t];
  }
  row = first;
  for (int q = threadIdx.y; q < H + 31; q += 8, row = next_row(row, 8, m)) {
    if (mine(H - 1 + t - q)) a[static_cast<Index>(row) * n + j] = own[H - 1 + t - q][t];
  }
}

/// What a shape needs besides its matrix, made by the first call for that shape and kept: the
/// route, the cycle table of its last pass (order and starts, ints), and for the lesson's route
/// the lesson's own plan.
struct ThreePassPlan {
  i64 m = 0, n = 0;
  std::size_t elem = 0;
  Route route = Route::none;
  unsigned cycles = 0;
  course::DeviceBuffer order, starts;
  int shuffle_grid = 0, shuffle_threads = 0;  // gcd1's pass 1: resident blocks, threads
  step09::RectPlan lesson;
  std::size_t bytes() const { return order.bytes() + starts.bytes() + lesson.bytes(); }
};

namespace detail {

inline void upload(const Cycles& cy, ThreePassPlan& plan) {
  plan.cycles = static_cast<unsigned>(cy.count());
  plan.order = course::DeviceBuffer(cy.order.size() * sizeof(int));
  plan.starts = course::DeviceBuffer(cy.starts.size() * sizeof(int));
  CUDA_CHECK(cudaMemcpy(plan.order.get(), cy.order.data(), cy.order.size() * sizeof(int),
                        cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(plan.starts.get(), cy.starts.data(), cy.starts.size() * sizeof(int),
                        cudaMemcpyHostToDevice));
}

template <typename U, int K, typename Index>
cudaError_t permute(void* a, i64 len_units, const ThreePassPlan& plan, cudaStream_t stream) {
  const i64 chunks = (len_units + 31) / 32, blocks = (plan.cycles * chunks + 7) / 8;
  if (blocks > INT_MAX) return cudaErrorInvalidValue;
  permute_pieces<U, K, Index><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
      static_cast<U*>(a), static_cast<Index>(len_units), plan.order.as<int>(),
      plan.starts.as<int>(), plan.cycles, static_cast<unsigned>(chunks));
  return cudaGetLastError();
}

/// The last pass of either route: pieces of @p len elements, in the widest unit that both the
/// piece and the matrix's address allow.
template <typename T, typename Index>
cudaError_t permute_in_units(T* a, i64 len, const ThreePassPlan& plan, cudaStream_t stream) {
  if (plan.cycles == 0) return cudaSuccess;
  const i64 bytes = len * static_cast<i64>(sizeof(T));
  const auto address = reinterpret_cast<std::uintptr_t>(a);
  if (bytes % 16 == 0 && address % 16 == 0) {
    return permute<uint4, 8, Index>(a, bytes / 16, plan, stream);
  }
  if (bytes % 8 == 0 && address % 8 == 0) {
    return permute<uint2, 16, Index>(a, bytes / 8, plan, stream);
  }
  return permute<unsigned, 16, Index>(a, bytes / 4, plan, stream);
}

template <typename T>
void make_plan(i64 rows, i64 cols, ThreePassPlan& plan) {
  int device = 0, limit = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  plan.route = choose_route(rows, cols, sizeof(T), static_cast<std::size_t>(limit));
  plan.cycles = 0;
  plan.order = course::DeviceBuffer();
  plan.starts = course::DeviceBuffer();
  const step09::RectShape s = step09::rect_shape(rows, cols);
  if (plan.route == Route::blocks && (s.a > 1 || s.b > 1)) {
    upload(gather_cycles(s.a * s.b * s.c, [&](i64 p) { return piece_source(p, s.a, s.b, s.c); }),
           plan);
  }
  if (plan.route == Route::gcd1) {
    upload(gather_cycles(rows, [&](i64 i) { return step09::row_source(s, i); }), plan);
    const std::size_t row_bytes = static_cast<std::size_t>(cols) * sizeof(T);
    // Long rows: fewer blocks fit, so each gets more threads to keep its loads in flight.
    plan.shuffle_threads = row_bytes > 64 * 1024 ? 1024
                           : cols < 256          ? static_cast<int>((cols + 31) / 32 * 32)
                                                 : 256;
    const auto kernel = shuffle_rows_gcd1<T, std::uint64_t>;  // same resources for both indices
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(row_bytes)));
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel,
                                                             plan.shuffle_threads, row_bytes));
    plan.shuffle_grid = static_cast<int>(std::min<i64>(rows, std::max(per_sm, 1) * sms));
  }
  plan.m = rows, plan.n = cols, plan.elem = sizeof(T);
}

template <typename T, typename Index>
cudaError_t run_blocks(T* a, const step09::RectShape& s, const ThreePassPlan& plan,
                       cudaStream_t stream) {
  constexpr int kTile = sizeof(T) == 4 ? 64 : 32, kRows = 8;  // rows of 256 bytes
  const i64 tiles = (s.c + kTile - 1) / kTile, pairs = tiles * (tiles + 1) / 2;
  block_tile_pairs<T, kTile, kRows, Index>
      <<<static_cast<unsigned>(s.a * s.b * pairs), dim3(kTile, kRows), 0, stream>>>(
          a, static_cast<Index>(s.n), static_cast<unsigned>(s.c), static_cast<unsigned>(s.b),
          static_cast<unsigned>(pairs));
  CUDA_CHECK(cudaGetLastError());
  return permute_in_units<T, Index>(a, s.c, plan, stream);
}

template <typename T, typename Index>
cudaError_t run_gcd1(T* a, const step09::RectShape& s, const ThreePassPlan& plan,
                     cudaStream_t stream) {
  const unsigned m = static_cast<unsigned>(s.m), n = static_cast<unsigned>(s.n);
  const unsigned k = static_cast<unsigned>(s.k);
  const auto shuffle = shuffle_rows_gcd1<T, Index>;
  const std::size_t row_bytes = static_cast<std::size_t>(n) * sizeof(T);
  CUDA_CHECK(cudaFuncSetAttribute(shuffle, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(row_bytes)));
  shuffle<<<plan.shuffle_grid, plan.shuffle_threads, row_bytes, stream>>>(
      a, m, n, k, mul_mod(k, plan.shuffle_threads, n), mul_mod(k, plan.shuffle_grid, n));
  CUDA_CHECK(cudaGetLastError());
  const i64 tiles_down = (s.m + kReflectRows - 1) / kReflectRows, strips = (s.n + 31) / 32;
  if (tiles_down * strips > INT_MAX) return cudaErrorInvalidValue;
  reflect_columns_gcd1<T, kReflectRows, Index>
      <<<static_cast<unsigned>(tiles_down * strips), dim3(32, 8), 0, stream>>>(
          a, m, n, static_cast<unsigned>(tiles_down));
  CUDA_CHECK(cudaGetLastError());
  return permute_in_units<T, Index>(a, s.n, plan, stream);
}

}  // namespace detail

/// Transposes the rows x cols matrix at @p a in place, into cols x rows: two passes where gcd >= 32
/// (or a square), three where gcd = 1, the lesson's passes otherwise. Sides below 2^31;
/// cudaErrorInvalidValue, without launching, for others. A 1 x N or N x 1 matrix is its own
/// transpose in memory: nothing runs.
template <typename T>
cudaError_t transpose_three_pass(T* a, i64 rows, i64 cols, ThreePassPlan& plan,
                                 cudaStream_t stream = nullptr) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "float32 and float64");
  if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
  if (rows == 1 || cols == 1) return cudaSuccess;
  if (std::max(rows, cols) > INT_MAX) return cudaErrorInvalidValue;
  if (plan.m != rows || plan.n != cols || plan.elem != sizeof(T)) {
    detail::make_plan<T>(rows, cols, plan);
  }
  const step09::RectShape s = step09::rect_shape(rows, cols);
  const bool narrow = rows * cols <= static_cast<i64>(UINT32_MAX);  // 32-bit element indices
  switch (plan.route) {
    case Route::blocks:
      return narrow ? detail::run_blocks<T, std::uint32_t>(a, s, plan, stream)
                    : detail::run_blocks<T, std::uint64_t>(a, s, plan, stream);
    case Route::gcd1:
      return narrow ? detail::run_gcd1<T, std::uint32_t>(a, s, plan, stream)
                    : detail::run_gcd1<T, std::uint64_t>(a, s, plan, stream);
    case Route::lesson:
      return step09::transpose_inplace_rect<T>(a, rows, cols, plan.lesson, stream);
    case Route::none:
      break;
  }
  return cudaSuccess;
}

/// The kernel as a row of the lab's table, with its own @p plan.
inline course::Variant three_pass_variant(course::ElemType type,
                                          std::shared_ptr<ThreePassPlan> plan) {
  const bool f64 = type == course::ElemType::f64;
  course::Variant v{"rect-three-pass", "rectangle, three passes", "-", "-",
                    [plan, f64](const course::Problem& p, const void*, void* out, cudaStream_t s) {
                      return f64 ? transpose_three_pass<double>(static_cast<double*>(out), p.rows,
                                                                p.cols, *plan, s)
                                 : transpose_three_pass<float>(static_cast<float*>(out), p.rows,
                                                               p.cols, *plan, s);
                    }};
  v.in_place = true;
  return v;
}

/// The line the lab prints under the table: the route taken and the device memory used besides
/// the matrix, also in elements of the longer side.
inline std::string three_pass_note(const ThreePassPlan& plan, const course::Problem& p) {
  const char* route = plan.route == Route::blocks   ? "c x c blocks, then pieces (2 passes)"
                      : plan.route == Route::gcd1   ? "gcd 1, rows, columns, rows (3 passes)"
                      : plan.route == Route::lesson ? "the lesson's passes"
                                                    : "nothing to move";
  const double side = static_cast<double>(std::max(p.rows, p.cols) * course::elem_size(p.type));
  char line[240];
  std::snprintf(line, sizeof line,
                "note: three passes: %s, %u cycles, %.1f KB of scratch = %.2f x max(rows, cols) "
                "elements",
                route, plan.cycles, plan.bytes() / 1e3, plan.bytes() / side);
  return line;
}

}  // namespace step09_lab
