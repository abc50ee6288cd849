// Step 10 - a kernel that only waits: the harness staggers the GPUs with it before a verified
// run, and the tests' faults delay a pass with it, so that a missing wait shows every time
// instead of once in a while.
#pragma once

#include <cuda_runtime.h>

namespace step10 {

/// Waits @p ns nanoseconds of the GPU's global timer (one thread; nothing else to do).
/// static: each source file that includes this header compiles its own copy.
static __global__ void stall_kernel(unsigned long long ns) {
  unsigned long long t0 = 0, t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(10000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

inline cudaError_t stall(double ms, cudaStream_t s) {
  if (ms <= 0) return cudaSuccess;
  stall_kernel<<<1, 1, 0, s>>>(static_cast<unsigned long long>(ms * 1e6));
  return cudaGetLastError();
}

}  // namespace step10
