// The kernels of step 01 as the harness and the tests see them: two sides x four block shapes,
// the block-shape study of the published tutorials.
#pragma once

#include <string>
#include <vector>

#include "harness.cuh"
#include "transpose.cuh"

namespace step01 {

inline std::vector<course::Variant> variants() {
  std::vector<course::Variant> list;
  const dim3 blocks[] = {{32, 32}, {16, 16}, {32, 8}, {8, 32}};
  for (Coalesced side : {Coalesced::read, Coalesced::write}) {
    for (dim3 b : blocks) {
      const std::string shape = std::to_string(b.x) + "x" + std::to_string(b.y);
      list.push_back({std::string(side == Coalesced::read ? "read-" : "write-") + shape,
                      std::string(side == Coalesced::read ? "naive, coalesced read "
                                                          : "naive, coalesced write ") +
                          shape,
                      shape, "-",
                      [side, b](const course::Problem& p, const void* in, void* out,
                                cudaStream_t s) {
                        return transpose(static_cast<const float*>(in), static_cast<float*>(out),
                                         p.rows, p.cols, side, b, s);
                      }});
    }
  }
  return list;
}

}  // namespace step01
