/// @file check.cuh
/// @brief Always-on CUDA error checking.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "device_info.hpp"
#include "errors.hpp"

namespace course {

/// Throws CudaError when @p status is not cudaSuccess. Use through CUDA_CHECK.
inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) {
    const std::string hint = cuda_error_hint(status);  // no driver, no GPU, another architecture
    throw CudaError(std::string("CUDA error: ") + call + " failed at " + file + ":" +
                    std::to_string(line) + ": " + cudaGetErrorName(status) + " (" +
                    cudaGetErrorString(status) + ")" + (hint.empty() ? "" : ": " + hint));
  }
}

}  // namespace course

/// Checks a CUDA runtime call; on failure throws course::CudaError naming the call and place.
/// Always on, also in release builds: a transpose that silently failed to launch is the most
/// common way to "measure" an impossible bandwidth.
#define CUDA_CHECK(call) ::course::check_cuda((call), #call, __FILE__, __LINE__)
