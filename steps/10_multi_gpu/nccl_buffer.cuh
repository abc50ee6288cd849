// Step 10 - device memory from ncclMemAlloc, what NCCL's windows are made of (every GPU's output
// block, in the harness): NCCL maps it on the other GPUs of the machine. Before NCCL 2.19, which
// has no ncclMemAlloc, plain cudaMalloc (nothing registers it as a window there).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>

#include "multi_transpose.cuh"  // NCCL_CHECK

namespace step10 {

#define STEP10_HAVE_MEM_ALLOC (NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0))
// NCCL's windows and its device API (ncclCommWindowRegister, ncclGetPeerPointer), which the
// direct placement and the symmetric all-to-all need, came with NCCL 2.28; older ones build the
// pipeline alone.
#define STEP10_HAVE_WINDOWS (NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0))

/// Device memory from ncclMemAlloc, freed on every path: what a window is made of (every GPU's
/// output block, in the harness).
class NcclBuffer {
 public:
  explicit NcclBuffer(std::size_t bytes) : bytes_(bytes) {
#if STEP10_HAVE_MEM_ALLOC
    NCCL_CHECK(ncclMemAlloc(&ptr_, bytes ? bytes : 1));
#else
    CUDA_CHECK(cudaMalloc(&ptr_, bytes ? bytes : 1));
#endif
  }
  ~NcclBuffer() {  // no check: a destructor must not throw
#if STEP10_HAVE_MEM_ALLOC
    if (ptr_) ncclMemFree(ptr_);
#else
    if (ptr_) cudaFree(ptr_);
#endif
  }
  NcclBuffer(const NcclBuffer&) = delete;
  NcclBuffer& operator=(const NcclBuffer&) = delete;
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

}  // namespace step10
