// The grader's worker: runs a plan (judge/protocol.hpp) through one exercise's functions and
// writes only data for the judge. Built (worker_targets.cmake) with a submission's objects, or
// with GRADER_PROBE and the course's own kernels: the yardstick of the timed runs.
//
//   worker PLAN DATA [READY_FD]
// The plan and the data channel are files, named the same way in every run (a run under
// compute-sanitizer included). Timed runs: the worker writes "ready" on READY_FD and reads the
// grader's "go" line on stdin. Exit codes: 0 done, 2 bad arguments, 3 a CUDA error ended the run.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

#include "cpu_checks.hpp"
#include "host_data.hpp"
#include "protocol.hpp"

#if !defined(GRADER_PROBE)
#include "launch_watch.hpp"
#endif

#if defined(GRADER_PROBE)
#include "probe_kernels.cuh"
#elif GRADER_EXERCISE == 1
#include "ex01.cuh"
#elif GRADER_EXERCISE == 2
#include "ex02.cuh"
#elif GRADER_EXERCISE == 3
#include "ex03.cuh"
#else
#error "GRADER_EXERCISE must be 1, 2 or 3"
#endif

namespace {

constexpr int kGoFd = 0;
int g_data_fd = -1, g_ready_fd = -1;

// The worker's own CUDA check and buffer (not common/'s: the grader's trusted side depends on as
// little of the course's harness as it can).
struct CudaFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t s, const char* call) {
  if (s != cudaSuccess) {
    throw CudaFailure(std::string("CUDA error: ") + call + ": " + cudaGetErrorName(s) + " (" +
                      cudaGetErrorString(s) + ")");
  }
}
#define CUDA_CHECK(call) check((call), #call)

class Buffer {
 public:
  explicit Buffer(std::size_t bytes) : bytes_(bytes ? bytes : 1) {
    CUDA_CHECK(cudaMalloc(&ptr_, bytes_));
  }
  ~Buffer() { cudaFree(ptr_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

// ---- the launchers and functions of this build ----

#if defined(GRADER_PROBE)
constexpr bool kInPlace = GRADER_PROBE_INPLACE != 0;
cudaError_t launch(const float* in, float* out, std::int64_t rows, std::int64_t cols) {
  return grader_probe::transpose(in, out, rows, cols);
}
cudaError_t launch_inplace(float* data, std::int64_t n) {
  return grader_probe::transpose_inplace(data, n);
}
#elif GRADER_EXERCISE == 3
constexpr bool kInPlace = true;
cudaError_t launch(const float*, float*, std::int64_t, std::int64_t) {
  return cudaErrorInvalidValue;
}
cudaError_t launch_inplace(float* data, std::int64_t n) {
  return ex03::transpose_inplace(data, n, nullptr);
}
#else
constexpr bool kInPlace = false;
#if GRADER_EXERCISE == 1
namespace ex = ::ex01;
#else
namespace ex = ::ex02;
#endif
cudaError_t launch(const float* in, float* out, std::int64_t rows, std::int64_t cols) {
  return ex::transpose(in, out, rows, cols, nullptr);
}
cudaError_t launch_inplace(float*, std::int64_t) { return cudaErrorInvalidValue; }
#endif

#if GRADER_EXERCISE == 2 && !defined(GRADER_PROBE)
}  // namespace
namespace grader_worker {
cudaError_t swizzle_on_device(int* host_values);  // swizzle_device.cu
}
namespace {
#endif

// ---- the data channel ----

void write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) std::_Exit(5);  // the channel is gone: nothing more can be reported
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void record(long item, const char* tag, const void* data, std::size_t n) {
  char header[96];
  const int len = std::snprintf(header, sizeof header, "@%ld %s %zu\n", item, tag, n);
  write_all(g_data_fd, header, static_cast<std::size_t>(len));
  if (n) write_all(g_data_fd, data, n);
}

void record_text(long item, const char* tag, const std::string& text) {
  record(item, tag, text.data(), text.size());
}

void done(long item) { record(item, "done", nullptr, 0); }

/// Records a launcher's return code other than cudaSuccess (the judge names it); true if so.
bool launch_refused(long item, cudaError_t s) {
  if (s == cudaSuccess) return false;
  cudaGetLastError();
  record_text(item, "status", std::to_string(static_cast<int>(s)) + " " + cudaGetErrorName(s));
  return true;
}

/// After a launch: waits for the device; a CUDA error here ends the run (the context is lost).
void finish_launch(long item, const std::string& where) {
  const cudaError_t s = cudaDeviceSynchronize();
  if (s != cudaSuccess) {
    record_text(item, "cuda", "CUDA error after the launch on " + where + ": " +
                                  cudaGetErrorName(s) + " (" + cudaGetErrorString(s) + ")");
    std::_Exit(3);
  }
}

std::vector<std::uint8_t> pattern(std::int64_t elements, std::uint64_t seed) {
  std::vector<std::uint8_t> v(static_cast<std::size_t>(elements) * 4);
  course::fill_pattern(course::ElemType::f32, v.data(), elements, seed);
  return v;
}

// ---- plan items ----

void run_matrix(long item, std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                bool in_place) {
  const std::int64_t n = rows * cols;
  const std::size_t bytes = static_cast<std::size_t>(n) * 4;
  const std::vector<std::uint8_t> in = pattern(n, seed);
  Buffer region(bytes + 2 * grader::kGuard);
  std::uint8_t* matrix = region.as<std::uint8_t>() + grader::kGuard;
  CUDA_CHECK(cudaMemset(region.get(), grader::kPoison, region.bytes()));
  Buffer src(in_place ? 1 : bytes);
  CUDA_CHECK(cudaMemcpy(in_place ? matrix : src.get(), in.data(), bytes, cudaMemcpyHostToDevice));
#if !defined(GRADER_PROBE)
  grader_watch::start();
#endif
  const cudaError_t s = in_place ? launch_inplace(reinterpret_cast<float*>(matrix), rows)
                                 : launch(src.as<float>(), reinterpret_cast<float*>(matrix), rows,
                                          cols);
#if !defined(GRADER_PROBE)
  record_text(item, "launches", grader_watch::stop());
#endif
  if (launch_refused(item, s)) return;
  finish_launch(item, std::to_string(rows) + " x " + std::to_string(cols));
  std::vector<std::uint8_t> out(region.bytes());
  CUDA_CHECK(cudaMemcpy(out.data(), region.get(), out.size(), cudaMemcpyDeviceToHost));
  record(item, "region", out.data(), out.size());
}

#if !defined(GRADER_PROBE)
/// Answers recorded as the checks ask for them (protocol.hpp's codec), in chunks.
struct Recorder {
  long item;
  std::string buf;
  std::int64_t prev = 0;
  std::int64_t put(std::int64_t v) {
    grader::put_value(buf, v, prev);
    if (buf.size() >= (8u << 20)) flush();
    return v;
  }
  void flush() {
    if (!buf.empty()) record(item, "values", buf.data(), buf.size());
    buf.clear();
  }
};

grader::Functions recording(Recorder& r) {
  grader::Functions f;
#if GRADER_EXERCISE == 3
  f.blocks_for_square = [&r](std::int64_t n) { return r.put(ex03::blocks_for(n)); };
  f.pair_of_block = [&r](std::int64_t n, std::int64_t b) {
    const ex03::TilePair p = ex03::pair_of_block(n, b);
    r.put(p.row);
    r.put(p.col);
    return grader::checks::Pair{p.row, p.col};
  };
  f.element_index = [&r](std::int64_t n, std::int64_t tr, std::int64_t tc, int i, int j) {
    return r.put(ex03::element_index(n, tr, tc, i, j));
  };
  f.launch_square = [&r](std::int64_t n) {
    const cudaError_t s = ex03::transpose_inplace(nullptr, n, nullptr);
    cudaGetLastError();
    return r.put(static_cast<std::int64_t>(s));
  };
#else
  f.blocks_for = [&r](std::int64_t rows, std::int64_t cols) {
    return r.put(ex::blocks_for(rows, cols));
  };
  f.input_index = [&r](std::int64_t rows, std::int64_t cols, std::int64_t b, int i, int j) {
    return r.put(ex::input_index(rows, cols, b, i, j));
  };
  f.output_index = [&r](std::int64_t rows, std::int64_t cols, std::int64_t b, int i, int j) {
    return r.put(ex::output_index(rows, cols, b, i, j));
  };
  f.launch = [&r](std::int64_t rows, std::int64_t cols) {
    const cudaError_t s = ex::transpose(nullptr, nullptr, rows, cols, nullptr);
    cudaGetLastError();
    return r.put(static_cast<std::int64_t>(s));
  };
#if GRADER_EXERCISE == 2
  f.swizzle = [&r](int row, int col) { return r.put(ex02::swizzle_on_host(row, col)); };
#endif
#endif
  return f;
}

void run_check(long item, const std::string& name) {
  Recorder r{item};
  bool known = false;
  grader::run_check(GRADER_EXERCISE, name, recording(r), &known);  // only the answers matter
  r.flush();
  if (!known) record_text(item, "error", "no check named " + name);
}
#else
void run_check(long item, const std::string&) {
  record_text(item, "error", "the probe runs no checks");
}
#endif

void run_swizzle(long item, bool gpu) {
#if GRADER_EXERCISE == 2 && !defined(GRADER_PROBE)
  std::vector<std::int32_t> host(1024), device(1024);
  for (int k = 0; k < 1024; ++k) host[k] = ex02::swizzle_on_host(k / 32, k % 32);
  record(item, "swizzle_host", host.data(), 4096);
  if (!gpu) {
    record_text(item, "nodev", "no CUDA device");
    return;
  }
  std::vector<int> values(1024);
  const cudaError_t s = grader_worker::swizzle_on_device(values.data());
  if (s != cudaSuccess) {
    record_text(item, "cuda", std::string("CUDA error evaluating ex02::swizzle on the device: ") +
                                  cudaGetErrorName(s));
    std::_Exit(3);
  }
  for (int k = 0; k < 1024; ++k) device[k] = values[k];
  record(item, "swizzle_device", device.data(), 4096);
#else
  (void)gpu;
  record_text(item, "error", "this exercise has no swizzle");
#endif
}

// Masks every word of the output of call @p k (protocol.hpp): the next call gets a matrix that
// no earlier call has seen.
__global__ void mask_words(std::uint32_t* words, std::int64_t count, std::uint32_t k) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       p < count; p += stride) {
    words[p] ^= grader::mask_of(k, static_cast<std::uint64_t>(p));
  }
}

std::string read_line(int fd) {
  std::string line;
  char c;
  while (line.size() < 200) {
    const ssize_t r = ::read(fd, &c, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0 || c == '\n') break;
    line.push_back(c);
  }
  return line;
}

/// REPS chained calls: the output of one (masked) is the input of the next. Timed from outside
/// by the grader, between its "go" and this process's exit.
void run_speed(long item, std::int64_t rows, std::int64_t cols, std::uint64_t seed,
               std::int64_t reps) {
  const std::int64_t n = rows * cols;
  const std::size_t bytes = static_cast<std::size_t>(n) * 4;
  const std::vector<std::uint8_t> in = pattern(n, seed);
  Buffer a(bytes), b(kInPlace ? 1 : bytes);
  CUDA_CHECK(cudaMemcpy(a.get(), in.data(), bytes, cudaMemcpyHostToDevice));
  std::string timing;
#if defined(GRADER_PROBE)
  {  // The fastest a round trip through the host could be: one copy each way, pinned memory.
    void* host = nullptr;
    CUDA_CHECK(cudaMallocHost(&host, bytes));
    cudaEvent_t t0, t1;
    CUDA_CHECK(cudaEventCreate(&t0));
    CUDA_CHECK(cudaEventCreate(&t1));
    CUDA_CHECK(cudaEventRecord(t0));
    CUDA_CHECK(cudaMemcpy(host, a.get(), bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(a.get(), host, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaEventRecord(t1));
    CUDA_CHECK(cudaEventSynchronize(t1));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
    timing += "roundtrip_ms=" + std::to_string(ms) + " ";
    CUDA_CHECK(cudaFreeHost(host));
  }
#endif
  cudaEvent_t t0, t1;
  CUDA_CHECK(cudaEventCreate(&t0));
  CUDA_CHECK(cudaEventCreate(&t1));
  CUDA_CHECK(cudaDeviceSynchronize());
  if (g_ready_fd < 0) {
    record_text(item, "error", "a timed run needs the grader's ready descriptor");
    return;
  }
  write_all(g_ready_fd, "ready\n", 6);
  const std::string go = read_line(kGoFd);
  if (go.rfind("go ", 0) != 0) {
    record_text(item, "error", "the grader's go line never came");
    return;
  }
  const std::uint64_t key = std::strtoull(go.c_str() + 3, nullptr, 16);
  CUDA_CHECK(cudaEventRecord(t0));
  float* src = a.as<float>();
  float* dst = kInPlace ? src : b.as<float>();
  std::int64_t r = rows, c = cols;
  for (std::int64_t k = 0; k < reps; ++k) {
    if (launch_refused(item, kInPlace ? launch_inplace(dst, r) : launch(src, dst, r, c))) return;
    mask_words<<<1024, 256>>>(reinterpret_cast<std::uint32_t*>(dst), n,
                              grader::step_key(key, static_cast<std::uint32_t>(k)));
    if (!kInPlace) {
      std::swap(src, dst);
      std::swap(r, c);
    }
  }
  CUDA_CHECK(cudaEventRecord(t1));
  finish_launch(item, std::to_string(rows) + " x " + std::to_string(cols) + " (timed run)");
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));
  timing += "loop_ms=" + std::to_string(ms);
  std::vector<std::uint8_t> out(bytes);
  CUDA_CHECK(cudaMemcpy(out.data(), kInPlace ? dst : src, bytes, cudaMemcpyDeviceToHost));
  record(item, "region", out.data(), out.size());
  record_text(item, "timing", timing);
}

bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t s = cudaGetDeviceCount(&count);
  if (s != cudaSuccess || count == 0) {
    *why = s != cudaSuccess ? std::string(cudaGetErrorName(s)) : "no device";
    cudaGetLastError();
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const int plan_fd = ::open(argv[1], O_RDONLY);
  g_data_fd = ::open(argv[2], O_WRONLY | O_TRUNC);
  if (argc > 3) g_ready_fd = std::atoi(argv[3]);
  if (plan_fd < 0 || g_data_fd < 0) return 2;
  // Waiting for the GPU sleeps instead of spinning: the grader counts this process's CPU time.
  cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
  cudaGetLastError();
  std::string why;
  const bool gpu = gpu_available(&why);

  std::string plan;
  char buf[4096];
  for (;;) {
    const ssize_t r = ::read(plan_fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    plan.append(buf, static_cast<std::size_t>(r));
  }
  ::close(plan_fd);
  std::istringstream lines(plan);
  std::string line;
  std::getline(lines, line);
  if (line != "plan 1") return 2;
  long item = 0;
  for (; std::getline(lines, line); ++item) {
    grader::Item it;
    const bool known = grader::parse_item(line, &it);
    try {
      if (!known) {
        record_text(item, "error", "unknown plan item: " + line);
      } else if (it.kind == "check") {
        run_check(item, it.name);
      } else if (it.kind == "swizzle") {
        run_swizzle(item, gpu);
      } else if (!gpu) {
        record_text(item, "nodev", "no CUDA device: " + why);
      } else if (it.kind == "transpose" || it.kind == "inplace") {
        run_matrix(item, it.rows, it.cols, it.seed, it.kind == "inplace");
      } else if (it.kind == "speed") {
        run_speed(item, it.rows, it.cols, it.seed, it.reps);
      } else {  // devices
        cudaDeviceProp prop{};
        CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        record_text(item, "devices", std::string(prop.name) + ", compute capability " +
                                         std::to_string(prop.major) + "." +
                                         std::to_string(prop.minor));
      }
    } catch (const std::exception& e) {
      record_text(item, "error", e.what());
      if (dynamic_cast<const CudaFailure*>(&e)) return 3;
    }
    done(item);
  }
  return 0;
}
