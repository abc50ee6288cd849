// Step 06 - vectorized global access. Step 05 moved one float per load and per store; here each
// thread loads VEC consecutive floats of an input row with one 8- or 16-byte load (float2,
// float4) and, after the tile, stores VEC consecutive floats of an output row with one vector
// store. RPT (rows per thread) vectors per thread are loaded before any is stored, so
// VEC x RPT x 4 bytes per thread are in flight at once. The tile is still 32 x 32; its layout
// in shared memory (layout.cuh) must now suit vectors.
//
//   make step06 && ./step06
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "layout.cuh"

namespace step06 {

// VEC floats that travel as one 4*VEC-byte access: float, float2 or float4. The type's
// alignment is what lets the compiler emit a single 64- or 128-bit load or store for it.
template <int VEC> struct Vector;
template <> struct Vector<1> { using type = float; };
template <> struct Vector<2> { using type = float2; };
template <> struct Vector<4> { using type = float4; };

// Row @p r of a row-major matrix with @p width floats per row, as an array of vectors. Indexing
// whole vectors off the row is also how the compiler keeps a store whole: a vector pointer made
// from `float* + offset` led it to split float4 stores into four 4-byte stores (check the
// SASS for STG.E.128).
template <typename Vec>
__device__ const Vec* vector_row(const float* matrix, std::int64_t r, std::int64_t width) {
  return reinterpret_cast<const Vec*>(matrix + r * width);
}
template <typename Vec>
__device__ Vec* vector_row(float* matrix, std::int64_t r, std::int64_t width) {
  return reinterpret_cast<Vec*>(matrix + r * width);
}

// Blocks of @p threads that fill an SM of 2048 threads, without passing 32 blocks per SM.
constexpr int blocks_per_sm(int threads) { return 2048 / threads < 32 ? 2048 / threads : 32; }

// One block per 32 x 32 tile; blockDim = (32 / VEC, 32 / RPT). Thread (tx, ty) owns vector
// slot tx of tile rows ty, ty + 32/RPT, ... when loading, and the same slot of output rows
// ty, ty + 32/RPT, ... when storing. A warp therefore covers VEC tile rows of 32 floats (128
// bytes each) on both sides.
//
// The launch bounds ask for registers few enough that a full SM of threads fits (2048 threads,
// at most 32 blocks): occupancy is what keeps enough loads in flight.
template <int VEC, int RPT, Layout L>
__global__ void __launch_bounds__((kTile / VEC) * (kTile / RPT),
                                  blocks_per_sm((kTile / VEC) * (kTile / RPT)))
    transpose_vectorized(const float* __restrict__ in, float* __restrict__ out, std::int64_t rows,
                         std::int64_t cols, bool vectors_ok) {
  constexpr int kStride = kTile / RPT;  // rows between one thread's vectors (blockDim.y)
  using Vec = typename Vector<VEC>::type;
  __shared__ alignas(16) float tile[kTile * kPitch<VEC, L>];

  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y;
  // How much of the tile lies inside the matrix (kTile, except for edge tiles).
  const int tile_rows = rows - r0 < kTile ? static_cast<int>(rows - r0) : kTile;
  const int tile_cols = cols - c0 < kTile ? static_cast<int>(cols - c0) : kTile;

  if (vectors_ok && tile_rows == kTile && tile_cols == kTile) {
    // Every load first: they do not depend on each other, so all RPT are in flight together.
    // Each row is seen as an array of vectors and indexed in whole vectors (see vector_row).
    Vec v[RPT];
#pragma unroll
    for (int k = 0; k < RPT; ++k) {
      v[k] = vector_row<Vec>(in, r0 + ty + k * kStride, cols)[c0 / VEC + tx];
    }
#pragma unroll
    for (int k = 0; k < RPT; ++k) {
      *reinterpret_cast<Vec*>(&tile[tile_index<VEC, L>(ty + k * kStride, tx * VEC)]) = v[k];
    }
    __syncthreads();
    // Output row c0 + c, columns r0 + tx*VEC ... + VEC-1: tile column c, VEC consecutive rows.
#pragma unroll
    for (int k = 0; k < RPT; ++k) {
      const int c = ty + k * kStride;
      Vec o;
      float* o_elems = reinterpret_cast<float*>(&o);  // j is known after unrolling: registers
#pragma unroll
      for (int j = 0; j < VEC; ++j) o_elems[j] = tile[tile_index<VEC, L>(tx * VEC + j, c)];
      vector_row<Vec>(out, c0 + c, rows)[r0 / VEC + tx] = o;
    }
  } else {
    // Edge path: a tile that sticks out of the matrix, or a matrix whose rows are not
    // 4*VEC-byte aligned. One float per access, consecutive threads on consecutive columns
    // (step 05's pattern), every access checked. The column read has VEC-way conflicts here;
    // only the edge tiles pay for them.
    constexpr int kThreads = (kTile / VEC) * kStride;
    const int t = ty * (kTile / VEC) + tx;
    const float* src = in + r0 * cols + c0;
    float* dst = out + c0 * rows + r0;
#pragma unroll 4
    for (int k = 0; k < VEC * RPT; ++k) {  // kThreads * VEC * RPT == kTile * kTile
      const int e = t + k * kThreads, r = e / kTile, c = e % kTile;
      if (r < tile_rows && c < tile_cols) tile[tile_index<VEC, L>(r, c)] = src[r * cols + c];
    }
    __syncthreads();
#pragma unroll 4
    for (int k = 0; k < VEC * RPT; ++k) {
      const int e = t + k * kThreads, c = e / kTile, r = e % kTile;  // output (c0 + c, r0 + r)
      if (r < tile_rows && c < tile_cols) dst[c * rows + r] = tile[tile_index<VEC, L>(r, c)];
    }
  }
}

// True when @p p may be accessed VEC floats at a time.
template <int VEC>
bool vector_aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % (4 * VEC) == 0;
}

// Transposes a rows x cols float matrix. Vector loads need every input row 4*VEC-byte aligned
// (cols % VEC == 0), vector stores every output row (rows % VEC == 0); when either fails, or a
// pointer is misaligned, every tile takes the scalar edge path: any shape is transposed
// correctly, only slower. Returns cudaErrorInvalidValue, without launching, for an empty matrix
// or a grid past CUDA's limits (more than 65535 tile rows: rows > 2,097,120).
template <int VEC, int RPT, Layout L>
cudaError_t transpose(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream = nullptr) {
  static_assert(VEC == 1 || VEC == 2 || VEC == 4, "a vector is 1, 2 or 4 floats");
  static_assert(RPT >= 1 && kTile % RPT == 0, "rows per thread must divide the tile");
  if (rows < 1 || cols < 1) return cudaErrorInvalidValue;
  const std::int64_t gx = (cols + kTile - 1) / kTile, gy = (rows + kTile - 1) / kTile;
  if (gx > 0x7FFFFFFF || gy > 65535) return cudaErrorInvalidValue;
  const bool vectors_ok = cols % VEC == 0 && rows % VEC == 0 && vector_aligned<VEC>(in) &&
                          vector_aligned<VEC>(out);
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
  const dim3 block(kTile / VEC, kTile / RPT);
  transpose_vectorized<VEC, RPT, L><<<grid, block, 0, stream>>>(in, out, rows, cols, vectors_ok);
  return cudaGetLastError();
}

}  // namespace step06
