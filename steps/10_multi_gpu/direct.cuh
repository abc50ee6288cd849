// Step 10 - the transpose across the GPUs of one machine, each piece written straight to its
// final place. Chunk by chunk, step 08's kernel transposes this GPU's rows into its send buffer
// (as in multi_transpose.cuh); then, for every GPU g, the piece of the chunk that g owns is a band
// of columns of g's output block, and a copy engine puts it there through g's window
// (window.cuh), a 2D copy over NVLink. The receiver makes no pass, there is no receive buffer,
// and the copy engines take no SMs from the transposes. On one machine only: elsewhere the
// windows cannot be mapped, and the method refuses (multi_transpose.cuh runs anywhere). The
// method is safe on its own: it waits for every GPU on entry and on exit (two all-reduces).
//
//   make step10 && ./step10 --rows 32768 --cols 32768
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "multi_harness.hpp"
#include "multi_transpose.cuh"
#include "stall.cuh"
#include "window.cuh"

namespace step10 {

/// How a piece crosses: `height` rows of `width` bytes from `src` (rows `width` apart) into
/// `dst` (rows `dst_pitch` apart), on `stream`; `dst` may be another GPU's memory.
using MovePiece = cudaError_t (*)(void* dst, std::size_t dst_pitch, const void* src,
                                  std::size_t width, std::size_t height, cudaStream_t stream);

/// A copy engine does it: a 2D copy takes no SMs from the transposes.
inline cudaError_t by_copy_engine(void* dst, std::size_t dst_pitch, const void* src,
                                  std::size_t width, std::size_t height, cudaStream_t stream) {
  return cudaMemcpy2DAsync(dst, dst_pitch, src, width, width, height, cudaMemcpyDefault, stream);
}

/// A fault put in on purpose, for the tests only (checks.cmake): the harness must catch each.
enum class Fault { none, no_pack_wait, no_entry_barrier, no_exit_barrier };

/// When the GPUs wait for each other after each chunk (an all-reduce): beyond two GPUs they drift
/// out of turn without it (DIRECT.md); on two there is no turn to lose, the waits only cost.
enum class InStep { beyond_two_gpus, never, always };

/// The streams and events of the direct pipeline, made once per run of the harness.
class Direct {
 public:
  /// @p mine: how this GPU's own piece moves (the lab tries a copy kernel; default: as the
  /// others). @p in_turn: one stream for the pieces of all other GPUs, one after another (each GPU
  /// starts with the next GPU's), else one stream per GPU, all at once.
  /// @p pack (the lab's): the stream the packs run on, kept by the caller (default: its own).
  Direct(const Context& c, MovePiece move, bool in_turn, MovePiece mine = nullptr,
         InStep step = InStep::beyond_two_gpus, Fault fault = Fault::none, cudaStream_t pack = nullptr)
      : window_(c), move_(move), mine_(mine ? mine : move),
        in_step_(step == InStep::always || (step == InStep::beyond_two_gpus && c.at.gpus > 2)),
        in_turn_(in_turn || in_step_), fault_(fault), own_pack_(!pack), pack_(pack), packed_(c.at.chunks) {
    if (!window_.why_not().empty()) return;
    int low = 0, high = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&low, &high));
    if (own_pack_) CUDA_CHECK(cudaStreamCreateWithPriority(&pack_, cudaStreamNonBlocking, low));
    moves_.resize(in_turn_ ? std::min(2, c.at.gpus) : c.at.gpus);  // in turn: mine, the others'
    done_.resize(moves_.size());
    for (cudaStream_t& m : moves_) CUDA_CHECK(cudaStreamCreateWithPriority(&m, cudaStreamNonBlocking, high));
    for (cudaEvent_t& e : packed_) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    for (cudaEvent_t& e : done_) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    for (cudaEvent_t* e : {&start_, &entered_}) CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
  }
  ~Direct() {  // no checks: a destructor must not throw
    if (pack_ && own_pack_) cudaStreamDestroy(pack_);
    for (cudaStream_t m : moves_) cudaStreamDestroy(m);
    for (auto* list : {&packed_, &done_})
      for (cudaEvent_t e : *list)
        if (e) cudaEventDestroy(e);
    for (cudaEvent_t e : {start_, entered_}) if (e) cudaEventDestroy(e);
  }
  Direct(const Direct&) = delete;
  Direct& operator=(const Direct&) = delete;

  const std::string& why_not() const { return window_.why_not(); }

  /// One transpose; @p s waits until every GPU's pieces, this GPU's included, are in place.
  void run(const Context& c, cudaStream_t s) {
    const Part p = c.part();
    const int G = p.at.gpus;
    if (G == 1) {  // the whole matrix is my own piece, and dense: one pass of step 08
      CUDA_CHECK(local_transpose(p.in, p.out, p.at.rows, p.at.cols, p.at.elem, s));
      return;
    }
    // The packs write only my own send buffer: they start at once. The copies write into the
    // other GPUs' outputs: they wait until every GPU has reached this call (entry barrier), so
    // that none is still reading or poisoning its output; the barrier hides under the first pack.
    CUDA_CHECK(cudaEventRecord(start_, s));
    CUDA_CHECK(cudaStreamWaitEvent(pack_, start_));
    if (fault_ != Fault::no_entry_barrier) c.barrier(s);
    CUDA_CHECK(cudaEventRecord(entered_, s));
    for (cudaStream_t m : moves_) CUDA_CHECK(cudaStreamWaitEvent(m, entered_));
    if (fault_ == Fault::no_exit_barrier)  // GPU g's copies late by g x 20 ms: the race, every time
      for (cudaStream_t m : moves_) CUDA_CHECK(stall(20.0 * p.me, m));
    const std::size_t elem = p.at.elem, pitch = p.at.rows * elem;
    for (int k = 0; k < p.at.chunks; ++k) {
      const std::int64_t h = p.at.chunks_of(p.me).count(k);
      if (h > 0) {  // an empty chunk moves nothing, but still takes its turn below
        if (fault_ == Fault::no_pack_wait) CUDA_CHECK(stall(1.0, pack_));  // the race, every time
        pack(p, k, pack_);
        CUDA_CHECK(cudaEventRecord(packed_[k], pack_));
        for (int i = 1; i <= G; ++i) {  // the others first (they take the links), mine last
          const int g = (p.me + i) % G;
          const Piece piece = p.at.sent(p.me, g, k);
          if (piece.count == 0) continue;
          const cudaStream_t to = in_turn_ ? moves_[g == p.me ? 0 : 1] : moves_[g];
          if (fault_ != Fault::no_pack_wait) CUDA_CHECK(cudaStreamWaitEvent(to, packed_[k]));
          void* dst = window_.out(g) + p.at.column(p.me, k) * elem;
          const void* src = p.byte(p.send, piece.offset);
          const std::size_t width = h * elem, height = p.at.col_blocks().count(g);
          CUDA_CHECK((g == p.me ? mine_ : move_)(dst, pitch, src, width, height, to));
        }
      }
      if (in_step_) c.barrier(moves_[1]);  // every GPU, every chunk, empty or not: in step
    }
    for (std::size_t i = 0; i < moves_.size(); ++i) {
      CUDA_CHECK(cudaEventRecord(done_[i], moves_[i]));
      CUDA_CHECK(cudaStreamWaitEvent(s, done_[i]));
    }
    // Exit barrier: my output is complete once every other GPU's copies into it are done.
    if (fault_ != Fault::no_exit_barrier) c.barrier(s);
  }

 private:
  Window window_;
  MovePiece move_, mine_;
  bool in_step_, in_turn_;
  Fault fault_;
  bool own_pack_;
  cudaStream_t pack_;
  std::vector<cudaStream_t> moves_;
  std::vector<cudaEvent_t> packed_, done_;
  cudaEvent_t start_ = nullptr, entered_ = nullptr;
};

/// The direct pipeline as the harness sees it (the lab passes other movers and orders).
inline Method direct(MovePiece move = by_copy_engine, bool in_turn = true,
                     const std::string& id = "direct",
                     const std::string& name = "direct: pieces placed by the copy engines",
                     MovePiece mine = nullptr, InStep step = InStep::beyond_two_gpus,
                     Fault fault = Fault::none) {
  auto state = std::make_shared<std::unique_ptr<Direct>>();
  Method m;
  m.id = id;
  m.name = name;
  m.chunked = true;
  m.hidden = fault != Fault::none;
  m.prepare = [state, move, in_turn, mine, step, fault](const Context& c) {
    *state = std::make_unique<Direct>(c, move, in_turn, mine, step, fault);
    return (*state)->why_not();
  };
  m.run = [state](const Context& c, cudaStream_t s) { (*state)->run(c, s); };
  m.release = [state] { state->reset(); };
  return m;
}

}  // namespace step10
