// step08_patterns, a tool of step 08's lab: the scalar kernel's read pattern and write pattern,
// each timed alone against a plain linear stream of the same bytes, then the whole transpose
// against the copy; on the launcher's tile order and on groups of 8 tile rows. LAB.md ("What
// the last points are") reads its table.
//
//   make step08_patterns && ./step08_patterns --type f64 --rows 16384 --cols 16384
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "check.cuh"
#include "device_buffer.cuh"
#include "device_info.hpp"
#include "harness.cuh"
#include "patterns.cuh"
#include "references.cuh"
#include "timer.cuh"

namespace {

/// The short group, for contrast with the launcher's tall one: 8 tile rows, i.e. a patch of the
/// blocks in flight 8 tiles tall and 128 wide, that reads long pieces of input rows and writes
/// short pieces of output rows.
constexpr std::uint32_t kShortGroup = 8;

/// One line of the table: a pattern, the group height of its tile order (0: a linear stream),
/// its median time, the bytes it moves, and the time of the stream it is compared with.
struct Line {
  std::string pattern;
  std::uint32_t group;
  double ms;
  double bytes;
  double stream_ms;
};

template <int S>
std::vector<Line> measure(const course::Options& opt, const void* in, void* out, unsigned* sink) {
  using step08::Phase;
  const course::Problem& p = opt.problem;
  const std::int64_t rows = p.rows, cols = p.cols;
  constexpr int T = step08::scalar_tile(S);
  auto median = [&](const std::function<cudaError_t(cudaStream_t)>& launch) {
    return course::time_runs([&](cudaStream_t s) { CUDA_CHECK(launch(s)); }, opt.warmup, opt.reps)
        .median_ms;
  };
  const double bytes = static_cast<double>(p.bytes());
  const std::int64_t vectors = static_cast<std::int64_t>(p.bytes() / 16);  // whole ones
  const auto vblocks = static_cast<unsigned>((vectors + 255) / 256);
  std::cerr << "timing the linear streams...\n";
  const double read_ms = median([&](cudaStream_t s) {
    step08::read_stream<<<vblocks, 256, 0, s>>>(static_cast<const uint4*>(in), vectors, sink);
    return cudaGetLastError();
  });
  const double write_ms = median([&](cudaStream_t s) {
    step08::write_stream<<<vblocks, 256, 0, s>>>(static_cast<uint4*>(out), vectors);
    return cudaGetLastError();
  });
  const double copy_ms = std::min(
      median([&](cudaStream_t s) { return course::launch_memcpy(in, out, p.bytes(), s); }),
      median([&](cudaStream_t s) { return course::launch_copy_kernel(in, out, p.bytes(), s); }));
  std::vector<Line> lines = {{"reads: linear stream", 0, read_ms, bytes, read_ms},
                             {"writes: linear stream", 0, write_ms, bytes, write_ms},
                             {"copy ceiling: linear", 0, copy_ms, 2 * bytes, copy_ms}};

  const bool cut =
      !step08::rows_start_on(32, S, rows, reinterpret_cast<std::uintptr_t>(out));
  const std::uint32_t launcher_group = step08::make_grid(rows, cols, T, T, S).group_rows;
  std::vector<std::uint32_t> groups = {launcher_group};
  if (kShortGroup < launcher_group) groups.push_back(kShortGroup);
  for (std::uint32_t g : groups) {
    std::cerr << "timing the tile order with groups of " << g << " tile rows...\n";
    const step08::TileGrid grid = step08::grid_with_group(rows, cols, S, g);
    lines.push_back({"reads: tile order (load phase alone)", g, median([&](cudaStream_t s) {
                       return step08::launch_phase<S, Phase::load>(grid, in, out, rows, cols,
                                                                   cut, sink, s);
                     }), bytes, read_ms});
    lines.push_back({"writes: tile order (store phase alone)", g, median([&](cudaStream_t s) {
                       return step08::launch_phase<S, Phase::store>(grid, in, out, rows, cols,
                                                                    cut, sink, s);
                     }), bytes, write_ms});
    lines.push_back({"transpose: both phases", g, median([&](cudaStream_t s) {
                       return step08::launch_scalar_on<S, T>(grid, in, out, rows, cols, cut, s);
                     }), 2 * bytes, copy_ms});
  }
  return lines;
}

double gbps(const Line& l) { return l.bytes / (l.ms * 1e-3) / 1e9; }
double pct_stream(const Line& l) { return 100.0 * l.stream_ms / l.ms; }

void print(const course::Options& opt, const course::DeviceInfo& dev,
           const std::vector<Line>& lines) {
  std::printf("step08_patterns: %s on %s, driver %s, CUDA %s\n", opt.problem.describe().c_str(),
              dev.name.c_str(), dev.driver.c_str(), dev.cuda.c_str());
  std::printf("group: tile rows per group of the tile order ('-' for a linear stream); "
              "%% of stream: against the linear stream of the same kind (reads, writes, copy)\n\n");
  std::printf("%-40s %6s %10s %8s %12s\n", "pattern", "group", "median ms", "GB/s", "% of stream");
  std::printf("%s\n", std::string(80, '-').c_str());
  for (const Line& l : lines) {
    const std::string group = l.group ? std::to_string(l.group) : "-";
    std::printf("%-40s %6s %10.4f %8.0f %12.1f\n", l.pattern.c_str(), group.c_str(), l.ms, gbps(l),
                pct_stream(l));
  }
}

void append_csv(const course::Options& opt, const course::DeviceInfo& dev,
                const std::vector<Line>& lines) {
  const bool fresh = !std::ifstream(opt.csv) || std::ifstream(opt.csv).peek() == EOF;
  std::ofstream f(opt.csv, std::ios::app);
  if (fresh) {
    f << "type,rows,cols,pattern,group_rows,median_ms,gbps,pct_stream,device,driver,cuda,date\n";
  }
  char numbers[96];
  for (const Line& l : lines) {
    std::snprintf(numbers, sizeof numbers, "%.5g,%.1f,%.2f", l.ms, gbps(l), pct_stream(l));
    f << course::elem_name(opt.problem.type) << ',' << opt.problem.rows << ','
      << opt.problem.cols << ',' << l.pattern << ',' << (l.group ? std::to_string(l.group) : "-")
      << ',' << numbers << ',' << dev.name << ',' << dev.driver << ',' << dev.cuda << ','
      << dev.date << '\n';
  }
  if (!f) throw course::UsageError("--csv: cannot write '" + opt.csv + "'");
}

/// The kernel numbers its tiles on grid.x; checked before any device is looked for, so that a
/// shape it cannot take gets exit 2 on any machine.
void check_tiles(const course::Options& opt) {
  const course::Problem& p = opt.problem;
  const int t = step08::scalar_tile(course::elem_size(p.type));
  if (step08::blocks_for(p.rows, p.cols, {t, t}) < 0) {
    throw course::UsageError("--rows x --cols: " + p.describe() + " needs more than 2^31-1 tiles");
  }
}

int run(const course::Options& opt) {
  const course::Problem& p = opt.problem;
  const course::DeviceInfo dev = course::query_device();
  course::DeviceBuffer in(p.bytes()), out(p.bytes()), sink(sizeof(unsigned));
  CUDA_CHECK(cudaMemset(in.get(), 0x5A, p.bytes()));  // the values do not matter, only the bytes
  const auto lines = course::elem_size(p.type) == 4
                         ? measure<4>(opt, in.get(), out.get(), sink.as<unsigned>())
                         : measure<8>(opt, in.get(), out.get(), sink.as<unsigned>());
  std::cout << "\n";
  print(opt, dev, lines);
  if (!opt.csv.empty()) append_csv(opt, dev, lines);
  return course::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  course::StepInfo info;
  info.binary = "step08_patterns";
  info.title = "the transpose's read and write patterns, timed apart";
  info.description =
      "Step 08's scalar kernel is a load phase (input rows into a shared tile) and a store phase\n"
      "(tile columns out as output rows). This times each phase alone, in the kernel's tile\n"
      "order, against a linear stream of the same bytes (reads only, writes only), then the\n"
      "whole transpose against the copy: first with the launcher's groups of tile rows, then\n"
      "with groups of 8. It checks no output: the phases alone are not transposes. The lab's\n"
      "tests (step08-lab_test) check that the two phases move exactly the bytes the transpose\n"
      "moves, and ./step08 and its tests check the transpose itself.";
  info.types = {course::ElemType::f64, course::ElemType::f32};
  info.default_rows = 16384;
  info.default_cols = 16384;
  // run_main takes no --only, --seed or --no-verify (there is no kernel list to choose from and
  // nothing to verify) and leaves them out of --help.
  return course::run_main(argc, argv, info, run, check_tiles);
}
