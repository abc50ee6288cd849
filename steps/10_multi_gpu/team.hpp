// Step 10 - the G processes of one transpose, one per GPU, and their NCCL communicator.
//
// Three ways to start, one program:
//   ./step10                  alone: this process counts the GPUs, starts one copy of itself per
//                             other GPU (fork and exec: every copy is a fresh process) and hands
//                             each its rank and NCCL's id in its environment; it is rank 0;
//   (one of those copies)     a child: reads its rank and the id;
//   mpirun -np G ./step10     MPI: ranks from MPI, the id broadcast by MPI (built with MPI only).
// MPI does nothing else: every byte between GPUs goes through NCCL, which finds the fastest path
// (NVLink on one machine, the network between machines).
#pragma once

#include <nccl.h>
#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace step10 {

/// How this process was started.
enum class Start { alone, child, mpi };

class Team {
 public:
  /// Reads how this process was started from its environment; no GPU or MPI call yet.
  Team(int argc, char** argv);
  ~Team();
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  Start start() const { return start_; }
  /// This process's rank: known from the start (0 when alone).
  int rank() const { return rank_; }

  /// Joins the others: alone, uses @p gpus GPUs (0: every visible one) and starts the copies;
  /// under MPI, checks that @p gpus (unless 0) is the number of processes. Then picks this
  /// process's GPU, checks that this build's kernels run on it and creates the communicator.
  /// Throws course::UsageError (more GPUs asked than there are) or course::CudaError (no usable
  /// device: "no usable CUDA device: ...").
  void join(int gpus, const std::string& binary);

  int size() const { return size_; }      ///< G
  int device() const { return device_; }  ///< this process's CUDA device
  ncclComm_t comm() const { return comm_; }
  /// "the 2 GPUs of this machine", "2 processes of mpirun", "1 GPU".
  std::string describe() const;

  /// The normal end, once every process has done the same collective calls: destroys the
  /// communicator; alone, waits for the copies and returns the first non-zero exit code of
  /// all the processes (@p own first); under MPI, finalizes it. Returns the exit code.
  int finish(int own);
  /// The end after an error that the others may not have seen: alone, stops the copies; a copy
  /// just exits (the first process sees it and stops the others); under MPI, MPI_Abort.
  /// Returns @p code where the process may return at all.
  int stop(int code);

 private:
  void spawn(const ncclUniqueId& id);

  Start start_ = Start::alone;
  int rank_ = 0, size_ = 1, device_ = 0;
  ncclComm_t comm_ = nullptr;
  bool mpi_started_ = false;
  std::vector<std::string> args_;
  std::string binary_ = "step10";

  // Alone: the copies this process started, and what they exited with.
  struct Children {
    std::mutex lock;
    std::vector<pid_t> pids;
    std::vector<int> codes;              // -1 while running
    std::atomic<int> running{0};
    std::atomic<bool> stopping{false};   // stop() is killing them: their deaths are expected
  };
  std::shared_ptr<Children> children_ = std::make_shared<Children>();
};

/// The environment variables a copy is started with (rank, G, NCCL's id in hexadecimal).
inline constexpr const char* kRankVar = "TRANSPOSE_STEP10_RANK";
inline constexpr const char* kSizeVar = "TRANSPOSE_STEP10_GPUS";
inline constexpr const char* kIdVar = "TRANSPOSE_STEP10_NCCL_ID";

/// "1 GPU", "2 GPUs".
std::string gpus_text(int n);

/// NCCL's id as text and back (host code, tested on the CPU). from_hex returns false for text
/// that is not exactly the id's bytes in hexadecimal.
std::string to_hex(const void* bytes, std::size_t n);
bool from_hex(const std::string& text, void* bytes, std::size_t n);

}  // namespace step10
