// Step 10 - device memory from ncclMemAlloc, what NCCL's windows are made of (every GPU's output
// block, in the harness): NCCL maps it on the other GPUs of the machine. Before NCCL 2.19, which
// has no ncclMemAlloc, plain cudaMalloc (nothing registers it as a window there). The buffer is
// common/'s DeviceBuffer; only where its memory comes from differs. And the RAII registration
// of such memory as a window, for window.cuh and the symmetric all-to-all.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>

#include "device_buffer.cuh"
#include "multi_transpose.cuh"  // NCCL_CHECK

namespace step10 {

#define STEP10_HAVE_MEM_ALLOC (NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0))
// NCCL's windows and its device API (ncclCommWindowRegister, ncclGetPeerPointer), which the
// direct placement and the symmetric all-to-all need, came with NCCL 2.28; older ones build the
// pipeline alone.
#define STEP10_HAVE_WINDOWS (NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0))

/// ncclMemAlloc and ncclMemFree, as common/'s DeviceBuffer takes an allocator.
struct NcclMemAlloc {
#if STEP10_HAVE_MEM_ALLOC
  static void allocate(void** ptr, std::size_t bytes) { NCCL_CHECK(ncclMemAlloc(ptr, bytes)); }
  static void release(void* ptr) { ncclMemFree(ptr); }  // no check: a destructor must not throw
#else
  static void allocate(void** ptr, std::size_t bytes) { CUDA_CHECK(cudaMalloc(ptr, bytes)); }
  static void release(void* ptr) { cudaFree(ptr); }
#endif
};

/// Device memory from ncclMemAlloc, freed on every path: what a window is made of.
using NcclBuffer = course::BasicDeviceBuffer<NcclMemAlloc>;

#if STEP10_HAVE_WINDOWS
/// @p bytes at @p ptr registered with NCCL as a window (ncclCommWindowRegister, a collective:
/// every GPU registers its own, in the same order), deregistered on every path.
class WindowRegistration {
 public:
  WindowRegistration(ncclComm_t comm, void* ptr, std::size_t bytes, int flags) : comm_(comm) {
    NCCL_CHECK(ncclCommWindowRegister(comm, ptr, bytes, &win_, flags));
  }
  ~WindowRegistration() {
    if (win_) ncclCommWindowDeregister(comm_, win_);  // no check: a destructor must not throw
  }
  WindowRegistration(const WindowRegistration&) = delete;
  WindowRegistration& operator=(const WindowRegistration&) = delete;
  ncclWindow_t get() const { return win_; }

 private:
  ncclComm_t comm_;
  ncclWindow_t win_ = nullptr;
};
#endif

}  // namespace step10
