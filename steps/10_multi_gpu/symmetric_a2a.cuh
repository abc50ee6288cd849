// Step 10 - NCCL's all-to-all at its strongest on one machine, a reference row beside the plain
// one: the same bytes, from and into buffers registered with NCCL as symmetric windows
// (ncclMemAlloc, ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC), by ncclAlltoAll. NCCL
// 2.28 moves them with its kernels, or with the copy engines where the communicator asks for no
// SMs (ncclConfig_t's CTAPolicy = NCCL_CTA_POLICY_ZERO): NCCL's own version of part 2. With
// NCCL_NVLS_ENABLE=0 (run_multi sets it) neither the windows nor the copy engines' handshake use
// NVLink multicast: NCCL then synchronises them by flags in each GPU's memory.
#pragma once

#include <nccl.h>

#include <memory>
#include <string>

#include "multi_harness.hpp"
#include "nccl_buffer.cuh"
#include "window.cuh"

namespace step10 {

/// The all-to-all's own buffers, registered as symmetric windows, on the team's communicator or,
/// for the copy engines, on one split from it that asks for no SMs.
struct SymmetricA2a {
  std::unique_ptr<SplitComm> split;
  ncclComm_t comm;
  std::size_t count;  // bytes per GPU: the largest piece, on 16 bytes
  NcclBuffer send, recv;
  WindowRegistration send_win, recv_win;
  std::string why;

  SymmetricA2a(const Context& c, bool copy_engines)
      : split(copy_engines ? std::make_unique<SplitComm>(c, no_sms()) : nullptr),
        comm(split ? split->get() : c.comm),
        // ncclAlltoAll sends every GPU the same count: the largest piece, so that every piece
        // fits (the same bytes as the transpose's wherever the blocks are even: the benchmark's
        // shapes).
        count((static_cast<std::size_t>(c.at.row_blocks().count(0) * c.at.col_blocks().count(0)) * c.at.elem + 15) / 16 * 16),
        send(count * c.at.gpus), recv(count * c.at.gpus),
        send_win(comm, send.get(), send.bytes(), NCCL_WIN_COLL_SYMMETRIC),
        recv_win(comm, recv.get(), recv.bytes(), NCCL_WIN_COLL_SYMMETRIC) {
    CUDA_CHECK(cudaMemset(send.get(), 0, send.bytes()));
    // Without windows NCCL would still run it, on plain buffers: the row would repeat the plain
    // all-to-all under another name.
    if (!mapped_window(send_win.get()) || !mapped_window(recv_win.get())) {
      why = "NCCL made no symmetric window (symmetric memory off: NCCL_WIN_ENABLE=0, "
            "NCCL_CUMEM_ENABLE=0, or GPUs without peer access)";
    }
  }
  static ncclConfig_t no_sms() {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.CTAPolicy = NCCL_CTA_POLICY_ZERO;
    return config;
  }
  const std::string& why_not() const { return why; }
};

/// @p copy_engines: on a communicator split with CTAPolicy = NCCL_CTA_POLICY_ZERO.
inline Method a2a_symmetric(bool copy_engines) {
  Method m;
  m.id = copy_engines ? "a2a-symmetric-ce" : "a2a-symmetric";
  m.name = copy_engines ? "copy: NCCL all-to-all, symmetric windows, copy engines"
                        : "copy: NCCL all-to-all, symmetric windows";
  m.reference = true;
  return with_state<SymmetricA2a>(m, [](SymmetricA2a& st, const Context&, cudaStream_t s) {
    NCCL_CHECK(ncclAlltoAll(st.send.get(), st.recv.get(), st.count, ncclUint8, st.comm, s));
  }, copy_engines);
}

}  // namespace step10
