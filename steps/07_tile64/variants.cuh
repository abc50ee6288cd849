// The kernels of step 07 as the harness and the tests see them. Each row changes one thing
// against the first 256-thread kernel: the threads per tile (so the float4s per thread), the
// shared-memory layout, the order of the tiles, the cache hint.
#pragma once

#include <string>
#include <vector>

#include "harness.cuh"
#include "transpose.cuh"

namespace step07 {

template <int THREADS, Smem S, int BAND = 1, bool STREAM = false, int CHUNK = 1>
course::Variant tile64(const std::string& what) {
  const std::string name = "tile64, " + std::to_string(THREADS) + " thr x " +
                           std::to_string(kVectors / THREADS) + " float4, " + what;
  return {name, std::to_string(THREADS), "64x64",
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose<THREADS, S, BAND, STREAM, CHUNK>(static_cast<const float*>(in),
                                                       static_cast<float*>(out), p.rows, p.cols,
                                                       s);
          }};
}

inline std::vector<course::Variant> variants() {
  return {
      // Bytes in flight per thread: 32, 64, 128 (see the lesson's Little's law table).
      tile64<512, Smem::swizzled>("swizzled"),
      tile64<256, Smem::swizzled>("swizzled"),
      tile64<128, Smem::swizzled>("swizzled"),
      // Padding instead of the swizzle: also conflict-free, but 4 shared stores per float4.
      tile64<256, Smem::padded>("padded"),
      // Tiles walked in bands of 8 tile rows: longer runs of output written together.
      tile64<256, Smem::swizzled, 8>("bands of 8"),
      // Tiles walked in squares of 8 x 8 and 16 x 16 tiles: few pages of memory per wave.
      tile64<256, Smem::swizzled, 8, false, 8>("squares of 8x8"),
      tile64<256, Smem::swizzled, 16, false, 16>("squares of 16x16"),
      tile64<512, Smem::swizzled, 16, false, 16>("squares of 16x16"),
      // Streaming (evict-first) loads and stores.
      tile64<256, Smem::swizzled, 1, true>("streaming"),
      // Tiles walked down the columns of tiles (column-major block order).
      tile64<256, Smem::swizzled, 0>("down the columns"),
      tile64<512, Smem::swizzled, 0>("down the columns"),
      // The tile turned in registers, 4 x 4 floats at a time: whole float4s in shared memory.
      tile64<256, Smem::quads>("quads"),
      tile64<256, Smem::quads, 0>("quads, down the columns"),
  };
}

}  // namespace step07
