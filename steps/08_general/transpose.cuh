// Step 08 - any shape, any element type, at the copy ceiling: the launcher a reader can drop into
// real code. What changed since step 07, whose launcher took floats whose rows start on 16
// bytes: transpose(in, out, rows, cols) takes device pointers of any element type of 1, 2, 4, 8
// or 16 bytes and any rows x cols, asks plan_transpose (plan.hpp) which kernel fits, and
// launches it: transpose_vec.cuh (16-byte vectors, for 1-, 2- and 16-byte elements whose rows
// all start on 16 bytes), transpose_shift.cuh (16-byte vectors shifted into place: 1-byte
// elements on rows that start anywhere), transpose_scalar.cuh (one element per access: 2-, 4-
// and 8-byte elements on such rows, 4- and 8-byte ones on any), or a plain copy for 1 x N and
// N x 1. The last two kernels cut the writes on 32-byte sectors where output rows start off them.
//
//   make step08 && ./step08 --type bf16 --rows 8192 --cols 2048
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "plan.hpp"
#include "transpose_scalar.cuh"
#include "transpose_shift.cuh"
#include "transpose_vec.cuh"

namespace step08 {

/// Launches transpose_vec with TR x TC tiles. The caller has checked that every row starts on
/// 16 bytes; this checks only the grid.
template <int S, int TR, int TC>
cudaError_t launch_vec(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                       cudaStream_t stream) {
  const std::int64_t blocks = blocks_for(rows, cols, {TR, TC});
  if (blocks < 0) return cudaErrorInvalidValue;
  transpose_vec<S, TR, TC><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const std::uint8_t*>(in), static_cast<std::uint8_t*>(out), rows, cols,
      make_grid(rows, cols, TR, TC, S));
  return cudaGetLastError();
}

/// Launches transpose_shift with TR x TC tiles, stepping down by TR less the lead rows when the
/// output rows are @p cut on their sectors.
template <int S, int TR, int TC>
cudaError_t launch_shift(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                         bool cut, cudaStream_t stream) {
  using Tile = ShiftTile<S, TR, TC>;
  static_assert(Tile::kLead == shift_lead(S), "the plan counts the blocks with the same lead");
  const int lead = cut ? Tile::kLead : 0;
  const std::int64_t blocks = blocks_for(rows, cols, {TR - lead, TC});
  if (blocks < 0) return cudaErrorInvalidValue;
  const int phase = static_cast<int>(reinterpret_cast<std::uintptr_t>(out) / S % Tile::kSector);
  transpose_shift<S, TR, TC><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<const std::uint8_t*>(in), static_cast<std::uint8_t*>(out), rows, cols,
      make_grid(rows, cols, TR - lead, TC, S), lead, phase);
  return cudaGetLastError();
}

/// Launches transpose_scalar with T x T tiles on @p grid, cutting output rows on their sectors
/// when @p cut. (The lab's step08_patterns runs it on tile orders of other group heights.)
template <int S, int T>
cudaError_t launch_scalar_on(const TileGrid& grid, const void* in, void* out, std::int64_t rows,
                             std::int64_t cols, bool cut, cudaStream_t stream) {
  const auto* src = static_cast<const std::uint8_t*>(in);
  auto* dst = static_cast<std::uint8_t*>(out);
  const auto blocks = static_cast<unsigned>(grid.tiles());
  if (cut) {
    transpose_scalar<S, T, true><<<blocks, kThreads, 0, stream>>>(
        src, dst, rows, cols, grid, ScalarTile<S, T, true>::phase_of(out));
  } else {
    transpose_scalar<S, T, false><<<blocks, kThreads, 0, stream>>>(
        src, dst, rows, cols, grid, ScalarTile<S, T, false>::phase_of(out));
  }
  return cudaGetLastError();
}
/// The same on the launcher's grid (make_grid).
template <int S, int T>
cudaError_t launch_scalar(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                          bool cut, cudaStream_t stream) {
  if (blocks_for(rows, cols, {T, T}) < 0) return cudaErrorInvalidValue;
  return launch_scalar_on<S, T>(make_grid(rows, cols, T, T, S), in, out, rows, cols, cut,
                                stream);
}

/// Runs @p plan for S-byte elements (the plan came from plan_transpose for these arguments).
template <int S>
cudaError_t run_plan(const Plan& plan, const void* in, void* out, std::int64_t rows,
                     std::int64_t cols, cudaStream_t stream) {
  constexpr TileSize vt = vector_tile(S);
  switch (plan.path) {
    case Path::copy:
      return cudaMemcpyAsync(out, in, static_cast<std::size_t>(rows * cols) * S,
                             cudaMemcpyDeviceToDevice, stream);
    case Path::vector:
      return launch_vec<S, vt.rows, vt.cols>(in, out, rows, cols, stream);
    case Path::shifted:
      if constexpr (S == 1) {  // the plan takes them for bytes only
        constexpr TileSize st = shift_tile(S);
        return launch_shift<S, st.rows, st.cols>(in, out, rows, cols, plan.cut, stream);
      }
      return cudaErrorInvalidValue;
    case Path::scalar:
      return launch_scalar<S, scalar_tile(S)>(in, out, rows, cols, plan.cut, stream);
  }
  return cudaErrorInvalidValue;
}

/// Transposes the rows x cols row-major matrix of @p elem_size-byte elements at device pointer
/// @p in into the cols x rows matrix at @p out (not in place), on @p stream.
/// Any rows, cols >= 1 and element sizes 1, 2, 4, 8, 16; pointers aligned to the element size.
/// Returns cudaErrorInvalidValue without launching when that does not hold (or the grid would
/// pass 2^31-1 blocks), otherwise the launch's status.
inline cudaError_t transpose(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                             std::size_t elem_size, cudaStream_t stream = nullptr) {
  Plan plan;
  if (!plan_transpose(elem_size, rows, cols, reinterpret_cast<std::uintptr_t>(in),
                      reinterpret_cast<std::uintptr_t>(out), &plan)) {
    return cudaErrorInvalidValue;
  }
  switch (elem_size) {
    case 1: return run_plan<1>(plan, in, out, rows, cols, stream);
    case 2: return run_plan<2>(plan, in, out, rows, cols, stream);
    case 4: return run_plan<4>(plan, in, out, rows, cols, stream);
    case 8: return run_plan<8>(plan, in, out, rows, cols, stream);
    default: return run_plan<16>(plan, in, out, rows, cols, stream);
  }
}

/// The typed form: any trivially copyable T of 1, 2, 4, 8 or 16 bytes (int8_t, __half,
/// __nv_bfloat16, float, double, float4, a 16-byte struct, ...).
template <typename T>
cudaError_t transpose(const T* in, T* out, std::int64_t rows, std::int64_t cols,
                      cudaStream_t stream = nullptr) {
  static_assert(valid_elem_size(sizeof(T)), "element size must be 1, 2, 4, 8 or 16 bytes");
  return transpose(static_cast<const void*>(in), static_cast<void*>(out), rows, cols, sizeof(T),
                   stream);
}

}  // namespace step08
