// Step 10's lab: the methods tried beside the lesson's pipeline, as the harness sees them.
//   plain order:  pack, all-to-all, place, one after the other on one stream (the lesson's three
//                 passes with no overlap: what the pipeline improves on, and PyTorch's order);
//   overlapped:   the lesson's pipeline, timed in the same run for comparison;
//   peer writes:  lab/peer.cuh, one kernel writing into every GPU's output over CUDA IPC.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "device_buffer.cuh"
#include "methods.cuh"
#include "multi_harness.hpp"
#include "multi_transpose.cuh"
#include "peer.cuh"

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

/// The other GPUs' output blocks, opened through CUDA IPC, and the device array of every GPU's.
struct PeerOutputs {
  std::vector<char*> opened;  // nullptr for this GPU and for a handle that did not open
  course::DeviceBuffer table;
  ~PeerOutputs() {
    for (char* p : opened)
      if (p) cudaIpcCloseMemHandle(p);
  }
};

/// Every GPU's output block as seen from this process; "" or why it cannot be had.
inline std::string open_peer_outputs(const Context& c, PeerOutputs* peers) {
  const int G = c.at.gpus;
  cudaIpcMemHandle_t mine;
  CUDA_CHECK(cudaIpcGetMemHandle(&mine, c.out_allocation));
  course::DeviceBuffer handles(G * sizeof mine);
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<cudaIpcMemHandle_t> all(G);
  cudaError_t e = cudaMemcpyAsync(handles.as<char>() + c.me * sizeof mine, &mine, sizeof mine,
                                  cudaMemcpyHostToDevice, s);
  ncclResult_t n = ncclSuccess;
  if (e == cudaSuccess) {
    n = ncclAllGather(handles.as<char>() + c.me * sizeof mine, handles.get(), sizeof mine,
                      ncclUint8, c.comm, s);
  }
  if (e == cudaSuccess && n == ncclSuccess) {
    e = cudaMemcpyAsync(all.data(), handles.get(), G * sizeof mine, cudaMemcpyDeviceToHost, s);
  }
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  CUDA_CHECK(e);
  NCCL_CHECK(n);

  std::string why;
  std::vector<void*> outs(G);
  peers->opened.assign(G, nullptr);
  for (int g = 0; g < G; ++g) {
    if (g == c.me) {
      outs[g] = c.out;
      continue;
    }
    void* p = nullptr;
    const cudaError_t open = cudaIpcOpenMemHandle(&p, all[g], cudaIpcMemLazyEnablePeerAccess);
    if (open != cudaSuccess) {
      cudaGetLastError();
      if (why.empty()) {
        why = std::string("GPU ") + std::to_string(c.me) + " cannot map GPU " +
              std::to_string(g) + "'s memory (" + cudaGetErrorName(open) +
              "): CUDA IPC needs both GPUs in one machine, with peer access";
      }
      continue;
    }
    peers->opened[g] = static_cast<char*>(p);
    outs[g] = static_cast<char*>(p) + c.out_offset;
  }
  peers->table = course::DeviceBuffer(G * sizeof(void*));
  CUDA_CHECK(cudaMemcpy(peers->table.get(), outs.data(), G * sizeof(void*), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());  // landed before a kernel on another stream reads it
  return why;
}

inline Method peer_writes() {
  auto peers = std::make_shared<std::unique_ptr<PeerOutputs>>();
  Method m;
  m.id = "peer";
  m.name = "peer writes";
  m.prepare = [peers](const Context& c) {
    *peers = std::make_unique<PeerOutputs>();
    return open_peer_outputs(c, peers->get());
  };
  m.run = [peers](const Context& c, cudaStream_t s) {
    c.barrier(s);  // no GPU writes into an output its owner may still be reading
    const std::int64_t rows = c.at.row_blocks().count(c.me);
    if (rows > 0) {
      CUDA_CHECK(launch_to_owners(c.at.elem, c.in, rows, c.at.cols, c.at.row_blocks().first(c.me),
                                  c.at.rows, c.at.gpus, (*peers)->table.as<void*>(), s));
    }
    c.barrier(s);  // every GPU's writes into this output are done
  };
  m.release = [peers] { peers->reset(); };
  return m;
}

inline std::vector<Method> lab_methods() { return {plain_order(), overlapped(), peer_writes()}; }

}  // namespace step10
