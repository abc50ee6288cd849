#include "device_info.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <ctime>

#include "check.cuh"

// __CUDA_ARCH_LIST__ as text: "800,900".
#define CUDA_ARCH_STRINGIFY(x) #x
#define CUDA_ARCH_TEXT(x) CUDA_ARCH_STRINGIFY(x)

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

std::string no_device_reason(cudaError_t status, int count, bool driver_found, int driver_version,
                             int runtime_version, const char* visible_devices) {
  if (status == cudaSuccess && count > 0) return "";
  if (!driver_found) {
    return "no NVIDIA driver is installed (libcuda.so.1 was not found); the kernels need an "
           "NVIDIA GPU and its driver, while building and the CPU tests (make test-cpu) do not";
  }
  std::string hidden;
  if (visible_devices) {
    hidden = std::string("; CUDA_VISIBLE_DEVICES is set to '") + visible_devices +
             "', which may hide it";
  }
  switch (status) {
    case cudaSuccess:  // count == 0
    case cudaErrorNoDevice:
      return "the NVIDIA driver is installed but sees no GPU (nvidia-smi lists them; in a "
             "container, pass the GPU through, e.g. docker run --gpus all)" + hidden;
    case cudaErrorInsufficientDriver:
      return "the NVIDIA driver supports CUDA " +
             (driver_version > 0 ? "up to " + version_string(driver_version) : "too old a version") +
             ", older than the CUDA " + version_string(runtime_version) +
             " this was built with: update the driver (nvidia-smi shows its version), or build "
             "with an older CUDA toolkit";
    case cudaErrorDevicesUnavailable:
      return "every GPU is busy or in exclusive-process mode (nvidia-smi shows what runs on it)";
    case cudaErrorSystemDriverMismatch:
      return "the NVIDIA kernel module and the driver library have different versions (a driver "
             "update half done: reboot, or reinstall the driver)";
    case cudaErrorSystemNotReady:
      return "the GPUs are not ready yet (on NVSwitch systems, nvidia-fabricmanager must be "
             "running)";
    default:
      return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(status) + " (" +
             cudaGetErrorString(status) + ")" + hidden;
  }
}

bool cuda_device_available(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaSuccess && count > 0) return true;
  cudaGetLastError();  // clear the error for whoever asks next
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY);
  if (lib) dlclose(lib);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);  // 0 without a driver
  cudaRuntimeGetVersion(&runtime);
  *why = no_device_reason(status, count, lib != nullptr, driver, runtime,
                          std::getenv("CUDA_VISIBLE_DEVICES"));
  return false;
}

std::string built_architectures() {
#ifdef __CUDA_ARCH_LIST__
  // nvcc defines it as the comma-separated virtual architectures, e.g. 800,900.
  std::string list = CUDA_ARCH_TEXT(__CUDA_ARCH_LIST__), out;
  std::size_t start = 0;
  while (start < list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const int arch = std::atoi(list.substr(start, end - start).c_str());  // 900
    out += (out.empty() ? "" : ", ") + std::to_string(arch / 100) + "." +
           std::to_string((arch % 100) / 10);
    start = end + 1;
  }
  return out;
#else
  return "unknown";
#endif
}

bool is_architecture_error(cudaError_t status) {
  return status == cudaErrorNoKernelImageForDevice || status == cudaErrorInvalidDeviceFunction ||
         status == cudaErrorUnsupportedPtxVersion || status == cudaErrorInvalidPtx ||
         status == cudaErrorInvalidKernelImage;
}

std::string wrong_architecture_reason(cudaError_t status, const std::string& device, int major,
                                      int minor, const std::string& built,
                                      const std::string& target) {
  const std::string cc = std::to_string(major) + "." + std::to_string(minor);
  const std::string arch = std::to_string(major) + std::to_string(minor);
  const std::string rebuild =
      "rebuild for it with make ARCH=" + arch + (target.empty() ? "" : " " + target);
  if (status == cudaErrorUnsupportedPtxVersion || status == cudaErrorInvalidPtx) {
    return "the NVIDIA driver is too old to compile this build's PTX (compute capability " +
           built + ") for the " + device + " (compute capability " + cc +
           "): update the driver, or " + rebuild;
  }
  return "this build has kernels for compute capability " + built + " only, and the " + device +
         " is compute capability " + cc + ": " + rebuild;
}

namespace {
// The smallest kernel there is: if it cannot run, no kernel of this build can (they are all
// compiled for the same architectures).
__global__ void probe_kernel() {}
}  // namespace

std::string cuda_error_hint(cudaError_t status) {
  if (status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice) {
    std::string why;
    return cuda_device_available(&why) ? "" : why;
  }
  if (!is_architecture_error(status)) return "";
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
    cudaGetLastError();
    return "this build has kernels for compute capability " + built_architectures() + " only";
  }
  return wrong_architecture_reason(status, prop.name, prop.major, prop.minor,
                                   built_architectures(), "");
}

bool kernels_run_here(const std::string& target, std::string* why) {
  cudaFuncAttributes attributes{};
  const cudaError_t status = cudaFuncGetAttributes(&attributes, probe_kernel);
  if (status == cudaSuccess) return true;
  cudaGetLastError();
  if (!is_architecture_error(status)) CUDA_CHECK(status);
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  *why = wrong_architecture_reason(status, prop.name, prop.major, prop.minor,
                                   built_architectures(), target);
  return false;
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
