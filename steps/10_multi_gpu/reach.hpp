// Step 10 - whether this process may write into the other GPUs' memory through NCCL's window,
// decided from facts it gathers first (window.cuh), so that a method refuses in one line instead
// of writing through a bad pointer. Host code, checked rule by rule by the CPU tests.
#pragma once

#include <string>
#include <vector>

namespace step10 {

/// What the window and CUDA say, on one GPU.
struct ReachFacts {
  int me = 0, gpus = 1;
  /// NCCL handed back a window (ncclCommWindowRegister succeeds with none where registration
  /// is off: NCCL_LOCAL_REGISTER=0 and no symmetric memory).
  bool window = false;
  /// ... and it is one NCCL mapped on every GPU: such a window lives in device memory. Without
  /// symmetric memory (NCCL_WIN_ENABLE=0, NCCL_CUMEM_ENABLE=0, GPUs without P2P) NCCL 2.28 hands
  /// back its local registration, a host object, which the device API must not read.
  bool window_mapped = false;
  int lsa = 0;  ///< GPUs reachable by load and store (NCCL's LSA team)
  /// For every GPU: 1 where this GPU can map its memory (cudaDeviceCanAccessPeer; 1 for itself),
  /// 0 where it cannot, -1 where that GPU is not visible to this process.
  std::vector<int> peer_access;
};

/// "" where every other GPU's window may be written from here; else why not, one line.
inline std::string why_unreachable(const ReachFacts& f) {
  const std::string gpu = "GPU " + std::to_string(f.me);
  if (!f.window) {
    return gpu + ": NCCL registered no window (NCCL_LOCAL_REGISTER=0 and no symmetric memory): "
                 "the other GPUs' memory cannot be addressed";
  }
  if (!f.window_mapped) {
    return gpu + ": NCCL's window is not mapped on the other GPUs (symmetric memory off: "
                 "NCCL_WIN_ENABLE=0, NCCL_CUMEM_ENABLE=0, GPUs without peer access or on other machines)";
  }
  if (f.lsa < f.gpus) {
    return gpu + " reaches only " + std::to_string(f.lsa) + " of the " + std::to_string(f.gpus) +
           " GPUs by load and store (NCCL's LSA team): writing into their memory needs one machine";
  }
  for (int g = 0; g < static_cast<int>(f.peer_access.size()); ++g) {
    if (g == f.me || f.peer_access[g] == 1) continue;
    return gpu + (f.peer_access[g] < 0 ? " cannot see GPU " + std::to_string(g) + " (CUDA_VISIBLE_DEVICES?)"
                                       : " cannot map GPU " + std::to_string(g) +
                                             "'s memory (cudaDeviceCanAccessPeer: no peer access)");
  }
  return "";
}

}  // namespace step10
