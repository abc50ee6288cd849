// The kernels of step 05's lab: the lesson's 32x8 and 32x4 as controls, measured in the same run,
// then the diagonal block order and the load-store pairs.
#pragma once

#include <string>
#include <vector>

#include "experiments.cuh"
#include "harness.cuh"
#include "transpose.cuh"

namespace step05_lab {

template <int BLOCK_ROWS>
course::Variant lesson() {
  const std::string block = "32x" + std::to_string(BLOCK_ROWS);
  return {"lesson-" + block, "lesson " + block, block, "32x32",
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return step05::transpose<BLOCK_ROWS>(static_cast<const float*>(in),
                                                 static_cast<float*>(out), p.rows, p.cols, s);
          }};
}

template <int BLOCK_ROWS, BlockOrder ORDER, Loads LOADS>
course::Variant experiment(const std::string& id, const std::string& what) {
  const std::string block = "32x" + std::to_string(BLOCK_ROWS);
  return {id + "-" + block, what + " " + block, block, "32x32",
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose<BLOCK_ROWS, ORDER, LOADS>(static_cast<const float*>(in),
                                                       static_cast<float*>(out), p.rows, p.cols,
                                                       s);
          }};
}

inline std::vector<course::Variant> variants() {
  return {lesson<8>(),
          lesson<4>(),
          experiment<8, BlockOrder::diagonal, Loads::first>("diagonal", "diagonal order"),
          experiment<8, BlockOrder::rows, Loads::pairs>("pairs", "load-store pairs"),
          experiment<4, BlockOrder::rows, Loads::pairs>("pairs", "load-store pairs")};
}

}  // namespace step05_lab
