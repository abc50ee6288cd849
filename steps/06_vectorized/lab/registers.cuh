// Step 06's lab - a transpose with no shared memory at all. Each thread reads 4 rows of one input
// column (4 scalar loads; the warp's 32 threads read neighbouring columns, so every load is
// coalesced) and writes them as one float4: 4 consecutive floats of one output row. Nothing is
// exchanged between threads, so there is no tile, no __syncthreads and no bank to conflict in.
// The price is on the store side: see LAB.md for where it lands and why.
//
//   make step06-lab && ./step06-lab --only registers
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace step06_lab {

// Where thread t of a 256-thread block works in its 32 x 32 piece of the input: one column and a
// group of 4 rows (rows 4 * group .. 4 * group + 3).
struct Place {
  int col, group;  // 0..31, 0..7
};

// 256 threads cover 32 columns x 32 rows: 8 groups of 4 rows per column. LANES threads of a warp
// share one output column: with 1, a warp's 32 float4 stores go to 32 output rows, 16 bytes in
// each 32-byte sector; with 2, the two lanes of a column (groups 2m and 2m + 1) write 32
// contiguous bytes together. Those are one whole sector only when every output row starts on a
// sector (rows % 8 == 0); with rows = 4 (mod 8), which the float4 path accepts, odd output rows
// start 16 bytes into a sector and their pairs straddle two sectors (lab.toml measures one).
template <int LANES>
__host__ __device__ constexpr Place place(int t) {
  const int lane = t % 32, warp = t / 32;
  return {lane / LANES + (32 / LANES) * (warp % LANES), lane % LANES + LANES * (warp / LANES)};
}

template <int LANES>
__global__ void __launch_bounds__(256)
    transpose_registers(const float* __restrict__ in, float* __restrict__ out, std::int64_t rows,
                        std::int64_t cols, bool vectors_ok) {
  const Place p = place<LANES>(threadIdx.x);
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * 32 + p.col;
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.y) * 32 + 4 * p.group;
  if (c >= cols || r >= rows) return;

  if (vectors_ok) {  // rows % 4 == 0, so all 4 rows r .. r+3 exist
    float4 o;
    o.x = in[(r + 0) * cols + c];
    o.y = in[(r + 1) * cols + c];
    o.z = in[(r + 2) * cols + c];
    o.w = in[(r + 3) * cols + c];
    // Index whole float4s off the output row: a float4 pointer made from `out + c*rows + r`
    // led the compiler to split the store into four 4-byte stores (check the SASS).
    reinterpret_cast<float4*>(out + c * rows)[r / 4] = o;
  } else {
    for (int j = 0; j < 4 && r + j < rows; ++j) out[c * rows + r + j] = in[(r + j) * cols + c];
  }
}

// Transposes a rows x cols float matrix without shared memory. The float4 store needs every
// output row 16-byte aligned (rows % 4 == 0 and an aligned @p out); otherwise each thread stores
// its 4 floats one by one. Returns cudaErrorInvalidValue, without launching, for an empty matrix
// or a grid past CUDA's limits (rows > 2,097,120).
template <int LANES>
cudaError_t transpose_no_smem(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                              cudaStream_t stream = nullptr) {
  static_assert(LANES == 1 || LANES == 2, "one or two threads per output column");
  if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
  const std::int64_t gx = (cols + 31) / 32, gy = (rows + 31) / 32;
  if (gx > 0x7FFFFFFF || gy > 65535) return cudaErrorInvalidValue;
  const bool vectors_ok = rows % 4 == 0 && reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
  transpose_registers<LANES><<<grid, 256, 0, stream>>>(in, out, rows, cols, vectors_ok);
  return cudaGetLastError();
}

}  // namespace step06_lab
