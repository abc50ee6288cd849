// The kernels a launcher launches, seen from inside the worker: the grader links each worker
// with -Wl,--wrap for the CUDA runtime's launch entry points (worker_targets.cmake), so every
// launch through <<< >>> (or cudaLaunchKernel and its kin) passes here first.
#pragma once

#include <string>

namespace grader_watch {

/// Starts recording the launches.
void start();

/// Stops, and returns what was launched since start(): "KERNEL STATIC DYNAMIC RESERVED" per
/// launch, separated by ';' (shared memory in bytes: the kernel's static size as the runtime
/// reports it, the launch's dynamic size, what the device reserves per block).
std::string stop();

}  // namespace grader_watch
