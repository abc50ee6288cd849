// Step 10's lab - a copy kernel as the mover of the direct pipeline (direct.cuh's MovePiece):
// the pieces cross by SM stores instead of the copy engines.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace step10 {

/// Copies `height` rows of `width` bytes between pitched buffers, either of them another GPU's:
/// 16-byte words where every address, pitch and the width allow, else single bytes.
__global__ void copy_rows(char* __restrict__ dst, std::size_t dst_pitch,
                          const char* __restrict__ src, std::size_t src_pitch, std::size_t width,
                          std::size_t height) {
  const bool wide =
      ((reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src) | dst_pitch |
        src_pitch | width) & 15) == 0;
  const std::size_t n = wide ? width / 16 : width;
  const std::size_t step = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t r = blockIdx.y; r < height; r += gridDim.y) {
    char* d = dst + r * dst_pitch;
    const char* s = src + r * src_pitch;
    for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += step) {
      if (wide) {
        reinterpret_cast<uint4*>(d)[i] = reinterpret_cast<const uint4*>(s)[i];
      } else {
        d[i] = s[i];
      }
    }
  }
}

inline cudaError_t by_copy_kernel(void* dst, std::size_t dst_pitch, const void* src,
                                  std::size_t width, std::size_t height, cudaStream_t stream) {
  const std::size_t src_pitch = width;
  if (width == 0 || height == 0) return cudaSuccess;
  const std::size_t words = (width + 15) / 16;
  const unsigned x = static_cast<unsigned>(std::min<std::size_t>((words + 255) / 256, 64));
  const unsigned y = static_cast<unsigned>(std::min<std::size_t>(height, std::max(1u, 1024u / x)));
  copy_rows<<<dim3(x, y), 256, 0, stream>>>(static_cast<char*>(dst), dst_pitch,
                                             static_cast<const char*>(src), src_pitch, width, height);
  return cudaGetLastError();
}

}  // namespace step10
