// step07-latency: how long one load takes when nothing else is in flight, the L in Little's law.
// One thread follows a chain of dependent loads (each address is the value the previous load
// returned), so exactly one load is in flight at a time and the time per load is the latency.
// The chain visits 128-byte lines in random order (chase.hpp): a footprint smaller than the L2
// measures the L2's latency, one far larger measures DRAM's. NVIDIA publishes no DRAM latency;
// this is where the course's number comes from.
//
//   make step07-latency && ./step07-latency [--csv plots/data/latency.csv] [--loads N] [--reps N]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "chase.hpp"
#include "check.cuh"
#include "device_buffer.cuh"
#include "device_info.hpp"
#include "errors.hpp"

namespace {

using step07lab::Chase;
using step07lab::kLineBytes;

constexpr std::size_t kWordsPerLine = kLineBytes / sizeof(std::uint32_t);

// Writes next[i] into the first word of line i.
__global__ void scatter(const std::uint32_t* __restrict__ next, std::uint32_t* __restrict__ buf,
                        std::size_t lines) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < lines;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    buf[i * kWordsPerLine] = next[i];
  }
}

// One thread, `loads` dependent loads from line `start` on. __ldcg reads through L2 only (not
// L1), so a repeated line can only hit in L2. The clock is read after the chain's last value
// arrives, because that value is used to store `end`.
__global__ void chase(const std::uint32_t* __restrict__ buf, std::uint32_t start, long long loads,
                      std::uint32_t* end, long long* cycles) {
  std::uint32_t line = start;
  const long long t0 = clock64();
  for (long long n = 0; n < loads; ++n) line = __ldcg(buf + line * kWordsPerLine);
  *end = line;
  *cycles = clock64() - t0;
}

// A CUDA event, destroyed on every path.
struct Event {
  cudaEvent_t e{};
  Event() { CUDA_CHECK(cudaEventCreate(&e)); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

struct Options {
  std::string csv;
  long long loads = 1 << 17;
  int reps = 3;
};

[[noreturn]] void usage_error(const std::string& why) {
  throw course::UsageError(why);
}

long long parse_count(const std::string& name, const char* text, long long lo, long long hi) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi) {
    usage_error(name + ": '" + text + "' is not a whole number from " + std::to_string(lo) +
                " to " + std::to_string(hi));
  }
  return v;
}

const char* kHelp =
    "usage: ./step07-latency [--csv FILE] [--loads N] [--reps N] [--help]\n"
    "The latency of one load with nothing else in flight, by pointer chasing.\n"
    "  --csv FILE   append one row per measurement to FILE (plots/data/latency.csv)\n"
    "  --loads N    dependent loads per timed walk (default 131072)\n"
    "  --reps N     timed walks per footprint; the median is reported (default 3)\n"
    "  --help       this text\n"
    "Exit codes: 0 success, 2 a bad argument, 3 no CUDA device or a CUDA error.\n";

// Returns false after --help.
bool parse(int argc, char** argv, Options* opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help") return false;
    if (a != "--csv" && a != "--loads" && a != "--reps") usage_error("unknown option '" + a + "'");
    if (i + 1 >= argc) usage_error(a + ": a value is needed");
    const char* v = argv[++i];
    if (a == "--csv") opt->csv = v;
    if (a == "--loads") opt->loads = parse_count(a, v, 1024, 1 << 24);
    if (a == "--reps") opt->reps = static_cast<int>(parse_count(a, v, 1, 100));
  }
  if (!opt->csv.empty() && !std::ofstream(opt->csv, std::ios::app)) {
    usage_error("--csv: cannot write '" + opt->csv + "'");
  }
  return true;
}

struct Result {
  const char* pattern;
  std::size_t footprint;
  long long loads;
  double ns;      // per load, from CUDA events around the walk
  double cycles;  // per load, from the SM's clock64()
};

// The median of `reps` timed walks over a chain of `footprint` bytes.
Result measure(Chase how, std::size_t footprint, const Options& opt, std::size_t l2_bytes) {
  const std::size_t lines = footprint / kLineBytes;
  const std::vector<std::uint32_t> order = step07lab::chase_order(lines, how, 0x5EED + lines);
  const std::vector<std::uint32_t> next = step07lab::chase_next(order);
  course::DeviceBuffer buf(footprint), staged(lines * sizeof(std::uint32_t));
  course::DeviceBuffer end(sizeof(std::uint32_t)), cycles(sizeof(long long));
  CUDA_CHECK(cudaMemcpy(staged.get(), next.data(), staged.bytes(), cudaMemcpyHostToDevice));
  scatter<<<1024, 256>>>(staged.as<std::uint32_t>(), buf.as<std::uint32_t>(), lines);
  CUDA_CHECK(cudaGetLastError());
  // Push the chain out of L2 by writing twice its size elsewhere.
  {
    course::DeviceBuffer flush(2 * l2_bytes);
    CUDA_CHECK(cudaMemset(flush.get(), 0, flush.bytes()));
  }
  // Warm-up: a footprint that fits in L2 is walked once whole, so the timed walks hit in L2;
  // a larger one is walked a little, and the timed walks go on into lines never read.
  const bool fits = footprint <= l2_bytes / 2;
  const long long warm = fits ? static_cast<long long>(lines) : 4096;
  std::uint32_t at = order[0];
  const Event start, stop;
  // One walk of `loads` loads from `at` on; returns its milliseconds and cycles.
  auto walk = [&](long long loads) {
    CUDA_CHECK(cudaEventRecord(start.e));
    chase<<<1, 1>>>(buf.as<std::uint32_t>(), at, loads, end.as<std::uint32_t>(),
                    cycles.as<long long>());
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(stop.e));
    CUDA_CHECK(cudaEventSynchronize(stop.e));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.e, stop.e));
    long long c = 0;
    CUDA_CHECK(cudaMemcpy(&at, end.get(), sizeof at, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&c, cycles.get(), sizeof c, cudaMemcpyDeviceToHost));
    return std::pair<double, double>{ms, static_cast<double>(c)};
  };
  walk(warm);
  std::vector<double> ns, cyc;
  for (int r = 0; r < opt.reps; ++r) {
    const auto [ms, c] = walk(opt.loads);
    ns.push_back(ms * 1e6 / static_cast<double>(opt.loads));
    cyc.push_back(c / static_cast<double>(opt.loads));
  }
  std::sort(ns.begin(), ns.end());
  std::sort(cyc.begin(), cyc.end());
  return {how == Chase::random ? "random lines" : "random lines within each page", footprint,
          opt.loads, ns[ns.size() / 2], cyc[cyc.size() / 2]};
}

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

int run(const Options& opt) {
  std::string why;
  if (!course::cuda_device_available(&why)) {
    std::cerr << "step07-latency: no usable CUDA device: " << why << "\n";
    return course::kExitCudaError;
  }
  const course::DeviceInfo dev = course::query_device();
  const auto l2 = static_cast<std::size_t>(dev.l2_bytes);
  std::printf("step07-latency on %s, driver %s, CUDA %s: %d SMs, L2 %s\n", dev.name.c_str(),
              dev.driver.c_str(), dev.cuda.c_str(), dev.sms, mib(l2).c_str());
  std::printf("one thread, %lld dependent 4-byte loads per walk, median of %d walks\n\n",
              opt.loads, opt.reps);
  std::printf("%-32s %10s %10s %12s\n", "pattern", "footprint", "ns/load", "cycles/load");
  // Footprints below the L2, near it, and far past it; the random walk also past the TLBs' reach.
  const std::size_t mb = std::size_t{1} << 20;
  const std::vector<std::pair<Chase, std::size_t>> plan = {
      {Chase::in_page, 4 * mb},    {Chase::in_page, 16 * mb},    {Chase::in_page, 64 * mb},
      {Chase::in_page, 256 * mb},  {Chase::in_page, 1024 * mb},  {Chase::random, 256 * mb},
      {Chase::random, 1024 * mb},  {Chase::random, 4096 * mb}};
  std::vector<Result> results;
  for (const auto& [how, footprint] : plan) {
    std::size_t free_bytes = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    if (footprint + footprint / 32 + 2 * l2 > free_bytes) {
      std::printf("%-32s %10s   skipped: not enough free device memory\n", "",
                  mib(footprint).c_str());
      continue;
    }
    results.push_back(measure(how, footprint, opt, l2));
    const Result& r = results.back();
    std::printf("%-32s %10s %10.1f %12.1f\n", r.pattern, mib(r.footprint).c_str(), r.ns, r.cycles);
    std::fflush(stdout);
  }
  if (!opt.csv.empty()) {
    const bool fresh = !std::ifstream(opt.csv) || std::ifstream(opt.csv).peek() == EOF;
    std::ofstream f(opt.csv, std::ios::app);
    if (fresh) {
      f << "pattern,footprint_bytes,loads,ns_per_load,cycles_per_load,sms,l2_bytes,device,driver,"
           "cuda,date\n";
    }
    char numbers[64];
    for (const Result& r : results) {
      std::snprintf(numbers, sizeof numbers, "%.1f,%.1f", r.ns, r.cycles);
      f << r.pattern << ',' << r.footprint << ',' << r.loads << ',' << numbers << ',' << dev.sms
        << ',' << l2 << ',' << dev.name << ',' << dev.driver << ',' << dev.cuda << ',' << dev.date
        << '\n';
    }
    if (!f) throw course::UsageError("--csv: cannot write '" + opt.csv + "'");
  }
  return course::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return course::exit_code_of("step07-latency", [&] {
    Options opt;
    if (!parse(argc, argv, &opt)) {
      std::cout << kHelp;
      return int{course::kExitOk};
    }
    return run(opt);
  });
}
