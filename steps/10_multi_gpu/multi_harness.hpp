// Step 10 - the harness of the transposes across GPUs: common/harness.cu's contract (options,
// exit codes, fresh inputs, poisoned outputs, bitwise checks, CUDA-event medians, the table and
// CSV rows) for G processes at once. Each process makes only its own rows of the input, from the
// same per-element patterns as every step, and checks only its own block of the output, framed
// by guard bands; nothing gathers the whole matrix. The ceiling, timed in the same run, is
// NCCL's all-to-all of the same bytes; a time is the slowest GPU's, repetition by repetition.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "blocks.hpp"
#include "multi_transpose.cuh"
#include "problem.hpp"

namespace step10 {

/// What a method sees on one GPU: the problem, this GPU's buffers, the communicator.
struct Context {
  Layout at;  ///< chunks: --chunks, or auto_chunks
  int me;
  ncclComm_t comm;
  const void* in;
  void* out;
  void* send;
  void* recv;
  void* out_allocation;     ///< the allocation that holds `out` (guard bands around it), from
                            ///< ncclMemAlloc and the same size on every GPU, so that it can be
                            ///< registered as an NCCL window
  std::size_t out_offset;   ///< bytes from out_allocation to out
  std::size_t out_allocation_bytes;  ///< its size
  float* scratch;           ///< one float of device memory for barrier()
  /// Every GPU's CUDA device in this process (by PCI bus id), -1 where it is not visible here:
  /// what cudaDeviceCanAccessPeer is asked about.
  std::vector<int> devices;

  /// This GPU's part, with the run's chunks or with @p chunks.
  Part part() const { return {at, me, in, out, send, recv}; }
  Part part(int chunks) const {
    Layout l = at;
    l.chunks = chunks;
    return {l, me, in, out, send, recv};
  }
  /// Stream @p s of every GPU waits here until all have reached it (an NCCL all-reduce of one
  /// float).
  void barrier(cudaStream_t s) const {
    NCCL_CHECK(ncclAllReduce(scratch, scratch, 1, ncclFloat32, ncclSum, comm, s));
  }
};

/// One way to transpose across the GPUs: a row of the table.
struct Method {
  std::string id;        ///< "overlapped"; the data's id adds the GPUs: "overlapped-2gpus"
  std::string name;      ///< "overlapped"; the table adds ", 2 GPUs"
  bool chunked = false;  ///< the tile column gives the chunks per GPU
  /// A reference row: it moves the same bytes without transposing them (a copy over the links),
  /// so it is timed but not verified.
  bool reference = false;
  /// A fault put in on purpose for the tests (direct.cuh's Fault): left out of --list and of
  /// every run but one whose --only names its id.
  bool hidden = false;
  /// Once on every GPU, before the first run: "" or why the method cannot run here. Optional.
  std::function<std::string(const Context&)> prepare;
  /// One transpose: enqueues this GPU's part of it on the stream.
  std::function<void(const Context&, cudaStream_t)> run;
  /// After the last run, on every GPU (undoes prepare). Optional.
  std::function<void()> release;
};

/// Makes @p m keep a State on each GPU from prepare to release (its streams, buffers, windows):
/// prepare makes State(context, @p args...), whose why_not() refuses the method ("" runs it); run
/// calls @p run(state, context, stream); release destroys the state.
template <typename State, typename Run, typename... Args>
Method with_state(Method m, Run run, Args... args) {
  auto state = std::make_shared<std::unique_ptr<State>>();
  m.prepare = [state, args...](const Context& c) {
    *state = std::make_unique<State>(c, args...);
    return std::string((*state)->why_not());
  };
  m.run = [state, run](const Context& c, cudaStream_t s) { run(**state, c, s); };
  m.release = [state] { state->reset(); };
  return m;
}

/// A state that never refuses its method.
struct Runs {
  std::string why_not() const { return ""; }
};

/// A communicator split from the team's with @p config (ncclCommSplit, a collective: every GPU
/// makes it, in the same order), destroyed on every path: a method's own NCCL settings.
class SplitComm {
 public:
  SplitComm(const Context& c, ncclConfig_t config) {
    NCCL_CHECK(ncclCommSplit(c.comm, 0, c.me, &comm_, &config));
  }
  ~SplitComm() {
    if (comm_) ncclCommDestroy(comm_);  // no check: a destructor must not throw
  }
  SplitComm(const SplitComm&) = delete;
  SplitComm& operator=(const SplitComm&) = delete;
  ncclComm_t get() const { return comm_; }

 private:
  ncclComm_t comm_ = nullptr;
};

/// The id a method's rows carry in the data: its own, the number of GPUs, and the chunks per GPU
/// where --chunks gave them ("overlapped-2gpus", "overlapped-1gpu", "overlapped-2gpus-8chunks"):
/// the same kernel on other GPU counts or chunks is another measurement.
std::string run_id(const std::string& id, int gpus, bool chunked, const std::string& chunks);

/// The main() of step 10 and its lab, as above (@p binary, @p title and @p description for
/// --help; every element type; --gpus N|all and --chunks N|auto besides the course's options).
/// --list needs no team (the kernels' ids for --gpus, or for the GPUs visible here); rank 0
/// alone prints a bad argument, the table and the CSV rows; a size that does not fit on some GPU
/// is refused (exit 2). @p methods must not touch the GPU. Returns the exit code.
int run_multi(int argc, char** argv, const std::string& binary, const std::string& title,
              const std::string& description, std::vector<Method> (*methods)());

/// Checks the output block of GPU @p me (its rows of the cols x rows transpose, @p got) against
/// the patterns of the input elements they came from (seed @p seed); "" when every element
/// matches bit for bit, else the first mismatch in the whole output's coordinates. Host code.
std::string check_block(const Layout& at, int me, course::ElemType type, std::uint64_t seed,
                        const std::uint8_t* got);

}  // namespace step10
