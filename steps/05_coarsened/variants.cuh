// The kernels of step 05 as the harness and the tests see them: the BLOCK_ROWS study, 32, 16, 8
// and 4 rows of threads for one 32x32 tile (1, 2, 4 and 8 tile rows per thread).
#pragma once

#include <string>
#include <vector>

#include "harness.cuh"
#include "transpose.cuh"

namespace step05 {

template <int BLOCK_ROWS>
course::Variant variant() {
  const std::string block = "32x" + std::to_string(BLOCK_ROWS);
  return {"block-" + block, "coarsened " + block, block, "32x32",
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose<BLOCK_ROWS>(static_cast<const float*>(in), static_cast<float*>(out),
                                         p.rows, p.cols, s);
          }};
}

inline std::vector<course::Variant> variants() {
  return {variant<32>(), variant<16>(), variant<8>(), variant<4>()};
}

}  // namespace step05
