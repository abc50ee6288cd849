// The kernels of step 06 as the harness and the tests see them: the sweep of vector width x rows
// per thread on the swizzled tile, and the padded tile for comparison.
#pragma once

#include <string>
#include <vector>

#include "harness.cuh"
#include "transpose.cuh"

namespace step06 {

// "float4, 4 rows/thread, swizzled", block 8x8, tile 32x32.
template <int VEC, int RPT, Layout L>
course::Variant tiled() {
  const std::string vec = VEC == 1 ? "float" : "float" + std::to_string(VEC);
  const std::string name = vec + ", " + std::to_string(RPT) + (RPT == 1 ? " row" : " rows") +
                           "/thread, " + (L == Layout::padded ? "padded" : "swizzled");
  const std::string block = std::to_string(kTile / VEC) + "x" + std::to_string(kTile / RPT);
  const std::string id = vec + "-" + std::to_string(RPT) + (RPT == 1 ? "row" : "rows") +
                         (L == Layout::padded ? "-padded" : "");
  return {id, name, block, "32x32",
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose<VEC, RPT, L>(static_cast<const float*>(in), static_cast<float*>(out),
                                          p.rows, p.cols, s);
          }};
}

inline std::vector<course::Variant> variants() {
  return {
      // Step 05's kernel (one float per access, 32x8 threads) written with this step's template.
      tiled<1, 4, Layout::swizzled>(),
      // The sweep: vector width x rows per thread.
      tiled<2, 1, Layout::swizzled>(),
      tiled<2, 2, Layout::swizzled>(),
      tiled<2, 4, Layout::swizzled>(),
      tiled<2, 8, Layout::swizzled>(),
      tiled<4, 1, Layout::swizzled>(),
      tiled<4, 2, Layout::swizzled>(),
      tiled<4, 4, Layout::swizzled>(),
      tiled<4, 8, Layout::swizzled>(),
      // Padding by one vector keeps rows aligned for vector stores, but not the column reads
      // conflict-free: 2-way for float2, 4-way for float4.
      tiled<2, 4, Layout::padded>(),
      tiled<4, 4, Layout::padded>(),
  };
}

}  // namespace step06
