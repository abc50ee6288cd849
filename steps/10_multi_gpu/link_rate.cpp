// Step 10 - the links' facts from NVML, opened at run time like common/device_info.cu does, so
// that the binaries also start where there is no driver. The few NVML declarations needed are
// written out here (NVML's C interface is stable; nvml.h does not come with every toolkit).
#include "link_rate.hpp"

#include <dlfcn.h>

#include <cstdint>

namespace step10 {

namespace {

using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlFieldValue_t {  // nvml.h's nvmlFieldValue_st
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  unsigned valueType, nvmlReturn;
  union { double d; unsigned ui; unsigned long ul; unsigned long long ull; long long sll; } value;
};
constexpr unsigned kNvlinkSpeedCommon = 90;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON
constexpr unsigned kNvlinkLinkCount = 91;    // NVML_FI_DEV_NVLINK_LINK_COUNT (present, not active)
constexpr unsigned kNvlinkGetSpeed = 164;    // NVML_FI_DEV_NVLINK_GET_SPEED (MB/s of the link scopeId)
constexpr int kCapsNvlink = 2;               // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kStatusOk = 0;                 // NVML_P2P_STATUS_OK

template <typename F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

LinkFacts query_links(const std::string& mine, const std::vector<std::string>& others) {
  LinkFacts f;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY);
  if (!lib) return f;
  auto init = symbol<int (*)()>(lib, "nvmlInit_v2");
  auto shutdown = symbol<int (*)()>(lib, "nvmlShutdown");
  auto by_bus = symbol<int (*)(const char*, nvmlDevice_t*)>(lib, "nvmlDeviceGetHandleByPciBusId_v2");
  auto fields = symbol<int (*)(nvmlDevice_t, int, nvmlFieldValue_t*)>(lib, "nvmlDeviceGetFieldValues");
  auto link_state = symbol<int (*)(nvmlDevice_t, unsigned, int*)>(lib, "nvmlDeviceGetNvLinkState");
  auto p2p = symbol<int (*)(nvmlDevice_t, nvmlDevice_t, int, int*)>(lib, "nvmlDeviceGetP2PStatus");
  auto gen = symbol<int (*)(nvmlDevice_t, unsigned*)>(lib, "nvmlDeviceGetMaxPcieLinkGeneration");
  auto width = symbol<int (*)(nvmlDevice_t, unsigned*)>(lib, "nvmlDeviceGetMaxPcieLinkWidth");
  if (!init || !shutdown || !by_bus || !fields || !link_state || !p2p || !gen || !width || init() != 0) {
    dlclose(lib);
    return f;
  }
  nvmlDevice_t me = nullptr;
  if (by_bus(mine.c_str(), &me) == 0) {
    f.known = true;
    nvmlFieldValue_t v[2] = {};
    v[0].fieldId = kNvlinkSpeedCommon;
    v[1].fieldId = kNvlinkLinkCount;
    if (fields(me, 2, v) == 0) {
      if (v[0].nvmlReturn == 0) f.nvlink_mbps = v[0].value.ui;
      const unsigned present = v[1].nvmlReturn == 0 ? v[1].value.ui : 0;
      int first_active = -1;
      for (unsigned l = 0; l < present; ++l) {
        int active = 0;
        if (link_state(me, l, &active) != 0 || !active) continue;
        if (f.nvlinks == 0) first_active = static_cast<int>(l);
        ++f.nvlinks;
      }
      // Some drivers leave the common speed unanswered (Hopper behind NVSwitch): ask a link's.
      if (f.nvlink_mbps == 0 && first_active >= 0) {
        nvmlFieldValue_t s = {};
        s.fieldId = kNvlinkGetSpeed;
        s.scopeId = static_cast<unsigned>(first_active);
        const int rc = fields(me, 1, &s);
        if (rc == 0 && s.nvmlReturn == 0) f.nvlink_mbps = s.value.ui;
        else f.why_no_speed = "NVML speed fields: " + std::to_string(v[0].nvmlReturn) + ", " +
                              std::to_string(rc ? rc : static_cast<int>(s.nvmlReturn));
      }
    }
    // NVLink to every other GPU, directly or through NVSwitch; else the traffic takes PCIe.
    f.nvlink_to_all = f.nvlinks > 0;
    for (const std::string& bus : others) {
      nvmlDevice_t other = nullptr;
      int status = -1;
      int rc = by_bus(bus.c_str(), &other);
      if (rc == 0) rc = p2p(me, other, kCapsNvlink, &status);
      if (rc != 0 || status != kStatusOk) {
        // Kept for the table's line: why NVLink was not taken (NVML's return code and status).
        if (f.nvlink_to_all) f.why_not_nvlink = bus + ": NVML " + std::to_string(rc) + ", status " + std::to_string(status);
        f.nvlink_to_all = false;
      }
    }
    unsigned g = 0, w = 0;
    if (gen(me, &g) == 0 && width(me, &w) == 0) {
      f.pcie_gen = static_cast<int>(g);
      f.pcie_lanes = static_cast<int>(w);
    }
  }
  shutdown();
  dlclose(lib);
  return f;
}

}  // namespace step10
