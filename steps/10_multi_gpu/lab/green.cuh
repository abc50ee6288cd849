// Step 10's lab: a stream whose kernels run on only some of the GPU's SMs (a green context,
// the driver API of CUDA 12.5), for the direct placement's packs. The packs read and write the
// GPU's memory at up to 4 TB/s while the copy engines move the pieces over NVLink. Measured on
// 2 x H200: a copy kernel on every SM slows the link copies beside it from 385 to 350 GB/s
// each way, one held to fewer SMs (3 TB/s and under) does not. Prediction: on fewer SMs the
// packs leave the links their pace. The runs (LAB.md) say no: on 48 SMs the direct placement
// gains 1%, on 32 and 24 the packs become the limit. The driver's functions are looked up at
// run time, so that the binary also starts without a driver.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

#include "errors.hpp"

namespace step10 {

inline void check_cu(CUresult r, const char* call) {
  if (r != CUDA_SUCCESS)
    throw course::CudaError(std::string(call) + " failed: CUresult " + std::to_string(r));
}
#define CU_CHECK(call) ::step10::check_cu((call), #call)

/// The driver's @p name (as in cuda.h, type F: the version of this toolkit), from the runtime.
template <typename F>
F driver(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found;
  CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &fn, CUDART_VERSION, cudaEnableDefault,
                                              &found));
  if (found != cudaDriverEntryPointSuccess || !fn)
    throw course::CudaError(std::string(name) +
                            ": not in this driver (green contexts need CUDA 12.5)");
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
