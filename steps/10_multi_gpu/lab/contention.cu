// step10-contention: do the SMs' memory traffic and the copy engines' link copies slow each
// other? GPUs 0 and 1 copy 256 MiB to each other at once, as 2D copies of 4 KB rows 128 KB
// apart (the direct placement's pieces at 32768 x 32768 on 2 GPUs), alone and beside a copy
// kernel on each GPU that reads and writes 2 GiB: on every SM at full occupancy, or on one block
// per SM. LAB.md ("What slows the direct placement") reads the table. On 2 x H200, medians of
// 3 runs (min-max), GB/s each way: alone 385 (384-386); beside the kernel on every SM 350
// (346-353, the kernel alone 3.92-3.95 TB/s); beside one block per SM 382 (381-384).
//
//   make step10-contention && ./step10-contention
#include <cuda_runtime.h>

#include <cstdio>
#include <memory>
#include <string>

#include "check.cuh"
#include "device_buffer.cuh"
#include "errors.hpp"

namespace {

constexpr std::size_t kPiece = std::size_t(256) << 20, kRow = 4096, kPitch = 128 << 10;
constexpr std::size_t kSpan = kPiece / kRow * kPitch;   // 16 GiB of the receiver's rows
constexpr std::size_t kHog = (std::size_t(2) << 30) / sizeof(float4);  // the copy kernel's

__global__ void copy_kernel(const float4* __restrict__ a, float4* __restrict__ b, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    b[i] = a[i];
}

struct Gpu {  // one GPU's buffers, streams and events
  course::DeviceBuffer recv{kSpan}, send{kPiece}, hog{2 * kHog * sizeof(float4)};
  cudaStream_t link = nullptr, sms = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  Gpu() {
    CUDA_CHECK(cudaStreamCreateWithFlags(&link, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&sms, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Gpu() {  // no checks: a destructor must not throw
    for (cudaStream_t s : {link, sms}) if (s) cudaStreamDestroy(s);
    for (cudaEvent_t e : {start, stop}) if (e) cudaEventDestroy(e);
  }
};

/// Both GPUs' link copies, beside a copy kernel of @p blocks blocks on each (0: none); the
/// best of 6 runs of the slower GPU, in GB/s each way.
double link_pace(Gpu* const* g, unsigned blocks) {
  float best = 1e30f;
  for (int run = 0; run < 7; ++run) {
    for (int d = 0; d < 2; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    for (int d = 0; d < 2; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      float4* h = g[d]->hog.as<float4>();
      if (blocks) copy_kernel<<<blocks, 512, 0, g[d]->sms>>>(h, h + kHog, kHog);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaEventRecord(g[d]->start, g[d]->link));
      CUDA_CHECK(cudaMemcpy2DAsync(g[1 - d]->recv.get(), kPitch, g[d]->send.get(), kRow, kRow,
                                   kPiece / kRow, cudaMemcpyDefault, g[d]->link));
      CUDA_CHECK(cudaEventRecord(g[d]->stop, g[d]->link));
    }
    float slower = 0;
    for (int d = 0; d < 2; ++d) {
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaEventSynchronize(g[d]->stop));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, g[d]->start, g[d]->stop));
      slower = ms > slower ? ms : slower;
    }
    if (run > 0 && slower < best) best = slower;  // run 0 warms up
  }
  return kPiece / (best * 1e6);
}

/// The copy kernel alone on GPU 0, in GB/s read and written.
double kernel_pace(Gpu& g, unsigned blocks) {
  CUDA_CHECK(cudaSetDevice(0));
  float4* h = g.hog.as<float4>();
  float best = 1e30f;
  for (int run = 0; run < 4; ++run) {
    CUDA_CHECK(cudaEventRecord(g.start, g.sms));
    copy_kernel<<<blocks, 512, 0, g.sms>>>(h, h + kHog, kHog);
    CUDA_CHECK(cudaEventRecord(g.stop, g.sms));
    CUDA_CHECK(cudaEventSynchronize(g.stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, g.start, g.stop));
    if (run > 0 && ms < best) best = ms;
  }
  return 2.0 * kHog * sizeof(float4) / (best * 1e6);
}

int run() {
  int count = 0, can = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < 2) throw course::UsageError("2 GPUs are needed, " + std::to_string(count) + " here");
  CUDA_CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
  if (!can) throw course::UsageError("GPUs 0 and 1 cannot reach each other's memory");
  std::unique_ptr<Gpu> own[2];
  Gpu* g[2];
  for (int d = 0; d < 2; ++d) {  // each made with its own GPU current
    CUDA_CHECK(cudaSetDevice(d));
    own[d] = std::make_unique<Gpu>();
    g[d] = own[d].get();
    CUDA_CHECK(cudaDeviceEnablePeerAccess(1 - d, 0));
  }
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::printf("link copies both ways, 4 KB rows 128 KB apart, GB/s each way:\n");
  std::printf("  alone                                   %6.0f\n", link_pace(g, 0));
  for (unsigned blocks : {4u * sms, 1u * sms}) {
    std::printf("  beside a copy kernel of %4u blocks    %6.0f   (the kernel alone: %.0f GB/s)\n",
                blocks, link_pace(g, blocks), kernel_pace(*g[0], blocks));
  }
  return course::kExitOk;
}

}  // namespace

int main() { return course::exit_code_of("step10-contention", run); }
