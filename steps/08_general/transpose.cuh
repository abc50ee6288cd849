// Step 08, part 4 - the launcher: one call for any element type and any shape. plan_transpose
// picks a kernel of parts 1-3 by the element size, where rows start and the GPU (host code that
// the CPU tests check rule by rule); transpose_elements launches it. Step 07's launcher took
// floats on rows that start on 16 bytes only.
//   make step08 && ./step08 --type i8 --rows 4095 --cols 4097    (the `auto` row names the path)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "transpose_scalar.cuh"
#include "transpose_shift.cuh"  // and transpose_vec.cuh

namespace step08 {

/// Each kernel's tile per element size (the lab times other shapes): 256 bytes a side where the
/// shared memory allows, 128 bytes for bytes in vectors; the scalar tile square, the shifted one
/// 32 KB.
constexpr int scalar_tile(std::size_t size) { return size <= 2 ? 128 : size <= 8 ? 64 : 32; }
constexpr TileSize vector_tile(std::size_t size) {
  return size <= 2 ? TileSize{128, 128} : TileSize{int(256 / size), int(256 / size)};
}
constexpr TileSize shift_tile(std::size_t size) {
  return size == 1 ? TileSize{256, 128} : TileSize{128, 128};
}

enum class Path { copy, vector, shifted, scalar };

struct Plan {
  Path path = Path::copy;
  bool cut = false;    ///< scalar, shifted: each output row cut on its own 32-byte sectors
  int min_blocks = 0;  ///< shifted: the blocks per SM its launch bounds ask for (0: none)
};

/// The GPUs whose measured rules differ: the H100's are the default for every other GPU.
enum class Gpu { h100, h200 };
inline Gpu gpu_named(const char* name) { return std::strstr(name, "H200") ? Gpu::h200 : Gpu::h100; }

/// The GPU of the calling thread, read once per device (reading its properties takes long).
inline Gpu current_gpu() {
  static std::atomic<int> known[64];  // per device: 0 not read yet, else 1 + its Gpu
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) {
    (void)cudaGetLastError();  // no device: the default rules, and no error left behind
    return Gpu::h100;
  }
  if (known[device] == 0) {
    cudaDeviceProp prop;
    known[device] = 1 + int(cudaGetDeviceProperties(&prop, device) == cudaSuccess
                                ? gpu_named(prop.name) : Gpu::h100);
  }
  return static_cast<Gpu>(known[device] - 1);
}

/// A matrix some kernel can take: 1, 2, 4, 8 or 16-byte elements, rows, cols >= 1, a size in
/// bytes that fits 64 bits, and pointers aligned to the element size.
inline bool valid_problem(std::size_t size, std::int64_t rows, std::int64_t cols,
                          std::uintptr_t in, std::uintptr_t out) {
  const auto s = static_cast<std::int64_t>(size);
  if ((s != 1 && s != 2 && s != 4 && s != 8 && s != 16) || rows < 1 || cols < 1) return false;
  return rows <= std::numeric_limits<std::int64_t>::max() / cols / s && in % s == 0 && out % s == 0;
}

/// The kernel for rows x cols elements of @p size bytes at device addresses @p in, @p out on
/// @p gpu; false when no kernel can take them.
inline bool plan_transpose(std::size_t size, std::int64_t rows, std::int64_t cols,
                           std::uintptr_t in, std::uintptr_t out, Plan* plan,
                           Gpu gpu = Gpu::h100) {
  if (!valid_problem(size, rows, cols, in, out)) return false;
  const bool aligned = rows_start_on(16, size, cols, in) && rows_start_on(16, size, rows, out);
  Plan p;
  if (rows == 1 || cols == 1) {
    p.path = Path::copy;  // the transposed matrix has the same bytes
  } else if (aligned && size != 4 && size != 8) {
    p.path = Path::vector;  // 4 and 8 bytes: a warp's access is whole sectors without vectors
  } else {
    // Halves: the scalar kernel measured ahead on the H100, the shifted vectors on the H200
    const bool shifted = size == 1 || (size == 2 && gpu == Gpu::h200);
    p.path = shifted ? Path::shifted : Path::scalar;
    p.cut = !rows_start_on(32, size, rows, out);
    // Three blocks per SM for bytes: ahead on the H200, level on the H100 (LAUNCHER.md)
    if (size == 1 && gpu == Gpu::h200) p.min_blocks = 3;
  }
  *plan = p;
  return true;
}

/// Transposes the rows x cols matrix of S-byte elements at @p in into @p out (cols x rows, not in
/// place) on @p stream. cudaErrorInvalidValue, launching nothing, when no kernel can.
template <int S>
cudaError_t transpose_elements(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                               cudaStream_t stream = nullptr) {
  Plan p;
  if (!plan_transpose(S, rows, cols, reinterpret_cast<std::uintptr_t>(in),
                      reinterpret_cast<std::uintptr_t>(out), &p, current_gpu())) {
    return cudaErrorInvalidValue;
  }
  switch (p.path) {
    case Path::copy:
      return cudaMemcpyAsync(out, in, static_cast<std::size_t>(rows * cols) * S,
                             cudaMemcpyDeviceToDevice, stream);
    case Path::vector: {
      constexpr TileSize t = vector_tile(S);
      return launch_vec<S, t.rows, t.cols>(in, out, rows, cols, stream);
    }
    case Path::shifted:
      if constexpr (S <= 2) {  // the plan takes them for bytes and halves only
        constexpr TileSize t = shift_tile(S);
        if constexpr (S == 1) {  // three blocks per SM for bytes on some GPUs
          if (p.min_blocks == 3)
            return launch_shift<S, t.rows, t.cols, 3>(in, out, rows, cols, p.cut, stream);
        }
        return launch_shift<S, t.rows, t.cols>(in, out, rows, cols, p.cut, stream);
      }
      return cudaErrorInvalidValue;
    case Path::scalar: return launch_scalar<S, scalar_tile(S)>(in, out, rows, cols, p.cut, stream);
  }
  return cudaErrorInvalidValue;
}

/// What a reader calls: any trivially copyable T of 1, 2, 4, 8 or 16 bytes (int8_t, __half,
/// __nv_bfloat16, float, double, float4, a 16-byte struct, ...).
template <typename T>
cudaError_t transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream = nullptr) {
  constexpr std::size_t S = sizeof(T);
  static_assert(S == 1 || S == 2 || S == 4 || S == 8 || S == 16, "elements of 1 to 16 bytes");
  return transpose_elements<S>(in, out, rows, cols, stream);
}

}  // namespace step08
