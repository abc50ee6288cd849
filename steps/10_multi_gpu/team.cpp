#include "team.hpp"

#include <cuda_runtime.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "check.cuh"
#include "device_info.hpp"
#include "errors.hpp"
#include "multi_transpose.cuh"  // NCCL_CHECK

#ifdef STEP10_WITH_MPI
#include <mpi.h>
#endif

extern char** environ;

namespace step10 {

namespace {

// A copy that fails exits with this plus the course's exit code, so that the first process can
// tell a failure (the others may be waiting for it inside NCCL) from a normal end (0, 1 or 2,
// after the last collective call).
constexpr int kFailedCopy = 100;

// The rank mpirun (Open MPI, or a PMI launcher: MPICH, Slurm) gave this process, if any.
bool mpi_rank_from_environment(int* rank) {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    if (const char* v = std::getenv(name)) {
      *rank = std::atoi(v);
      return true;
    }
  }
  return false;
}

}  // namespace

std::string gpus_text(int n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

std::string to_hex(const void* bytes, std::size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned b = static_cast<const unsigned char*>(bytes)[i];
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

bool from_hex(const std::string& text, void* bytes, std::size_t n) {
  if (text.size() != 2 * n) return false;
  auto value = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const int hi = value(text[2 * i]), lo = value(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    static_cast<unsigned char*>(bytes)[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return true;
}

Team::Team(int argc, char** argv) : args_(argv, argv + argc) {
  if (const char* r = std::getenv(kRankVar)) {
    start_ = Start::child;
    rank_ = std::atoi(r);
    const char* g = std::getenv(kSizeVar);
    size_ = g ? std::atoi(g) : 0;
  } else if (mpi_rank_from_environment(&rank_)) {
    start_ = Start::mpi;
  }
}

Team::~Team() {
  if (comm_) ncclCommAbort(comm_);  // an error path: the others may never answer
}

std::string Team::describe() const {
  switch (start_) {
    case Start::mpi: return gpus_text(size_) + ", one process each, started by mpirun";
    default: return gpus_text(size_) + (size_ > 1 ? ", one process each" : "");
  }
}

void Team::join(int gpus, const std::string& binary) {
  binary_ = binary;
  std::string why;
  if (!course::cuda_device_available(&why)) throw course::CudaError("no usable CUDA device: " + why);
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  ncclUniqueId id{};
  switch (start_) {
    case Start::alone:
      size_ = gpus ? gpus : count;
      if (size_ > count) {
        throw course::UsageError("--gpus " + std::to_string(gpus) + ": only " +
                                 gpus_text(count) + (count == 1 ? " is" : " are") + " visible");
      }
      device_ = 0;
      NCCL_CHECK(ncclGetUniqueId(&id));  // its listening thread lives in this process, rank 0
      if (size_ > 1) spawn(id);
      break;
    case Start::child: {
      const char* hex = std::getenv(kIdVar);
      if (size_ < 2 || rank_ < 1 || rank_ >= size_ || !hex || !from_hex(hex, &id, sizeof id)) {
        throw course::UsageError(std::string("started as a copy, but ") + kRankVar + ", " +
                                 kSizeVar + " or " + kIdVar + " is missing or wrong");
      }
      device_ = rank_;
      break;
    }
    case Start::mpi: {
#ifdef STEP10_WITH_MPI
      MPI_Init(nullptr, nullptr);
      mpi_started_ = true;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
      MPI_Comm_size(MPI_COMM_WORLD, &size_);
      if (gpus && gpus != size_) {
        throw course::UsageError("--gpus " + std::to_string(gpus) + ": mpirun started " +
                                 std::to_string(size_) + " processes (give mpirun -np " +
                                 std::to_string(gpus) + ", or leave --gpus out)");
      }
      // The processes on this machine share its GPUs, one each.
      MPI_Comm local;
      int local_rank = 0, local_size = 1;
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
      MPI_Comm_rank(local, &local_rank);
      MPI_Comm_size(local, &local_size);
      MPI_Comm_free(&local);
      if (local_size > count) {
        throw course::UsageError("mpirun started " + std::to_string(local_size) +
                                 " processes on one machine, which has " + gpus_text(count) +
                                 " (one process per GPU)");
      }
      device_ = local_rank;
      if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
      MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
#else
      throw course::UsageError("started by mpirun, but this " + binary +
                               " was built without MPI: `make deps` installs Open MPI, then "
                               "build again (or run ./" + binary + " alone: it uses every GPU "
                               "of this machine)");
#endif
      break;
    }
  }
  CUDA_CHECK(cudaSetDevice(device_));
  if (!course::kernels_run_here(binary, &why)) throw course::CudaError(why);
  NCCL_CHECK(ncclCommInitRank(&comm_, size_, id, rank_));
}

void Team::spawn(const ncclUniqueId& id) {
  // Each copy gets this environment, less the rank of any run around this one, plus its own.
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "TRANSPOSE_STEP10_", 17) != 0) env.emplace_back(*e);
  }
  env.push_back(std::string(kSizeVar) + "=" + std::to_string(size_));
  env.push_back(std::string(kIdVar) + "=" + to_hex(&id, sizeof id));
  std::vector<char*> argv;
  for (std::string& a : args_) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t parent = getpid();
  std::fflush(nullptr);
  for (int r = 1; r < size_; ++r) {
    std::vector<std::string> own = env;
    own.push_back(std::string(kRankVar) + "=" + std::to_string(r));
    std::vector<char*> envp;
    for (std::string& e : own) envp.push_back(e.data());
    envp.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw course::CudaError(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      // Only async-signal-safe calls between fork and exec. The copy dies with this process.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(kFailedCopy + course::kExitCudaError);
      execve("/proc/self/exe", argv.data(), envp.data());
      _exit(kFailedCopy + course::kExitCudaError);
    }
    std::lock_guard<std::mutex> hold(children_->lock);
    children_->pids.push_back(pid);
    children_->codes.push_back(-1);
    ++children_->running;
  }
  // Watch the copies: one that fails may leave this process waiting for it inside NCCL forever.
  // Each by its own pid (never waitpid(-1): a library's own child is not ours to reap).
  std::thread([c = children_, name = binary_] {
    while (c->running > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      for (std::size_t i = 0; i < c->pids.size(); ++i) {
        int status = 0;
        {
          std::lock_guard<std::mutex> hold(c->lock);
          if (c->codes[i] >= 0 || waitpid(c->pids[i], &status, WNOHANG) != c->pids[i]) continue;
          c->codes[i] =
              WIFEXITED(status) ? WEXITSTATUS(status) : kFailedCopy + course::kExitCudaError;
        }
        --c->running;
        const bool normal = WIFEXITED(status) && WEXITSTATUS(status) < kFailedCopy;
        if (!normal && !c->stopping.exchange(true)) {
          std::fprintf(stderr, "%s: the process of GPU %zu stopped (%s %d) before the end: "
                       "stopping the others\n", name.c_str(), i + 1,
                       WIFEXITED(status) ? "exit" : "signal",
                       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
          for (pid_t p : c->pids) kill(p, SIGKILL);
          const int code = WIFEXITED(status) ? WEXITSTATUS(status) - kFailedCopy : 0;
          _exit(code > 0 && code < kFailedCopy ? code : course::kExitCudaError);
        }
      }
    }
  }).detach();
}

int Team::finish(int own) {
  if (comm_) {
    NCCL_CHECK(ncclCommFinalize(comm_));  // waits until every process is done with it
    NCCL_CHECK(ncclCommDestroy(comm_));
    comm_ = nullptr;
  }
  int code = own;
  if (start_ == Start::alone && !children_->pids.empty()) {
    // The copies end right after the same last collective call as this process.
    for (int i = 0; i < 600 && children_->running > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::lock_guard<std::mutex> hold(children_->lock);
    if (children_->running > 0) {
      children_->stopping = true;
      for (pid_t p : children_->pids) kill(p, SIGKILL);
      std::fprintf(stderr, "%s: a process did not end within 60 s of the others: stopped\n",
                   binary_.c_str());
      if (code == 0) code = course::kExitCudaError;
    }
    for (int c : children_->codes) {
      if (code == 0 && c > 0) code = c < kFailedCopy ? c : c - kFailedCopy;
    }
  }
#ifdef STEP10_WITH_MPI
  if (mpi_started_) MPI_Finalize();
#endif
  return code;
}

int Team::stop(int code) {
  switch (start_) {
    case Start::alone: {
      children_->stopping = true;
      std::lock_guard<std::mutex> hold(children_->lock);
      for (std::size_t i = 0; i < children_->pids.size(); ++i) {
        if (children_->codes[i] < 0) kill(children_->pids[i], SIGKILL);
      }
      return code;
    }
    case Start::child:
      return kFailedCopy + code;
    case Start::mpi:
#ifdef STEP10_WITH_MPI
      if (mpi_started_) MPI_Abort(MPI_COMM_WORLD, code);
#endif
      return code;
  }
  return code;
}

}  // namespace step10
