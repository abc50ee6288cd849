// Step 10 - the other GPUs' output blocks, addressed directly. Every GPU's output block lives in
// memory from ncclMemAlloc, registered with NCCL as a window (ncclCommWindowRegister, a
// collective); on one machine NCCL maps every GPU's window into every process, and
// ncclGetPeerPointer (NCCL's device API) says where GPU g's is. With those addresses a copy
// engine, or a kernel, writes each transposed piece straight to its final place on its owner:
// no receive buffer and no pass on the receiving side. Where the windows cannot be mapped
// (across machines, no peer access, NCCL's symmetric memory off) the methods that need them
// refuse, in one line (reach.hpp), before any pointer is read.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>

#include <string>
#include <vector>

#include "device_buffer.cuh"
#include "nccl_buffer.cuh"
#include "multi_harness.hpp"
#include "reach.hpp"

namespace step10 {

/// Where GPU g's window starts in this process, for every g (device code: NCCL's device API).
/// static: each source file that includes this header compiles its own copy.
static __global__ void window_bases(ncclWindow_t w, int gpus, void** bases) {
  for (int g = threadIdx.x; g < gpus; g += blockDim.x) bases[g] = ncclGetPeerPointer(w, 0, g);
}

/// Whether @p w is a window NCCL mapped on every GPU of its team. In NCCL 2.28 such a window is
/// device memory; without symmetric memory ncclCommWindowRegister still succeeds, handing back
/// its local registration (a host object) or nothing (NCCL_LOCAL_REGISTER=0).
inline bool mapped_window(ncclWindow_t w) {
  cudaPointerAttributes a{};
  const bool device = w && cudaPointerGetAttributes(&a, w) == cudaSuccess && a.type == cudaMemoryTypeDevice;
  cudaGetLastError();  // a host pointer is an answer here, not an error to keep
  return device;
}

/// Every GPU's output block as this process sees it; deregistered when destroyed.
class Window {
 public:
  /// Registers the output allocations of all GPUs (every GPU must call this, in the same order).
  /// Peer pointers need no flag: NCCL_WIN_COLL_SYMMETRIC is for NCCL's own symmetric kernels.
  explicit Window(const Context& c)
      : win_(c.comm, c.out_allocation, c.out_allocation_bytes, NCCL_WIN_DEFAULT) {
    const int G = c.at.gpus;
    ReachFacts f;
    f.me = c.me;
    f.gpus = G;
    f.window = win_.get() != nullptr;
    f.window_mapped = mapped_window(win_.get());
    f.lsa = ncclTeamLsa(c.comm).nRanks;
    int mine = 0;
    CUDA_CHECK(cudaGetDevice(&mine));
    for (int g = 0; g < G; ++g) {
      int can = 1;
      if (g != c.me && c.devices[g] >= 0) CUDA_CHECK(cudaDeviceCanAccessPeer(&can, mine, c.devices[g]));
      f.peer_access.push_back(g == c.me ? 1 : c.devices[g] < 0 ? -1 : can);
    }
    why_not_ = why_unreachable(f);
    if (!why_not_.empty()) return;
    course::DeviceBuffer bases(G * sizeof(void*));
    window_bases<<<1, 32>>>(win_.get(), G, bases.as<void*>());
    CUDA_CHECK(cudaGetLastError());
    std::vector<void*> host(G);
    CUDA_CHECK(cudaMemcpy(host.data(), bases.get(), bases.bytes(), cudaMemcpyDeviceToHost));
    for (void* b : host) outs_.push_back(static_cast<char*>(b) + c.out_offset);
    table_ = course::DeviceBuffer(G * sizeof(void*));
    CUDA_CHECK(cudaMemcpy(table_.get(), outs_.data(), table_.bytes(), cudaMemcpyHostToDevice));
  }

  /// "" or why the other GPUs' memory cannot be reached from here (reach.hpp).
  const std::string& why_not() const { return why_not_; }
  /// GPU g's output block (its first element), in this process's addresses.
  char* out(int g) const { return outs_[g]; }
  /// Every GPU's, as a device array of G pointers.
  void* const* table() const { return table_.as<void*>(); }

 private:
  WindowRegistration win_;
  std::string why_not_;
  std::vector<char*> outs_;
  course::DeviceBuffer table_;
};

}  // namespace step10
