#include "timer.cuh"

#include <algorithm>
#include <vector>

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
                 cudaStream_t stream) {
  for (int i = 0; i < warmup; ++i) launch(stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));

  EventPair ev;
  std::vector<double> ms(static_cast<std::size_t>(reps));
  for (double& t : ms) {
    CUDA_CHECK(cudaEventRecord(ev.start, stream));
    launch(stream);
    CUDA_CHECK(cudaEventRecord(ev.stop, stream));
    CUDA_CHECK(cudaEventSynchronize(ev.stop));
    float elapsed = 0;
    CUDA_CHECK(cudaEventElapsedTime(&elapsed, ev.start, ev.stop));
    t = elapsed;
  }
  std::sort(ms.begin(), ms.end());
  Timing r;
  r.min_ms = ms.front();
  r.median_ms = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  return r;
}

}  // namespace course
