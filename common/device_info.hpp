/// @file device_info.hpp
/// @brief What the reports say about the GPU: name, driver, and the theoretical peak bandwidth.
#pragma once

#include <driver_types.h>

#include <cstdint>
#include <string>

namespace course {

/// Theoretical DRAM bandwidth in GB/s (1e9 bytes): the memory transfers data on both clock
/// edges, so peak = 2 x clock x bus width / 8. An H100 SXM (2619 MHz, 5120-bit HBM3) gives 3352.
inline double theoretical_peak_gbps(std::int64_t mem_clock_khz, std::int64_t bus_width_bits) {
  return 2.0 * static_cast<double>(mem_clock_khz) * 1e3 * static_cast<double>(bus_width_bits) /
         8.0 / 1e9;
}

/// The current device as the reports describe it.
struct DeviceInfo {
  std::string name;           ///< "NVIDIA H100 80GB HBM3"
  std::string driver;         ///< "580.159.04" (from NVML when present, else the CUDA version)
  std::string cuda;           ///< runtime version, "13.0"
  int sms = 0;                ///< streaming multiprocessors
  std::int64_t l2_bytes = 0;  ///< L2 cache size
  double peak_gbps = 0;       ///< theoretical_peak_gbps of this device
  std::string date;           ///< today, "2026-11-22", for the CSV
};

/// Reads DeviceInfo for the current device. Throws CudaError where there is none.
DeviceInfo query_device();

/// Returns true when a CUDA device can be used; otherwise false with the reason in @p why, in
/// words a learner can act on (see no_device_reason).
bool cuda_device_available(std::string* why);

/// Why no device can be used, from what cudaGetDeviceCount said (@p status, and @p count when it
/// succeeded): no driver at all (@p driver_found: libcuda.so.1 could not be loaded; the runtime
/// then reports an "insufficient driver", which would send a learner to update a driver they do
/// not have), a driver older than the runtime (@p driver_version and @p runtime_version as CUDA
/// numbers, 12020 = 12.2), a driver that sees no GPU (@p visible_devices: the value of
/// CUDA_VISIBLE_DEVICES, nullptr when unset), and the rarer cases by name. Empty when
/// @p status is cudaSuccess and @p count > 0.
std::string no_device_reason(cudaError_t status, int count, bool driver_found, int driver_version,
                             int runtime_version, const char* visible_devices);

/// The compute capabilities this build holds kernels for, from nvcc's __CUDA_ARCH_LIST__:
/// "9.0", or "8.0, 9.0" for ARCH="80;90".
std::string built_architectures();

/// True when @p status is what a launch returns on a GPU that this build has no kernel for
/// (no kernel image, or PTX the driver cannot compile).
bool is_architecture_error(cudaError_t status);

/// Why this build cannot run on the device named @p device, of compute capability
/// @p major.@p minor, given the error (@p status, see is_architecture_error) and @p built
/// (built_architectures()), with the command that rebuilds @p target for it
/// (`make ARCH=80 step01`).
std::string wrong_architecture_reason(cudaError_t status, const std::string& device, int major,
                                      int minor, const std::string& built,
                                      const std::string& target);

/// What a CUDA error means for a learner, for CUDA_CHECK's message: no_device_reason for the
/// errors of a machine without a usable device, wrong_architecture_reason for the current device
/// after an architecture error (see is_architecture_error), "" for any other error.
std::string cuda_error_hint(cudaError_t status);

/// Returns true when this build's kernels can run on the current device; otherwise false with
/// wrong_architecture_reason in @p why (@p target: the make target that rebuilds the binary).
/// Throws CudaError on any other failure.
bool kernels_run_here(const std::string& target, std::string* why);

}  // namespace course
