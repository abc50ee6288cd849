/// @file timer.cuh
/// @brief Timing a kernel with CUDA events: warm-up, many repetitions, median and minimum.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <vector>

namespace course {

/// Milliseconds per run.
struct Timing {
  double median_ms = 0;  ///< the median of the timed runs
  double min_ms = 0;     ///< the fastest timed run
};

/// Runs @p launch @p warmup times untimed, then @p reps times, each between two CUDA events on
/// @p stream, and returns the median and the minimum. Events time the GPU's work alone, not the
/// host's launch overhead; the median resists the odd slow run that a mean would absorb.
/// Step 10 times G GPUs at once: @p before, untimed, lines them up before every run, and
/// @p combine makes each repetition's time the slowest GPU's before the median is taken.
Timing time_runs(const std::function<void(cudaStream_t)>& launch, int warmup, int reps,
                 cudaStream_t stream = nullptr,
                 const std::function<void(cudaStream_t)>& before = nullptr,
                 const std::function<void(std::vector<double>&)>& combine = nullptr);

}  // namespace course
