// The kernels of step 05 as the harness and the tests see them: the BLOCK_ROWS study (32, 16, 8,
// 4 rows of threads for one 32x32 tile), then the 32x8 kernel again in the diagonal block order.
#pragma once

#include <string>
#include <vector>

#include "harness.cuh"
#include "transpose.cuh"

namespace step05 {

template <int BLOCK_ROWS, BlockOrder ORDER>
course::Variant variant(const std::string& suffix = "") {
  const std::string block = "32x" + std::to_string(BLOCK_ROWS);
  return {"coarsened " + block + suffix, block, "32x32",
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose<BLOCK_ROWS, ORDER>(static_cast<const float*>(in),
                                                static_cast<float*>(out), p.rows, p.cols, s);
          }};
}

inline std::vector<course::Variant> variants() {
  return {variant<32, BlockOrder::rows>(), variant<16, BlockOrder::rows>(),
          variant<8, BlockOrder::rows>(), variant<4, BlockOrder::rows>(),
          variant<8, BlockOrder::diagonal>(", diagonal order")};
}

}  // namespace step05
