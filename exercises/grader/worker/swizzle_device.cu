// Exercise 2's swizzle evaluated on the device, in a kernel of the grader's, from the learner's
// swizzle.cuh: the judge compares these values with swizzle_on_host's (what the CPU tests check).
// A swizzle with a device-only branch (#ifdef __CUDA_ARCH__) answers differently here.
#include <cuda_runtime.h>

#include "ex02.cuh"
#include "swizzle.cuh"

namespace grader_worker {

namespace {

__global__ void evaluate(int* values) {
  const int row = threadIdx.y, col = threadIdx.x;
  values[row * ex02::kTile + col] = ex02::swizzle(row, col);
}

}  // namespace

cudaError_t swizzle_on_device(int* host_values) {
  int* d = nullptr;
  cudaError_t s = cudaMalloc(&d, 1024 * sizeof(int));
  if (s != cudaSuccess) return s;
  evaluate<<<1, dim3(32, 32)>>>(d);
  s = cudaGetLastError();
  if (s == cudaSuccess) s = cudaDeviceSynchronize();
  if (s == cudaSuccess) s = cudaMemcpy(host_values, d, 1024 * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  return s;
}

}  // namespace grader_worker
