// Step 10 - NCCL's all-to-all at its strongest on one machine, a reference row beside the plain
// one: the same bytes, from and into buffers registered with NCCL as symmetric windows
// (ncclMemAlloc, ncclCommWindowRegister with NCCL_WIN_COLL_SYMMETRIC), by ncclAlltoAll. NCCL
// 2.28 moves them with its kernels, or with the copy engines where the communicator asks for no
// SMs (ncclConfig_t's CTAPolicy = NCCL_CTA_POLICY_ZERO): NCCL's own version of part 2. With
// NCCL_NVLS_ENABLE=0 (run_multi sets it) neither the windows nor the copy engines' handshake use
// NVLink multicast: NCCL then synchronises them by flags in each GPU's memory.
#pragma once

#include <nccl.h>

#include <algorithm>
#include <memory>
#include <string>

#include "multi_harness.hpp"
#include "window.cuh"

namespace step10 {

/// @p copy_engines: on a communicator split with CTAPolicy = NCCL_CTA_POLICY_ZERO.
inline Method a2a_symmetric(bool copy_engines) {
  struct State {
    ncclComm_t comm = nullptr;  // the team's, or the split one
    bool split = false;
    std::unique_ptr<NcclBuffer> send, recv;
    ncclWindow_t send_win = nullptr, recv_win = nullptr;
    std::size_t count = 0;  // bytes per GPU: the largest piece, on 16 bytes
    ~State() {  // no checks: a destructor must not throw
      if (send_win) ncclCommWindowDeregister(comm, send_win);
      if (recv_win) ncclCommWindowDeregister(comm, recv_win);
      send.reset();
      recv.reset();
      if (split && comm) ncclCommDestroy(comm);
    }
  };
  auto state = std::make_shared<std::unique_ptr<State>>();
  Method m;
  m.id = copy_engines ? "a2a-symmetric-ce" : "a2a-symmetric";
  m.name = copy_engines ? "copy: NCCL all-to-all, symmetric windows, copy engines"
                        : "copy: NCCL all-to-all, symmetric windows";
  m.reference = true;
  m.prepare = [state, copy_engines](const Context& c) {
    auto st = std::make_unique<State>();
    st->comm = c.comm;
    if (copy_engines) {
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.CTAPolicy = NCCL_CTA_POLICY_ZERO;
      NCCL_CHECK(ncclCommSplit(c.comm, 0, c.me, &st->comm, &config));
      st->split = true;
    }
    // ncclAlltoAll sends every GPU the same count: the largest piece, so that every piece fits
    // (the same bytes as the transpose's wherever the blocks are even: the benchmark's shapes).
    const std::size_t largest = static_cast<std::size_t>(c.at.row_blocks().count(0) * c.at.col_blocks().count(0)) * c.at.elem;
    st->count = (largest + 15) / 16 * 16;
    const std::size_t bytes = st->count * c.at.gpus;
    st->send = std::make_unique<NcclBuffer>(bytes);
    st->recv = std::make_unique<NcclBuffer>(bytes);
    NCCL_CHECK(ncclCommWindowRegister(st->comm, st->send->get(), bytes, &st->send_win, NCCL_WIN_COLL_SYMMETRIC));
    NCCL_CHECK(ncclCommWindowRegister(st->comm, st->recv->get(), bytes, &st->recv_win, NCCL_WIN_COLL_SYMMETRIC));
    CUDA_CHECK(cudaMemset(st->send->get(), 0, bytes));
    const bool windows = mapped_window(st->send_win) && mapped_window(st->recv_win);
    *state = std::move(st);
    // Without windows NCCL would still run it, on plain buffers: the row would repeat the plain
    // all-to-all under another name.
    return windows ? std::string()
                   : std::string("NCCL made no symmetric window (symmetric memory off: NCCL_WIN_ENABLE=0, "
                                 "NCCL_CUMEM_ENABLE=0, or GPUs without peer access)");
  };
  m.run = [state](const Context&, cudaStream_t s) {
    State& st = **state;
    NCCL_CHECK(ncclAlltoAll(st.send->get(), st.recv->get(), st.count, ncclUint8, st.comm, s));
  };
  m.release = [state] { state->reset(); };
  return m;
}

}  // namespace step10
