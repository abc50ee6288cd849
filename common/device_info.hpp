/// @file device_info.hpp
/// @brief What the reports say about the GPU: name, driver, and the theoretical peak bandwidth.
#pragma once

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

/// Returns true when a CUDA device can be used; otherwise false with the reason in @p why.
bool cuda_device_available(std::string* why);

}  // namespace course
