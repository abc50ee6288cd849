// Step 10's lab: the methods tried beside the lesson's pipeline, as the harness sees them.
//   plain order:  pack, all-to-all, place, one after the other on one stream (the lesson's three
//                 passes with no overlap: what the pipeline improves on, and PyTorch's order);
//   overlapped:   the lesson's pipeline, timed in the same run for comparison; with NCCL held
//                 to 8 blocks; with buffers registered with NCCL;
//   peer writes:  the lesson's (peer.cuh), timed in the same run, its tiles walked down the
//                 columns instead, or step 08's vector kernel moving 16-byte vectors (peer_vec.cuh);
//   direct:       direct.cuh, pieces placed by the copy engines or by a copy kernel, or its
//                 packs held to a few SMs (green.cuh) so that the link copies keep their pace;
//   link copy:    the same bytes copied over the links as they lie: the links' pace.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "nccl_buffer.cuh"
#include "methods.cuh"
#include "multi_harness.hpp"
#include "multi_transpose.cuh"
#include "copy_rows.cuh"
#include "direct.cuh"
#include "green.cuh"
#include "peer_vec.cuh"
#include "window.cuh"

namespace step10 {

inline Method plain_order() {
  Method m;
  m.id = "plain";
  m.name = "plain order";
  m.run = [](const Context& c, cudaStream_t s) {
    const Part p = c.part(1);
    pack(p, 0, s);
    exchange(p, 0, c.comm, s);
    for (int g = 0; g < p.at.gpus; ++g) place(p, g, 0, s);
  };
  return m;
}

/// The lesson's pipeline (methods.cuh) with NCCL held to a few SMs: a communicator split from the
/// team's with ncclConfig_t's maxCTAs, so the packs keep the others.
template <int kCtas>
struct FewCtas {
  SplitComm split;
  explicit FewCtas(const Context& c) : split(c, config()) {}
  static ncclConfig_t config() {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.minCTAs = 1;
    config.maxCTAs = kCtas;
    return config;
  }
  ncclComm_t comm(const Context&) const { return split.get(); }
  Part part(const Context& c) const { return c.part(); }
};

/// The lesson's pipeline with its send and receive buffers from ncclMemAlloc, registered with
/// NCCL (ncclCommRegister), so that its transport may use them without its own buffers.
struct Registered {
  ncclComm_t team;
  NcclBuffer send, recv;
  void *send_handle = nullptr, *recv_handle = nullptr;
  explicit Registered(const Context& c)
      : team(c.comm), send(c.at.in_elems(c.me) * c.at.elem + 16),
        recv(c.at.recv_elems(c.me) * c.at.elem + 16) {
    NCCL_CHECK(ncclCommRegister(team, send.get(), send.bytes(), &send_handle));
    NCCL_CHECK(ncclCommRegister(team, recv.get(), recv.bytes(), &recv_handle));
  }
  ~Registered() {  // no checks: a destructor must not throw
    if (send_handle) ncclCommDeregister(team, send_handle);
    if (recv_handle) ncclCommDeregister(team, recv_handle);
  }
  ncclComm_t comm(const Context& c) const { return c.comm; }
  Part part(const Context& c) const {
    Part p = c.part();
    p.send = send.get();
    p.recv = recv.get();
    return p;
  }
};

/// The links' own pace: every piece this GPU sends, copied as it lies (no transpose) by a copy
/// engine into its owner's output block: all at once, a stream per GPU, or in turn on one
/// stream. A reference row, not a transpose.
struct LinkCopy {
  Window window;
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> done;  // one per stream
  cudaEvent_t start = nullptr;
  LinkCopy(const Context& c, bool in_turn) : window(c), streams(in_turn ? 1 : c.at.gpus), done(streams.size()) {
    for (cudaStream_t& t : streams) CUDA_CHECK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
    for (cudaEvent_t& e : done) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&start, cudaEventDisableTiming));
  }
  ~LinkCopy() {  // no checks: a destructor must not throw
    for (cudaStream_t t : streams) if (t) cudaStreamDestroy(t);
    for (cudaEvent_t e : done) if (e) cudaEventDestroy(e);
    if (start) cudaEventDestroy(start);
  }
  const std::string& why_not() const { return window.why_not(); }
};

inline Method link_copy(bool in_turn) {
  Method m;
  m.id = in_turn ? "link-copy-1stream" : "link-copy";
  m.name = in_turn ? "copy: the same bytes over the links, copy engines, in turn"
                   : "copy: the same bytes over the links, copy engines";
  m.reference = true;
  return with_state<LinkCopy>(m, [in_turn](LinkCopy& st, const Context& c, cudaStream_t s) {
    c.barrier(s);  // entry: every GPU's output is free to write into
    CUDA_CHECK(cudaEventRecord(st.start, s));
    for (cudaStream_t t : st.streams) CUDA_CHECK(cudaStreamWaitEvent(t, st.start));
    const std::int64_t mine = c.at.row_blocks().count(c.me);
    for (int i = 1; i < c.at.gpus; ++i) {  // the next GPU first, as the direct placement
      const int g = (c.me + i) % c.at.gpus;
      const std::size_t bytes = c.at.col_blocks().count(g) * mine * c.at.elem;
      if (bytes == 0) continue;
      const std::size_t at = c.at.col_blocks().count(g) * c.at.row_blocks().first(c.me) * c.at.elem;
      CUDA_CHECK(cudaMemcpyAsync(st.window.out(g) + at,
                                 static_cast<const char*>(c.in) + c.at.col_blocks().first(g) * mine * c.at.elem,
                                 bytes, cudaMemcpyDefault, st.streams[in_turn ? 0 : g]));
    }
    for (std::size_t k = 0; k < st.streams.size(); ++k) {
      CUDA_CHECK(cudaEventRecord(st.done[k], st.streams[k]));
      CUDA_CHECK(cudaStreamWaitEvent(s, st.done[k]));
    }
    c.barrier(s);
  }, in_turn);
}

/// The direct placement with its packs on a green context of @p sms SMs.
struct DirectOnFewSms {
  GreenStream packs;  // made before, destroyed after the pipeline that uses it
  Direct direct;
  DirectOnFewSms(const Context& c, unsigned sms)
      : packs(sms), direct(c, by_copy_engine, true, nullptr, InStep::never, Fault::none, packs.get()) {}
  const std::string& why_not() const { return direct.why_not(); }
};
inline Method direct_on_few_sms(unsigned sms) {
  Method m;
  m.id = "direct-packs-" + std::to_string(sms) + "sms";
  m.name = "direct: the packs on " + std::to_string(sms) + " SMs (a green context)";
  m.chunked = true;
  return with_state<DirectOnFewSms>(
      m, [](DirectOnFewSms& st, const Context& c, cudaStream_t s) { st.direct.run(c, s); }, sms);
}

inline std::vector<Method> lab_methods() {
  return {plain_order(), overlapped(),
          overlapped<FewCtas<8>>("overlapped-8ctas", "overlapped, NCCL on 8 blocks"),
          overlapped<Registered>("overlapped-registered", "overlapped, buffers registered with NCCL"),
          // The lesson's peer writes, its tiles walked down the columns, and step 08's vectors.
          peer_writes(),
          peer_writes(launch_to_owners<true>, "peer-down", "peer writes, tiles down the columns"),
          peer_writes(launch_vec_to_owners, "peer-vec", "peer writes in 16-byte vectors (step 08's vector tile)"),
          // The lesson's direct placement is direct-in-step beyond 2 GPUs and direct on 2; the
          // other variants never wait for each other, so that each changes one thing.
          direct(by_copy_engine, true, "direct", "direct: pieces placed by the copy engines, in turn",
                 nullptr, InStep::never),
          direct(by_copy_engine, false, "direct-at-once", "direct: copy engines, every GPU's piece at once",
                 nullptr, InStep::never),
          direct(by_copy_kernel, true, "direct-kernel", "direct: pieces placed by a copy kernel",
                 nullptr, InStep::never),
          direct(by_copy_engine, true, "direct-in-turn-mine-kernel",
                 "direct: copy engines in turn, my own piece by a copy kernel", by_copy_kernel,
                 InStep::never),
          direct(by_copy_engine, true, "direct-in-step", "direct: in turn, the GPUs in step chunk by chunk",
                 nullptr, InStep::always),
          direct_on_few_sms(24), direct_on_few_sms(32), direct_on_few_sms(48),
          link_copy(false),      link_copy(true),
          // The tests' faults (checks.cmake), run only when --only names them.
          direct(by_copy_engine, true, "fault-pack-wait", "fault: copies not waiting for the pack",
                 nullptr, InStep::never, Fault::no_pack_wait),
          direct(by_copy_engine, true, "fault-entry-barrier", "fault: no entry barrier", nullptr,
                 InStep::never, Fault::no_entry_barrier),
          direct(by_copy_engine, true, "fault-exit-barrier", "fault: no exit barrier", nullptr,
                 InStep::never, Fault::no_exit_barrier)};
}

}  // namespace step10
