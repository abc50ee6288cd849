// Step 10 - the transpose across the GPUs of one machine, each piece written straight to its
// final place. Chunk by chunk, step 08's kernel transposes this GPU's rows into its send buffer
// (as in multi_transpose.cuh); then, for every GPU g, the piece of the chunk that g owns is a band
// of columns of g's output block, and a copy engine puts it there through g's window
// (window.cuh), a 2D copy over NVLink. The receiver makes no pass, there is no receive buffer,
// and the copy engines take no SMs from the transposes. On one machine only: elsewhere the
// windows cannot be mapped, and the method refuses (multi_transpose.cuh runs anywhere).
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

/// The streams and events of the direct pipeline, made once per run of the harness.
class Direct {
 public:
  /// @p mine: how this GPU's own piece moves (the lab tries a copy kernel; default: as the
  /// others). @p in_turn: one stream for the pieces of all other GPUs, one after another (each GPU
  /// starts with the next GPU's), else one stream per GPU, all at once.
  /// @p in_step (the lab's): in turn, and the GPUs wait for each other after each chunk.
  Direct(const Context& c, MovePiece move, bool in_turn, MovePiece mine = nullptr, bool in_step = false)
      : window_(c), move_(move), mine_(mine ? mine : move), in_turn_(in_turn || in_step),
        in_step_(in_step), packed_(c.at.chunks) {
    if (!window_.why_not(c).empty()) return;
    int low = 0, high = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&low, &high));
    CUDA_CHECK(cudaStreamCreateWithPriority(&pack_, cudaStreamNonBlocking, low));
    moves_.resize(in_turn_ ? std::min(2, c.at.gpus) : c.at.gpus);  // in turn: mine, the others'
    done_.resize(moves_.size());
    for (cudaStream_t& m : moves_) CUDA_CHECK(cudaStreamCreateWithPriority(&m, cudaStreamNonBlocking, high));
    for (cudaEvent_t& e : packed_) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    for (cudaEvent_t& e : done_) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&start_, cudaEventDisableTiming));
  }
  ~Direct() {  // no checks: a destructor must not throw
    if (pack_) cudaStreamDestroy(pack_);
    for (cudaStream_t m : moves_) cudaStreamDestroy(m);
    for (auto* list : {&packed_, &done_})
      for (cudaEvent_t e : *list)
        if (e) cudaEventDestroy(e);
    if (start_) cudaEventDestroy(start_);
  }
  Direct(const Direct&) = delete;
  Direct& operator=(const Direct&) = delete;

  std::string why_not(const Context& c) const { return window_.why_not(c); }

  /// One transpose; @p s waits until every GPU's pieces, this GPU's included, are in place.
  void run(const Context& c, cudaStream_t s) {
    const Part p = c.part();
    const int G = p.at.gpus;
    if (G == 1) {  // the whole matrix is my own piece, and dense: one pass of step 08
      CUDA_CHECK(local_transpose(p.in, p.out, p.at.rows, p.at.cols, p.at.elem, s));
      return;
    }
    CUDA_CHECK(cudaEventRecord(start_, s));
    CUDA_CHECK(cudaStreamWaitEvent(pack_, start_));
    for (cudaStream_t m : moves_) CUDA_CHECK(cudaStreamWaitEvent(m, start_));
    const std::size_t elem = p.at.elem, pitch = p.at.rows * elem;
    for (int k = 0; k < p.at.chunks; ++k) {
      const std::int64_t h = p.at.chunks_of(p.me).count(k);
      if (h == 0) break;
      pack(p, k, pack_);
      CUDA_CHECK(cudaEventRecord(packed_[k], pack_));
      for (int i = 1; i <= G; ++i) {  // the others first (they take the links), mine last
        const int g = (p.me + i) % G;
        const Piece piece = p.at.sent(p.me, g, k);
        if (piece.count == 0) continue;
        const cudaStream_t to = in_turn_ ? moves_[g == p.me ? 0 : 1] : moves_[g];
        CUDA_CHECK(cudaStreamWaitEvent(to, packed_[k]));
        void* dst = window_.out(g) + p.at.column(p.me, k) * elem;
        const void* src = p.byte(p.send, piece.offset);
        const std::size_t width = h * elem, height = p.at.col_blocks().count(g);
        CUDA_CHECK((g == p.me ? mine_ : move_)(dst, pitch, src, width, height, to));
      }
      if (in_step_) c.barrier(moves_[1]);
    }
    for (std::size_t i = 0; i < moves_.size(); ++i) {
      CUDA_CHECK(cudaEventRecord(done_[i], moves_[i]));
      CUDA_CHECK(cudaStreamWaitEvent(s, done_[i]));
    }
    c.barrier(s);  // every GPU's pieces have landed in every output
  }

 private:
  Window window_;
  MovePiece move_, mine_;
  bool in_turn_, in_step_;
  cudaStream_t pack_ = nullptr;
  std::vector<cudaStream_t> moves_;
  std::vector<cudaEvent_t> packed_, done_;
  cudaEvent_t start_ = nullptr;
};

/// The direct pipeline as the harness sees it (the lab passes other movers and orders).
inline Method direct(MovePiece move = by_copy_engine, bool in_turn = true,
                     const std::string& id = "direct",
                     const std::string& name = "direct: pieces placed by the copy engines",
                     MovePiece mine = nullptr, bool in_step = false) {
  auto state = std::make_shared<std::unique_ptr<Direct>>();
  Method m;
  m.id = id;
  m.name = name;
  m.chunked = true;
  m.prepare = [state, move, in_turn, mine, in_step](const Context& c) {
    *state = std::make_unique<Direct>(c, move, in_turn, mine, in_step);
    return (*state)->why_not(c);
  };
  m.run = [state](const Context& c, cudaStream_t s) { (*state)->run(c, s); };
  m.release = [state] { state->reset(); };
  return m;
}

}  // namespace step10
