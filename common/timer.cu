#include "timer.cuh"

#include <algorithm>

#include "check.cuh"

namespace course {

namespace {
// Two events, destroyed on every path.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
};
}  // namespace

Timing time_runs(const std::function<void(cudaStream_t)>& launch, int warmup, int reps,
                 cudaStream_t stream, const std::function<void(cudaStream_t)>& before,
                 const std::function<void(std::vector<double>&)>& combine) {
  for (int i = 0; i < warmup; ++i) {
    if (before) before(stream);
    launch(stream);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));

  EventPair ev;
  std::vector<double> ms(static_cast<std::size_t>(reps));
  for (double& t : ms) {
    if (before) before(stream);
    CUDA_CHECK(cudaEventRecord(ev.start, stream));
    launch(stream);
    CUDA_CHECK(cudaEventRecord(ev.stop, stream));
    CUDA_CHECK(cudaEventSynchronize(ev.stop));
    float elapsed = 0;
    CUDA_CHECK(cudaEventElapsedTime(&elapsed, ev.start, ev.stop));
    t = elapsed;
  }
  if (combine) combine(ms);
  std::sort(ms.begin(), ms.end());
  Timing r;
  r.min_ms = ms.front();
  r.median_ms = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  return r;
}

}  // namespace course
