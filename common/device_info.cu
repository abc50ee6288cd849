#include "device_info.hpp"

#include <dlfcn.h>

#include <ctime>

#include "check.cuh"

namespace course {

namespace {

// The driver's version string ("580.159.04") comes from NVML. It is opened at run time so that
// the course's binaries also start on a machine with no NVIDIA driver (a CI runner).
std::string nvml_driver_version() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY);
  if (!lib) return "";
  using InitFn = int (*)();
  using VersionFn = int (*)(char*, unsigned);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
  auto version = reinterpret_cast<VersionFn>(dlsym(lib, "nvmlSystemGetDriverVersion"));
  auto shutdown = reinterpret_cast<InitFn>(dlsym(lib, "nvmlShutdown"));
  std::string result;
  if (init && version && shutdown && init() == 0) {
    char buf[96] = {};
    if (version(buf, sizeof buf) == 0) result = buf;
    shutdown();
  }
  dlclose(lib);
  return result;
}

std::string version_string(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

bool cuda_device_available(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status);
    cudaGetLastError();  // clear the sticky error for whoever asks next
    return false;
  }
  if (count == 0) {
    *why = "cudaGetDeviceCount found no device";
    return false;
  }
  return true;
}

DeviceInfo query_device() {
  DeviceInfo d;
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  d.name = prop.name;
  d.sms = prop.multiProcessorCount;
  d.l2_bytes = prop.l2CacheSize;
  // CUDA 13 removed memoryClockRate and memoryBusWidth from cudaDeviceProp; ask the attributes.
  int clock_khz = 0, bus_bits = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev));
  d.peak_gbps = theoretical_peak_gbps(clock_khz, bus_bits);
  int runtime = 0, driver = 0;
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  d.cuda = version_string(runtime);
  d.driver = nvml_driver_version();
  if (d.driver.empty()) d.driver = "CUDA " + version_string(driver);
  char date[16];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  d.date = date;
  return d;
}

}  // namespace course
