// The kernels of step 06's lab: the lesson's float4 kernel as the control, then the transposes
// with no shared memory, one and two lanes per output column.
#pragma once

#include <string>
#include <vector>

#include "harness.cuh"
#include "registers.cuh"
#include "transpose.cuh"

namespace step06_lab {

template <int LANES>
course::Variant registers_only() {
  return {"registers-" + std::to_string(LANES) + (LANES == 1 ? "lane" : "lanes"),
          "registers only, " + std::to_string(LANES) + (LANES == 1 ? " lane" : " lanes") +
              " per column",
          "256", "-", [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose_no_smem<LANES>(static_cast<const float*>(in),
                                            static_cast<float*>(out), p.rows, p.cols, s);
          }};
}

inline std::vector<course::Variant> variants() {
  return {{"lesson", "lesson: float4, 4 rows/thread, swizzled", "8x8", "32x32",
           [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
             return step06::transpose<4, 4, step06::Layout::swizzled>(
                 static_cast<const float*>(in), static_cast<float*>(out), p.rows, p.cols, s);
           }},
          registers_only<1>(), registers_only<2>()};
}

}  // namespace step06_lab
