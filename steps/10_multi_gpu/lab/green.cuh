// Step 10's lab: a stream whose kernels run on only some of the GPU's SMs (a green context,
// CUDA 12.4's driver API). The direct placement's packs read and write the GPU's memory at up to
// 4 TB/s while the copy engines move the pieces over NVLink; measured on 2 x H200, a copy kernel
// on every SM beside the link copies slows them from 389 to 357 GB/s each way, and one held to
// a few SMs (under 3 TB/s) does not. On fewer SMs the packs leave the links their pace. The
// driver's functions are looked up at run time (the binary also starts without a driver).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

#include "errors.hpp"

namespace step10 {

inline void check_cu(CUresult r, const char* call) {
  if (r != CUDA_SUCCESS) throw course::CudaError(std::string(call) + " failed: CUresult " + std::to_string(r));
}
#define CU_CHECK(call) ::step10::check_cu((call), #call)

/// The driver's @p name (as in cuda.h, type F), from the runtime: green contexts need CUDA 12.4.
template <typename F>
F driver(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found;
  CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12040, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || !fn)
    throw course::CudaError(std::string(name) + ": not in this driver (green contexts came with CUDA 12.4)");
  return reinterpret_cast<F>(fn);
}
#define DRIVER(f) driver<decltype(&f)>(#f)

/// A stream of a green context of at least @p sms SMs of the current GPU, destroyed on every
/// path. Its kernels run on those SMs only; it shares the GPU's memory and events with the rest.
class GreenStream {
 public:
  explicit GreenStream(unsigned sms) {
    int d = 0;
    CUDA_CHECK(cudaGetDevice(&d));
    CUdevice dev;
    CU_CHECK(DRIVER(cuDeviceGet)(&dev, d));
    CUdevResource all, part, rest;
    unsigned groups = 1;
    CU_CHECK(DRIVER(cuDeviceGetDevResource)(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
    CU_CHECK(DRIVER(cuDevSmResourceSplitByCount)(&part, &groups, &all, &rest, 0, sms));
    CUdevResourceDesc desc;
    CU_CHECK(DRIVER(cuDevResourceGenerateDesc)(&desc, &part, 1));
    CU_CHECK(DRIVER(cuGreenCtxCreate)(&ctx_, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    CU_CHECK(DRIVER(cuGreenCtxStreamCreate)(&stream_, ctx_, CU_STREAM_NON_BLOCKING, 0));
    destroy_stream_ = DRIVER(cuStreamDestroy);
    destroy_ctx_ = DRIVER(cuGreenCtxDestroy);
  }
  ~GreenStream() {  // no checks: a destructor must not throw
    if (stream_) destroy_stream_(stream_);
    if (ctx_) destroy_ctx_(ctx_);
  }
  GreenStream(const GreenStream&) = delete;
  GreenStream& operator=(const GreenStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  CUgreenCtx ctx_ = nullptr;
  CUstream stream_ = nullptr;
  decltype(&cuStreamDestroy) destroy_stream_ = nullptr;
  decltype(&cuGreenCtxDestroy) destroy_ctx_ = nullptr;
};

}  // namespace step10
