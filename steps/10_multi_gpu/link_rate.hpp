// Step 10 - the link's theoretical rate each way, as the GPU reports it (NVML), for the bound:
// NVLink, its active links times the speed per link NVML gives; else PCIe, its generation's
// transfer rate times its lanes, less the line code. Theoretical: what the wires carry, before
// any protocol; what a copy reaches is measured beside it (the lab's link copy). The arithmetic
// is here, host code that the CPU tests check; link_rate.cpp asks the driver.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace step10 {

/// GB/s each way of @p links NVLinks of @p mbps_per_link MB/s each (NVML's
/// NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON: MB/s each way per link).
inline double nvlink_gbps(int links, unsigned mbps_per_link) {
  return links > 0 ? links * (mbps_per_link / 1000.0) : 0.0;
}

/// GB/s each way of PCIe generation @p gen with @p lanes lanes: gigatransfers per second per
/// lane, one bit each, less the line code (8b/10b to generation 2, 128b/130b from 3; 6 sends
/// 242-byte payloads in 256-byte units); 0 for a generation it does not know.
inline double pcie_gbps(int gen, int lanes) {
  static const double gts[] = {0, 2.5, 5, 8, 16, 32, 64};
  if (gen < 1 || gen > 6 || lanes < 1) return 0.0;
  const double code = gen <= 2 ? 8.0 / 10 : gen <= 5 ? 128.0 / 130 : 242.0 / 256;
  return gts[gen] * lanes * code / 8;
}

/// What the driver says about this GPU's links to the others of the team.
struct LinkFacts {
  bool known = false;     ///< NVML answered
  int nvlinks = 0;        ///< active NVLinks of this GPU
  unsigned nvlink_mbps = 0;  ///< MB/s each way per link
  bool nvlink_to_all = false;  ///< NVLink reaches every other GPU of the team (NVML's P2P status)
  std::string why_not_nvlink;  ///< where this GPU has NVLinks: the first GPU NVML says they miss
  std::string why_no_speed;    ///< where NVML gave no speed per link: its return codes
  int pcie_gen = 0, pcie_lanes = 0;
};

/// The rate each way this GPU's traffic to the others meets, and how it was found ("18 NVLinks
/// x 26.6 GB/s, theoretical"); 0 and why where unknown.
struct LinkRate {
  double gbps = 0;
  std::string what;
};
inline LinkRate link_rate(const LinkFacts& f) {
  char buf[160];
  if (!f.known) return {0, "unknown: NVML did not answer"};
  if (f.nvlink_to_all && f.nvlinks > 0 && f.nvlink_mbps > 0) {
    std::snprintf(buf, sizeof buf, "%d NVLinks x %.1f GB/s, theoretical", f.nvlinks, f.nvlink_mbps / 1000.0);
    return {nvlink_gbps(f.nvlinks, f.nvlink_mbps), buf};
  }
  const double pcie = pcie_gbps(f.pcie_gen, f.pcie_lanes);
  if (pcie > 0) {
    std::snprintf(buf, sizeof buf, "PCIe %d x%d, theoretical", f.pcie_gen, f.pcie_lanes);
    std::string what = buf;
    if (f.nvlinks > 0)  // NVLinks that NVML does not report as joining the team, or without a speed
      what += "; " + std::to_string(f.nvlinks) + " NVLinks " +
              (f.nvlink_to_all ? "of unknown speed (" + f.why_no_speed + ")" : "not to " + f.why_not_nvlink);
    return {pcie, what};
  }
  return {0, "unknown: neither NVLink to every GPU nor a PCIe link NVML describes"};
}

/// Asks NVML (opened at run time: the binaries start without a driver) about the GPU with PCI
/// bus id @p mine and its links to the GPUs of @p others (bus ids). known = false without NVML.
LinkFacts query_links(const std::string& mine, const std::vector<std::string>& others);

}  // namespace step10
