/// @file references.cuh
/// @brief What every step is measured against: the copy ceiling (the libraries' transposes
/// are in peers.cuh).
///
/// A transpose reads and writes every byte once, exactly like a copy, so the fastest copy the
/// GPU can do in this process, on these buffers, is the honest ceiling. Two copies are timed and
/// the faster one counts: cudaMemcpy device-to-device, and a kernel in which each thread copies
/// one float4 over a grid that covers the buffer (a grid-stride loop measured 6% slower on an
/// H100, so it would flatter every step).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "problem.hpp"

namespace course {

/// Copies @p bytes from @p in to @p out with one 16-byte load and store per thread (the last
/// bytes % 16 bytes by a second, tiny launch). Both pointers must be 16-byte aligned.
cudaError_t launch_copy_kernel(const void* in, void* out, std::size_t bytes, cudaStream_t stream);

/// cudaMemcpyAsync device to device, with the launch signature of a kernel.
cudaError_t launch_memcpy(const void* in, void* out, std::size_t bytes, cudaStream_t stream);

}  // namespace course
