// CPU tests of what a binary says when it cannot run its kernels: no driver, no GPU, an old
// driver, a build for another architecture. Each case must name the real problem and what to do.
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "device_info.hpp"

namespace course {
namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CpuDeviceInfo, NoDriverIsNotCalledAnOldDriver) {
  // What the runtime reports on a machine with no driver at all: "insufficient driver".
  const std::string why = no_device_reason(cudaErrorInsufficientDriver, 0, /*driver_found=*/false,
                                           0, 13000, nullptr);
  EXPECT_TRUE(has(why, "no NVIDIA driver is installed")) << why;
  EXPECT_TRUE(has(why, "libcuda.so.1")) << why;
  EXPECT_FALSE(has(why, "update")) << why;
  EXPECT_FALSE(has(why, "insufficient")) << why;
}

TEST(CpuDeviceInfo, AnOldDriverSaysBothVersions) {
  const std::string why =
      no_device_reason(cudaErrorInsufficientDriver, 0, true, 12020, 13000, nullptr);
  EXPECT_TRUE(has(why, "supports CUDA up to 12.2")) << why;
  EXPECT_TRUE(has(why, "CUDA 13.0 this was built with")) << why;
  EXPECT_TRUE(has(why, "update the driver")) << why;
}

TEST(CpuDeviceInfo, ADriverWithoutAGpuSaysSoAndNamesAHidingVariable) {
  for (cudaError_t status : {cudaErrorNoDevice, cudaSuccess}) {  // an error, or a count of 0
    const std::string why = no_device_reason(status, 0, true, 13000, 13000, nullptr);
    EXPECT_TRUE(has(why, "installed but sees no GPU")) << why;
    EXPECT_TRUE(has(why, "--gpus all")) << why;
    EXPECT_FALSE(has(why, "CUDA_VISIBLE_DEVICES")) << why;
  }
  const std::string hidden = no_device_reason(cudaErrorNoDevice, 0, true, 13000, 13000, "");
  EXPECT_TRUE(has(hidden, "CUDA_VISIBLE_DEVICES is set to ''")) << hidden;
}

TEST(CpuDeviceInfo, OtherFailuresAreNamed) {
  EXPECT_TRUE(has(no_device_reason(cudaErrorDevicesUnavailable, 0, true, 13000, 13000, nullptr),
                  "exclusive-process mode"));
  EXPECT_TRUE(has(no_device_reason(cudaErrorSystemDriverMismatch, 0, true, 13000, 13000, nullptr),
                  "different versions"));
  const std::string other = no_device_reason(cudaErrorUnknown, 0, true, 13000, 13000, nullptr);
  EXPECT_TRUE(has(other, "cudaGetDeviceCount failed: cudaErrorUnknown")) << other;
  EXPECT_EQ(no_device_reason(cudaSuccess, 1, true, 13000, 13000, nullptr), "");
}

TEST(CpuDeviceInfo, TheBuiltArchitecturesAreComputeCapabilities) {
  // This build's list, from nvcc: "9.0", or "8.0, 9.0" for ARCH="80;90".
  const std::string built = built_architectures();
  ASSERT_FALSE(built.empty());
  for (std::size_t i = 0; i < built.size(); ++i) {  // digits, one "." each, ", " between
    const char c = built[i];
    const bool ok = std::isdigit(static_cast<unsigned char>(c)) ||
                    (c == '.' && i > 0 && i + 1 < built.size()) ||
                    (c == ',' && built.compare(i, 2, ", ") == 0) || (c == ' ' && built[i - 1] == ',');
    EXPECT_TRUE(ok) << built << " at " << i;
  }
  EXPECT_NE(built.find('.'), std::string::npos) << built;
}

TEST(CpuDeviceInfo, AWrongArchitectureSaysWhichAndHowToRebuild) {
  EXPECT_TRUE(is_architecture_error(cudaErrorNoKernelImageForDevice));
  EXPECT_TRUE(is_architecture_error(cudaErrorUnsupportedPtxVersion));
  EXPECT_FALSE(is_architecture_error(cudaErrorMemoryAllocation));
  const std::string why = wrong_architecture_reason(cudaErrorNoKernelImageForDevice,
                                                    "NVIDIA A100-SXM4-40GB", 8, 0, "9.0", "step01");
  EXPECT_EQ(why,
            "this build has kernels for compute capability 9.0 only, and the NVIDIA "
            "A100-SXM4-40GB is compute capability 8.0: rebuild for it with make ARCH=80 step01");
  const std::string ptx = wrong_architecture_reason(cudaErrorUnsupportedPtxVersion,
                                                    "NVIDIA B200", 10, 0, "9.0", "");
  EXPECT_TRUE(has(ptx, "driver is too old to compile this build's PTX")) << ptx;
  EXPECT_TRUE(has(ptx, "make ARCH=100")) << ptx;
}

TEST(CpuDeviceInfo, OnlyDeviceErrorsGetAHint) {
  EXPECT_EQ(cuda_error_hint(cudaErrorInvalidValue), "");
  EXPECT_EQ(cuda_error_hint(cudaErrorMemoryAllocation), "");
}

}  // namespace
}  // namespace course
