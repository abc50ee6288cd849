// Step 10 - the two local passes' building blocks, compiled once for every binary of the step:
// step 08's launcher (every element size's kernels) and a copy between buffers of different
// pitches.
#include "multi_transpose.cuh"
#include "transpose.cuh"  // steps/08_general

namespace step10 {

cudaError_t local_transpose(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                            std::size_t elem, cudaStream_t stream) {
  switch (elem) {
    case 1: return step08::transpose_elements<1>(in, out, rows, cols, stream);
    case 2: return step08::transpose_elements<2>(in, out, rows, cols, stream);
    case 4: return step08::transpose_elements<4>(in, out, rows, cols, stream);
    case 8: return step08::transpose_elements<8>(in, out, rows, cols, stream);
    case 16: return step08::transpose_elements<16>(in, out, rows, cols, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t copy_band(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                      std::size_t width, std::size_t height, cudaStream_t stream) {
  // cudaMemcpy2D takes pitches up to cudaDevAttrMaxPitch (2^31 - 1 bytes). Longer rows are few,
  // since the block fits in memory: one copy per row.
  int device = 0, max_pitch = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, device);
  if (e != cudaSuccess) return e;
  const auto limit = static_cast<std::size_t>(max_pitch);
  if (dst_pitch <= limit && src_pitch <= limit) {
    return cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, height,
                             cudaMemcpyDeviceToDevice, stream);
  }
  for (std::size_t r = 0; r < height; ++r) {
    e = cudaMemcpyAsync(static_cast<char*>(dst) + r * dst_pitch,
                        static_cast<const char*>(src) + r * src_pitch, width,
                        cudaMemcpyDeviceToDevice, stream);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace step10
