#include "multi_harness.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <new>
#include <sstream>

#include <unistd.h>

#include "check.cuh"
#include "device_buffer.cuh"
#include "device_info.hpp"
#include "errors.hpp"
#include "host_data.hpp"
#include "link_rate.hpp"
#include "options.hpp"
#include "report.hpp"
#include "team.hpp"
#include "stall.cuh"
#include "timer.cuh"
#include "nccl_buffer.cuh"

namespace step10 {

using course::CudaError;
using course::DeviceBuffer;
using course::UsageError;

std::string run_id(const std::string& id, int gpus, bool chunked, const std::string& chunks) {
  return id + "-" + std::to_string(gpus) + (gpus == 1 ? "gpu" : "gpus") +
         (chunked && chunks != "auto" ? "-" + chunks + "chunks" : "");
}

std::string check_block(const Layout& at, int me, course::ElemType type, std::uint64_t seed,
                        const std::uint8_t* got) {
  const std::size_t size = course::elem_size(type);
  const std::int64_t first = at.col_blocks().first(me), n = at.out_elems(me);
  std::atomic<std::int64_t> first_bad{n};
  // Output element (j, r) of this block is input element (r, first + j).
  course::parallel_for(n, [&](std::int64_t begin, std::int64_t end) {
    std::uint8_t want[16];
    for (std::int64_t i = begin; i < end && i < first_bad.load(); ++i) {
      course::pattern_element(type, (i % at.rows) * at.cols + first + i / at.rows, seed, want);
      if (std::memcmp(want, got + i * size, size) != 0) {
        std::int64_t cur = first_bad.load();
        while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
        }
        return;
      }
    }
  });
  const std::int64_t i = first_bad.load();
  if (i == n) return "";
  std::uint8_t want[16];
  course::pattern_element(type, (i % at.rows) * at.cols + first + i / at.rows, seed, want);
  return "mismatch at " + course::mismatch_at(type, first + i / at.rows, i % at.rows, at.cols,
                                              at.rows, want, got + i * size);
}

namespace {

// Guard bands around each output block: whole multiples of 256 bytes, so the block keeps
// cudaMalloc's alignment; a write just outside the block changes them.
constexpr std::size_t kGuard = 4096;
// Room left for NCCL's own buffers and the CUDA context when checking the free memory.
constexpr std::size_t kRoomForNccl = std::size_t{512} << 20;
// How long GPU g waits, times g, before a verified run: longer than any run of the tests' shapes
// takes to start writing.
constexpr double kStaggerMs = 20;

// Values every GPU contributes and every GPU gets back, through NCCL like every other byte.
class Collective {
 public:
  Collective(ncclComm_t comm, cudaStream_t s) : comm_(comm), s_(s), buf_(1 << 16) {}

  std::vector<float> max(std::vector<float> v) {
    DeviceBuffer d(v.size() * sizeof(float));
    CUDA_CHECK(cudaMemcpyAsync(d.get(), v.data(), d.bytes(), cudaMemcpyHostToDevice, s_));
    NCCL_CHECK(ncclAllReduce(d.get(), d.get(), v.size(), ncclFloat32, ncclMax, comm_, s_));
    CUDA_CHECK(cudaMemcpyAsync(v.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost, s_));
    CUDA_CHECK(cudaStreamSynchronize(s_));
    return v;
  }
  /// Whether @p flag holds on some GPU.
  bool any(bool flag) { return max({flag ? 1.0f : 0.0f})[0] > 0; }
  /// Every GPU's text (up to 63 characters), in rank order.
  std::vector<std::string> gather(const std::string& mine, int me, int gpus) {
    char own[64] = {};
    mine.copy(own, sizeof own - 1);
    DeviceBuffer d(sizeof own * gpus);
    std::vector<char> all(d.bytes());
    char* slot = d.as<char>() + sizeof own * me;  // in place: my slot of the result
    CUDA_CHECK(cudaMemcpyAsync(slot, own, sizeof own, cudaMemcpyHostToDevice, s_));
    NCCL_CHECK(ncclAllGather(slot, d.get(), sizeof own, ncclChar, comm_, s_));
    CUDA_CHECK(cudaMemcpyAsync(all.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost, s_));
    CUDA_CHECK(cudaStreamSynchronize(s_));
    std::vector<std::string> out;
    for (int g = 0; g < gpus; ++g) out.emplace_back(all.data() + g * sizeof own);
    return out;
  }
  std::uint64_t from_rank0(std::uint64_t v) {
    CUDA_CHECK(cudaMemcpyAsync(buf_.get(), &v, sizeof v, cudaMemcpyHostToDevice, s_));
    NCCL_CHECK(ncclBroadcast(buf_.get(), buf_.get(), 1, ncclUint64, 0, comm_, s_));
    CUDA_CHECK(cudaMemcpyAsync(&v, buf_.get(), sizeof v, cudaMemcpyDeviceToHost, s_));
    CUDA_CHECK(cudaStreamSynchronize(s_));
    return v;
  }

 private:
  ncclComm_t comm_;
  cudaStream_t s_;
  DeviceBuffer buf_;
};

// A stream, destroyed on every path.
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

// NCCL's all-to-all of the transpose's bytes: every piece, this GPU's own included, sent and
// received in one group, each starting on 16 bytes in the send and receive buffers (the layout
// a program that only exchanges these pieces would choose).
void all_to_all(const Part& p, ncclComm_t comm, cudaStream_t s) {
  const auto on16 = [](std::size_t b) { return (b + 15) / 16 * 16; };
  const std::int64_t mine_rows = p.at.row_blocks().count(p.me), mine_cols = p.at.col_blocks().count(p.me);
  std::size_t at_send = 0, at_recv = 0;
  NCCL_CHECK(ncclGroupStart());
  for (int g = 0; g < p.at.gpus; ++g) {
    const std::size_t out = mine_rows * p.at.col_blocks().count(g) * p.at.elem,
                      in = p.at.row_blocks().count(g) * mine_cols * p.at.elem;
    if (out) NCCL_CHECK(ncclSend(static_cast<char*>(p.send) + at_send, out, ncclUint8, g, comm, s));
    if (in) NCCL_CHECK(ncclRecv(static_cast<char*>(p.recv) + at_recv, in, ncclUint8, g, comm, s));
    at_send += on16(out);
    at_recv += on16(in);
  }
  NCCL_CHECK(ncclGroupEnd());
}

// Times @p fn with common/timer.cu, every repetition started together on every GPU (a barrier,
// untimed); a repetition's time is the slowest GPU's.
course::Timing time_all(const Context& c, Collective& all, cudaStream_t s,
                        const std::function<void(cudaStream_t)>& fn, int warmup, int reps) {
  return course::time_runs(fn, warmup, reps, s, [&](cudaStream_t t) { c.barrier(t); },
                           [&](std::vector<double>& ms) {
                             const std::vector<float> slowest = all.max(std::vector<float>(ms.begin(), ms.end()));
                             ms.assign(slowest.begin(), slowest.end());
                           });
}

// What no transpose across the GPUs can beat: the bytes that cross a link each way over the
// link's rate, or its own block read and written once at the copy's pace, whichever is longer.
struct Bound {
  double link_bytes = 0;  ///< the most any GPU sends or receives
  double link_gbps = 0;   ///< each way, theoretical; 0: unknown
  std::string link_what;  ///< how it was found, or why it is unknown
  double local_bytes = 0; ///< the largest input block plus its output block
  double copy_gbps = 0;   ///< cudaMemcpy device to device, timed in this run (read + write)
  double link_ms() const { return link_gbps > 0 ? link_bytes / link_gbps / 1e6 : 0; }
  double local_ms() const { return copy_gbps > 0 ? local_bytes / copy_gbps / 1e6 : 0; }
  double ms() const { return std::max(link_ms(), local_ms()); }
};

void print_table(std::ostream& os, const course::Report& r, const Layout& at,
                 const std::string& team, int nccl_version, const Bound& b, double moved) {
  const course::Problem& p = r.problem;
  os << r.step << " - " << r.title << "\n"
     << p.describe() << " over " << team << " (" << at.row_blocks().count(0)
     << (at.rows % at.gpus ? " or fewer" : "") << " rows each), " << std::fixed
     << std::setprecision(1) << moved / 1e6 << " MB sent and received per GPU"
     << (at.gpus == 1 ? " (one GPU: its block read and written)" : "") << "\n"
     << r.device.name << ", driver " << r.device.driver << ", CUDA " << r.device.cuda << ", NCCL "
     << nccl_version / 10000 << "." << nccl_version / 100 % 100 << "." << nccl_version % 100
     << "\nbound " << std::setprecision(3) << b.ms() << " ms: the larger of " << b.link_bytes / 1e6
     << " MB each way over a link of ";
  if (b.link_gbps > 0) {
    os << std::setprecision(0) << b.link_gbps << " GB/s (" << b.link_what << "; "
       << std::setprecision(3) << b.link_ms() << " ms)";
  } else {
    os << "unknown rate (" << b.link_what << ": left out)";
  }
  os << " and " << std::setprecision(1) << b.local_bytes / 1e6 << " MB read and written at the copy's "
     << std::setprecision(0) << b.copy_gbps << " GB/s (" << std::setprecision(3) << b.local_ms()
     << " ms, cudaMemcpy timed here)\n\n";
  course::print_rows(os, r.rows, {"", "chunks", "GB/s/GPU", "% a2a", "% bound"});
}

// Everything after the team is formed; every process runs the same collective calls in the
// same order. Returns the exit code.
int measure(Team& team, const course::StepInfo& step, const course::Options& opt,
            std::vector<Method>& methods) {
  const course::Problem& p = opt.problem;
  const bool lead = team.rank() == 0;
  const int me = team.rank(), G = team.size();
  const std::size_t elem = course::elem_size(p.type);
  const std::string& chunks = opt.get("chunks");
  const Layout at{p.rows, p.cols, elem, G,
                  chunks == "auto" ? auto_chunks(p.rows, p.cols, elem, G) : std::stoi(chunks)};
  const std::size_t in_bytes = at.in_elems(me) * elem, out_bytes = at.out_elems(me) * elem;

  Stream stream;
  const cudaStream_t s = stream.s;
  Collective all(team.comm(), s);

  // Room on every GPU for its blocks and the two staging buffers, before allocating them.
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const double needed = 2.0 * in_bytes + 2.0 * out_bytes + 2 * kGuard + kRoomForNccl;
  const bool short_here = needed > static_cast<double>(free_bytes);
  if (all.any(short_here)) {
    if (short_here) {
      std::cerr << step.binary << ": --rows x --cols: " << p.describe() << " over "
                << gpus_text(G) << " needs " << course::gib(needed) << " of device memory on GPU " << me
                << " (its blocks, two staging buffers, NCCL's), " << course::gib(free_bytes)
                << " is free\n";
    }
    return course::kExitBadArgument;
  }

  // This GPU's rows of the input, from the same seed on every GPU.
  const std::uint64_t seed =
      all.from_rank0(opt.seed_given ? opt.seed : lead ? course::fresh_seed() : 0);
  if (lead) {
    std::cerr << "preparing " << p.describe() << " over " << gpus_text(G) << " (seed " << seed
              << ")...\n";
  }
  // The output block with its guard bands, as large on every GPU (the largest block's size).
  std::size_t out_alloc = 0;
  for (int g = 0; g < G; ++g) out_alloc = std::max<std::size_t>(out_alloc, at.out_elems(g) * elem);
  out_alloc += 2 * kGuard;
  NcclBuffer out(out_alloc);
  // Room past the blocks for pieces moved onto 16 bytes (the receive buffer's, the all-to-all's).
  const std::size_t slack = 16 * (static_cast<std::size_t>(G) * at.chunks + 1);
  DeviceBuffer in(in_bytes), send(in_bytes + slack), recv(at.recv_elems(me) * elem + slack),
      scratch(sizeof(float));
  {
    auto h_in = course::host_bytes(in_bytes);
    course::fill_pattern(p.type, h_in.get(), at.in_elems(me), seed, at.row_blocks().first(me) * at.cols);
    CUDA_CHECK(cudaMemcpy(in.get(), h_in.get(), in_bytes, cudaMemcpyHostToDevice));
  }
  CUDA_CHECK(cudaMemset(scratch.get(), 0, sizeof(float)));
  // A copy from pageable memory may return before it lands, and the streams below do not wait
  // for the default stream.
  CUDA_CHECK(cudaDeviceSynchronize());
  // Every GPU's bus id and machine: which CUDA device each one is here (for peer access), and
  // whether they share one machine (for the link's rate).
  char bus[64] = {}, host[64] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, team.device()));
  gethostname(host, sizeof host - 1);
  const std::vector<std::string> buses = all.gather(bus, me, G), hosts = all.gather(host, me, G);
  const bool one_machine = std::all_of(hosts.begin(), hosts.end(), [&](const std::string& h) { return h == hosts[0]; });
  std::vector<int> devices(G, -1);
  for (int g = 0; g < G; ++g) {
    if (hosts[g] != host || cudaDeviceGetByPCIBusId(&devices[g], buses[g].c_str()) != cudaSuccess) {
      devices[g] = -1;
      cudaGetLastError();  // not visible here: an answer, not an error to keep
    }
  }
  const Context ctx{at,         me,         team.comm(), in.get(),    out.as<char>() + kGuard,
                    send.get(), recv.get(), out.get(),   kGuard,      out.bytes(),
                    scratch.as<float>(),    devices};
  std::unique_ptr<std::uint8_t[]> h_out;
  if (opt.verify) h_out = course::host_bytes(out.bytes());

  course::Report report;
  report.step = step.binary;
  report.title = step.title;
  report.problem = p;
  report.device = course::query_device();
  // GB/s count the bytes a GPU sends and receives (on average), and % bound is against the bound
  // above. With one GPU nothing crosses a link: its block read and written.
  Bound bound;
  double crossing = 0;  // elements that change GPU, all GPUs together
  for (int g = 0; g < G; ++g) {
    const double sent = static_cast<double>(at.in_elems(g) - at.row_blocks().count(g) * at.col_blocks().count(g)) * elem,
                 got = static_cast<double>(at.out_elems(g) - at.row_blocks().count(g) * at.col_blocks().count(g)) * elem;
    crossing += sent;
    bound.link_bytes = std::max({bound.link_bytes, sent, got});
    bound.local_bytes = std::max(bound.local_bytes, static_cast<double>(at.in_elems(g) + at.out_elems(g)) * elem);
  }
  {
    // The slowest GPU's links set the bound; GPUs on other machines meet the network, whose rate
    // NVML does not give.
    std::vector<std::string> others;
    for (int g = 0; g < G; ++g) if (g != me) others.push_back(buses[g]);
    const LinkRate r = !one_machine ? LinkRate{0, "GPUs on other machines: the network's rate"}
                                    : link_rate(query_links(buses[me], others));
    const double slowest = G > 1 ? -all.max(std::vector<float>{-static_cast<float>(r.gbps)})[0] : 0;
    bound.link_gbps = slowest;
    bound.link_what = G == 1 ? "one GPU: no link" : slowest == static_cast<float>(r.gbps) ? r.what : "the slowest GPU's";
  }
  const double moved = G == 1 ? bound.local_bytes : 2 * crossing / G;  // per GPU
  auto rate = [&](course::ResultRow* row) {
    row->gbps = moved / (row->median_ms * 1e-3) / 1e9;
    row->pct_peak = 100.0 * bound.ms() / row->median_ms;
  };
  const std::string on = ", " + gpus_text(G);

  if (lead) std::cerr << "timing a copy of each GPU's block (the bound's copy pace)...\n";
  const course::Timing local = time_all(
      ctx, all, s,
      [&](cudaStream_t t) { CUDA_CHECK(cudaMemcpyAsync(send.get(), in.get(), in_bytes, cudaMemcpyDeviceToDevice, t)); },
      opt.warmup, opt.reps);
  // The slowest GPU's time for its block; the largest block sets it.
  bound.copy_gbps = 2.0 * static_cast<double>(at.in_elems(0) * elem) / (local.median_ms * 1e-3) / 1e9;

  if (lead) std::cerr << "timing NCCL's all-to-all...\n";
  const Part whole = ctx.part(1);
  course::ResultRow ceiling;
  ceiling.id = run_id("a2a", G, false, "");
  ceiling.kernel = "copy: NCCL all-to-all" + on;
  ceiling.block = ceiling.tile = "-";
  const course::Timing ct = time_all(
      ctx, all, s, [&](cudaStream_t t) { all_to_all(whole, team.comm(), t); }, opt.warmup,
      opt.reps);
  ceiling.median_ms = ct.median_ms;
  ceiling.min_ms = ct.min_ms;
  ceiling.verified = "-";
  rate(&ceiling);
  report.copy_gbps = ceiling.gbps;
  ceiling.pct_copy = 100.0;
  report.rows.push_back(ceiling);

  bool failed = false;
  std::vector<std::string> notes;
  for (Method& m : methods) {
    if (lead) std::cerr << "verifying and timing " << m.name << "...\n";
    course::ResultRow row;
    row.id = run_id(m.id, G, m.chunked, chunks);
    row.kernel = m.name + on;
    row.block = "-";
    row.tile = m.chunked ? std::to_string(at.chunks) : "-";
    const std::string why = m.prepare ? m.prepare(ctx) : "";
    if (all.any(!why.empty())) {
      row.verified = "refused";
      if (lead) notes.push_back(m.name + ": " + (why.empty() ? "refused on another GPU" : why));
      report.rows.push_back(row);
      if (m.release) m.release();
      continue;
    }
    auto run = [&](cudaStream_t t) { m.run(ctx, t); };
    if (m.reference) {
      row.verified = "-";
    } else if (opt.verify) {
      // Every buffer the method may read or write is poisoned, the staging buffers included, so
      // that a copy which races its pack reads poison instead of an earlier method's bytes. The
      // method gets no barrier from here: after one that lines the GPUs up, GPU g waits g times
      // kStagger before poisoning, so that a method which writes into another GPU's output
      // before that GPU is ready (no entry barrier), or lets a GPU read its output before the
      // others' writes land (no exit barrier), fails this check every time.
      ctx.barrier(s);
      CUDA_CHECK(stall(kStaggerMs * me, s));
      CUDA_CHECK(cudaMemsetAsync(out.get(), course::kPoisonByte, out.bytes(), s));
      CUDA_CHECK(cudaMemsetAsync(send.get(), course::kPoisonByte, send.bytes(), s));
      CUDA_CHECK(cudaMemsetAsync(recv.get(), course::kPoisonByte, recv.bytes(), s));
      run(s);
      CUDA_CHECK(cudaStreamSynchronize(s));
      CUDA_CHECK(cudaMemcpy(h_out.get(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
      ctx.barrier(s);  // no GPU poisons for the next method while another still reads
      CUDA_CHECK(cudaStreamSynchronize(s));
      std::string bad;
      for (std::size_t i = 0; i < kGuard && bad.empty(); ++i) {
        if (h_out[i] != course::kPoisonByte) bad = "wrote before the start of its output block";
        if (h_out[kGuard + out_bytes + i] != course::kPoisonByte) bad = "wrote past the end of its output block";
      }
      if (bad.empty()) bad = check_block(at, me, p.type, seed, h_out.get() + kGuard);
      if (!bad.empty()) {
        std::cerr << step.binary << ": GPU " << me << ": " << row.kernel << ": " << bad
                  << " (seed " << seed << ")\n";
      }
      const bool any = all.any(!bad.empty());
      row.verified = any ? "FAILED" : "yes";
      failed = failed || any;
    } else {
      row.verified = "skipped";
    }
    const course::Timing t = time_all(ctx, all, s, run, opt.warmup, opt.reps);
    row.median_ms = t.median_ms;
    row.min_ms = t.min_ms;
    rate(&row);
    row.pct_copy = 100.0 * ceiling.median_ms / row.median_ms;
    report.rows.push_back(row);
    ctx.barrier(s);  // nobody releases what another GPU may still be writing into
    CUDA_CHECK(cudaStreamSynchronize(s));
    if (m.release) m.release();
  }
  ctx.barrier(s);  // nobody frees a buffer another GPU may still have open
  CUDA_CHECK(cudaStreamSynchronize(s));

  if (lead) {
    int version = 0;
    NCCL_CHECK(ncclGetVersion(&version));
    std::cout << "\n";
    print_table(std::cout, report, at, team.describe(), version, bound, moved);
    if (G == 1) {
      std::cout << "note: one GPU: the whole matrix stays on it (step 08's transpose, no "
                   "transfers); the all-to-all is NCCL copying it to itself\n";
    }
    for (const std::string& n : notes) std::cout << "note: " << n << "\n";
    // The targets are against the fastest of NCCL's all-to-alls, plain or on symmetric windows.
    const course::ResultRow* best = nullptr;
    for (const course::ResultRow& row : report.rows)
      if (row.id.rfind("a2a", 0) == 0 && row.verified != "refused" && (!best || row.median_ms < best->median_ms)) best = &row;
    std::ostringstream pct;
    for (const course::ResultRow& row : report.rows)
      if (row.verified == "yes") pct << (pct.tellp() > 0 ? ", " : "") << row.id << " " << std::fixed << std::setprecision(1) << 100.0 * best->median_ms / row.median_ms;
    if (G > 1 && best && pct.tellp() > 0) {
      std::cout << "note: % of the fastest NCCL all-to-all (" << best->id << ", " << std::setprecision(4) << best->median_ms << " ms): " << pct.str() << "\n";
    }
    if (!opt.csv.empty()) course::append_csv(opt.csv, report);
  }
  return failed ? course::kExitVerifyFailed : course::kExitOk;
}

// --list: what the benchmark and the facts' checks read, one fact a line, tab-separated, as
// every step prints it: each element type of the course (its bytes; whether this binary takes
// it), then the kernels (id, name) for these options.
void list(const course::StepInfo& step, const std::vector<Method>& methods, int gpus,
          const std::string& chunks) {
  std::cout << course::list_types(step);
  for (const Method& m : methods) {
    if (m.hidden) continue;
    std::cout << "kernel\t" << run_id(m.id, gpus, m.chunked, chunks) << '\t' << m.name << ", "
              << gpus_text(gpus) << '\n';
  }
}

// The GPUs a run with --gpus all would use: mpirun's processes, else the visible GPUs, else 1.
int gpus_here() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::max(1, std::atoi(v));
  }
  std::string why;
  int count = 0;
  if (course::cuda_device_available(&why) && cudaGetDeviceCount(&count) == cudaSuccess) {
    return std::max(1, count);
  }
  return 1;
}

}  // namespace

int run_multi(int argc, char** argv, const std::string& binary, const std::string& title,
              const std::string& description, std::vector<Method> (*make)()) {
  course::StepInfo step;
  step.binary = binary;
  step.title = title;
  step.description = description;
  step.types = course::all_elem_types();  // every type, float32 (the default) first
  step.extras.push_back({"gpus", {"all", "1", "2", "3", "4", "5", "6", "7", "8"},
                         "GPUs of this machine to use, one process each (under mpirun: "
                         "leave it out, or give mpirun's -np)"});
  step.extras.push_back({"chunks", {"auto", "1", "2", "4", "8", "16", "32", "64"},
                         "chunks of rows per GPU in the pipeline (auto: one per 128 MiB, "
                         "4 to 32)"});
  // NVLink SHARP (multicast) is for reductions; an all-to-all has no use for it, and setting it
  // up takes memory and a fabric manager. Off before NCCL starts, here and in every copy.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  Team team(argc, argv);
  const bool lead = team.rank() == 0;
  bool joined = false;
  try {
    const course::Options opt =
        course::parse_options(step, std::vector<std::string>(argv + 1, argv + argc));
    if (opt.help) {
      if (lead) std::cout << course::usage(step);
      return course::kExitOk;
    }
    const std::string& g = opt.get("gpus");
    if (opt.list) {
      if (lead) list(step, make(), g == "all" ? gpus_here() : std::stoi(g), opt.get("chunks"));
      return course::kExitOk;
    }
    // --only: the methods with these ids (comma-separated; their own, or as the data has them),
    // else those whose name holds the text. A hidden method (a test's fault) runs only by its id.
    std::vector<std::string> wanted;
    for (std::size_t at = 0; at <= opt.only.size();) {
      const std::size_t comma = std::min(opt.only.find(',', at), opt.only.size());
      if (comma > at) wanted.push_back(opt.only.substr(at, comma - at));
      at = comma + 1;
    }
    // "direct" or "direct-2gpus", not "direct-at-once": after the id, only the GPUs and chunks.
    const auto is = [](const Method& m, const std::string& w) {
      return m.id == w || (w.rfind(m.id + "-", 0) == 0 && w.size() > m.id.size() + 1 &&
                           std::isdigit(static_cast<unsigned char>(w[m.id.size() + 1])));
    };
    std::vector<Method> all = make(), methods;
    bool by_id = false;
    for (const Method& m : all)
      for (const std::string& w : wanted) by_id = by_id || is(m, w);
    for (Method& m : all) {
      bool named = false;
      for (const std::string& w : wanted)
        named = named || (by_id ? is(m, w) : !m.hidden && m.name.find(w) != std::string::npos);
      if ((wanted.empty() && !m.hidden) || named) methods.push_back(std::move(m));
    }
    if (methods.empty()) {
      throw UsageError("--only: no kernel of " + step.binary + " matches '" + opt.only + "'");
    }
    if (lead) course::check_csv(opt.csv);
    team.join(g == "all" ? 0 : std::stoi(g), step.binary);
    joined = true;
    return team.finish(measure(team, step, opt, methods));
  } catch (const UsageError& e) {
    // Every process parses the same arguments: one message is enough.
    if (lead || team.start() == Start::child) std::cerr << step.binary << ": " << e.what() << "\n";
    return team.stop(course::kExitBadArgument);
  } catch (const CudaError& e) {
    // Before the team is formed every process finds the same (no device): rank 0 says it.
    if (joined || lead) {
      std::cerr << step.binary << (joined && team.size() > 1 ? ": GPU " + std::to_string(team.rank()) : "")
                << ": " << e.what() << "\n";
    }
    return team.stop(course::kExitCudaError);
  } catch (const std::bad_alloc&) {
    std::cerr << step.binary << ": not enough host memory for this size\n";
    return team.stop(course::kExitBadArgument);
  }
}

}  // namespace step10
