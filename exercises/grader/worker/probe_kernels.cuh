// The course's own kernels, built into the grader's probe instead of a submission: the probe
// times them exactly as a submission's are timed, so that the grader compares a submission with
// a known kernel on the same GPU, in the same run. Plain tiled kernels (steps 03 and 09).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace grader_probe {

cudaError_t transpose(const float* in, float* out, std::int64_t rows, std::int64_t cols);
cudaError_t transpose_inplace(float* data, std::int64_t n);

}  // namespace grader_probe
