// The kernels of step 07 as the harness and the tests see them: the one kernel of the lesson with
// 512, 256 and 128 threads per tile, i.e. 32, 64 and 128 bytes of loads in flight per thread.
// What else was tried (other tile orders, layouts, cache hints) is in lab/.
#pragma once

#include <string>
#include <vector>

#include "harness.cuh"
#include "transpose.cuh"

namespace step07 {

// "512 threads x 2 float4", block 512, tile 64x64.
template <int THREADS>
course::Variant tile64() {
  return {std::to_string(THREADS) + "-threads",
          std::to_string(THREADS) + " threads x " + std::to_string(kVectors / THREADS) + " float4",
          std::to_string(THREADS), "64x64",
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose<THREADS>(static_cast<const float*>(in), static_cast<float*>(out),
                                      p.rows, p.cols, s);
          }};
}

inline std::vector<course::Variant> variants() {
  return {tile64<512>(), tile64<256>(), tile64<128>()};
}

}  // namespace step07
