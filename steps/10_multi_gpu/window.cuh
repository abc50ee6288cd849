// Step 10 - the other GPUs' output blocks, addressed directly. Every GPU's output block lives in
// memory from ncclMemAlloc, registered with NCCL as a window (ncclCommWindowRegister, a
// collective); on one machine NCCL maps every GPU's window into every process, and
// ncclGetPeerPointer (NCCL's device API) says where GPU g's is. With those addresses a copy
// engine, or a kernel, writes each transposed piece straight to its final place on its owner:
// no receive buffer and no pass on the receiving side. Across machines the windows cannot be
// mapped (NCCL's load/store team is smaller than G) and the methods that need them refuse.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>

#include <string>
#include <vector>

#include "device_buffer.cuh"
#include "multi_harness.hpp"

namespace step10 {

/// Device memory from ncclMemAlloc, freed on every path: what a window is made of (every GPU's
/// output block, in the harness).
class NcclBuffer {
 public:
  explicit NcclBuffer(std::size_t bytes) : bytes_(bytes) { NCCL_CHECK(ncclMemAlloc(&ptr_, bytes ? bytes : 1)); }
  ~NcclBuffer() {
    if (ptr_) ncclMemFree(ptr_);  // no check: a destructor must not throw
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

/// Where GPU g's window starts in this process, for every g (device code: NCCL's device API).
/// static: each source file that includes this header compiles its own copy.
static __global__ void window_bases(ncclWindow_t w, int gpus, void** bases) {
  for (int g = threadIdx.x; g < gpus; g += blockDim.x) bases[g] = ncclGetPeerPointer(w, 0, g);
}

/// Every GPU's output block as this process sees it; deregistered when destroyed.
class Window {
 public:
  /// Registers the output allocations of all GPUs (every GPU must call this, in the same order).
  explicit Window(const Context& c) : comm_(c.comm) {
    NCCL_CHECK(ncclCommWindowRegister(c.comm, c.out_allocation, c.out_allocation_bytes, &win_,
                                      NCCL_WIN_COLL_SYMMETRIC));
    const int G = c.at.gpus;
    reachable_ = ncclTeamLsa(c.comm).nRanks == G;
    if (!reachable_) return;
    course::DeviceBuffer bases(G * sizeof(void*));
    window_bases<<<1, 32>>>(win_, G, bases.as<void*>());
    CUDA_CHECK(cudaGetLastError());
    std::vector<void*> host(G);
    CUDA_CHECK(cudaMemcpy(host.data(), bases.get(), bases.bytes(), cudaMemcpyDeviceToHost));
    for (void* b : host) outs_.push_back(static_cast<char*>(b) + c.out_offset);
    table_ = course::DeviceBuffer(G * sizeof(void*));
    CUDA_CHECK(cudaMemcpy(table_.get(), outs_.data(), table_.bytes(), cudaMemcpyHostToDevice));
  }
  ~Window() {
    if (win_) ncclCommWindowDeregister(comm_, win_);  // no check: a destructor must not throw
  }
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  /// "" or why the other GPUs' memory cannot be reached from here.
  std::string why_not(const Context& c) const {
    if (reachable_) return "";
    return "GPU " + std::to_string(c.me) + " reaches only " +
           std::to_string(ncclTeamLsa(c.comm).nRanks) + " of the " + std::to_string(c.at.gpus) +
           " GPUs by load and store (NCCL's LSA team): writing into their memory needs one machine";
  }
  /// GPU g's output block (its first element), in this process's addresses.
  char* out(int g) const { return outs_[g]; }
  /// Every GPU's, as a device array of G pointers.
  void* const* table() const { return table_.as<void*>(); }

 private:
  ncclComm_t comm_;
  ncclWindow_t win_ = nullptr;
  bool reachable_ = false;
  std::vector<char*> outs_;
  course::DeviceBuffer table_;
};

}  // namespace step10
