// Another program on the GPU, for the grader's acceptance check (gpu_acceptance.sh): it holds
// GIB gibibytes of device memory and keeps the GPU busy copying them for SECONDS, so that a
// grading beside it (on the same GPU or another) shows whether the grader measures its own runs
// only. Prints its pid and device, then "busy" once the memory is held.
//
//   nvcc -O2 -o gpu_load exercises/grader/gpu_load.cu
//   CUDA_VISIBLE_DEVICES=1 ./gpu_load GIB SECONDS
#include <cuda_runtime.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void churn(float* __restrict__ a, size_t n, float k) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    a[i] = a[i] * k + 1.0f;
  }
}

int main(int argc, char** argv) {
  const double gib = argc > 1 ? std::atof(argv[1]) : 4.0;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 60.0;
  const size_t n = static_cast<size_t>(gib * (1 << 30)) / sizeof(float);
  float* a = nullptr;
  if (cudaMalloc(&a, n * sizeof(float)) != cudaSuccess || cudaMemset(a, 0, n * sizeof(float))) {
    std::fprintf(stderr, "gpu_load: cannot hold %.1f GiB\n", gib);
    return 3;
  }
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  std::printf("gpu_load: pid %d on %s, %.1f GiB held, busy for %.0f s\n", getpid(), p.name, gib,
              seconds);
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         seconds) {
    churn<<<p.multiProcessorCount * 4, 256>>>(a, n, 0.5f);
    if (cudaDeviceSynchronize() != cudaSuccess) return 3;
  }
  cudaFree(a);
  return 0;
}
