// Step 10 - the transpose across G GPUs: one process per GPU, NCCL for every byte between them.
// New since step 08, whose matrix fit on one GPU: GPU g holds a block of rows (blocks.hpp) and
// must end with the same block of the transpose, so it keeps 1/G of its data and sends 1/G to
// every other GPU: an all-to-all. Each chunk of its rows goes through three passes:
//   1. pack:     step 08's transpose of the chunk (h x C -> C x h): the piece for GPU d is a run of
//                rows of the result, already contiguous, so the result IS the send buffer;
//   2. exchange: ncclSend/ncclRecv of every piece, in one NCCL group;
//   3. place:    each piece received (my output rows x h) is a band of columns of my output
//                block: a 2D copy.
// The chunks run on three streams, so chunk c's exchange overlaps chunk c+1's pack and chunk
// c-1's place. It runs wherever NCCL reaches (any machines); direct.cuh is faster on one.
//   mpirun -np 2 ./step10 --rows 32768 --cols 32768 --only overlapped
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>
#include <vector>

#include "blocks.hpp"
#include "check.cuh"

namespace step10 {

/// Throws course::CudaError naming the NCCL call, the place and NCCL's reason.
inline void check_nccl(ncclResult_t r, const char* call, const char* file, int line) {
  if (r != ncclSuccess) {
    const char* detail = ncclGetLastError(nullptr);
    throw course::CudaError(std::string("NCCL error: ") + call + " failed at " + file + ":" +
                            std::to_string(line) + ": " + ncclGetErrorString(r) +
                            (detail && *detail ? std::string(" (") + detail + ")" : ""));
  }
}
#define NCCL_CHECK(call) ::step10::check_nccl((call), #call, __FILE__, __LINE__)

/// Step 08's launcher (steps/08_general/transpose.cuh), compiled once in local.cu.
cudaError_t local_transpose(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                            std::size_t elem, cudaStream_t stream);
/// Copies `height` rows of `width` bytes between buffers of different pitches (cudaMemcpy2D,
/// row by row where a pitch passes what it takes), in local.cu.
cudaError_t copy_band(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                      std::size_t width, std::size_t height, cudaStream_t stream);

/// What one GPU holds: its rows of the input, its rows of the output, and two staging buffers
/// as large (send: its chunks transposed; recv: the pieces the others sent it).
struct Part {
  Layout at;
  int me;  ///< this GPU's rank, 0..G-1
  const void* in;
  void* out;
  void* send;
  void* recv;

  char* byte(const void* base, std::int64_t elems) const {
    return static_cast<char*>(const_cast<void*>(base)) + elems * static_cast<std::int64_t>(at.elem);
  }
};

/// Pass 1: chunk c of my rows, transposed by step 08 into my send buffer.
inline void pack(const Part& p, int c, cudaStream_t s) {
  const Chunks ch = p.at.chunks_of(p.me);
  if (ch.count(c) == 0) return;
  CUDA_CHECK(local_transpose(p.byte(p.in, ch.first(c) * p.at.cols),
                             p.byte(p.send, ch.first(c) * p.at.cols), ch.count(c), p.at.cols,
                             p.at.elem, s));
}

/// Pass 2: my piece of chunk c for every other GPU, and theirs for me. One group: NCCL pairs
/// every send with its receive, whatever the order they are listed in. Both sides skip an empty
/// piece (a GPU with no rows), so the pairs still match.
inline void exchange(const Part& p, int c, ncclComm_t comm, cudaStream_t s) {
  NCCL_CHECK(ncclGroupStart());
  for (int g = 0; g < p.at.gpus; ++g) {
    if (g == p.me) continue;  // my own piece never leaves: place() reads it from send
    const Piece out = p.at.sent(p.me, g, c), in = p.at.received(p.me, g, c);
    const std::size_t elem = p.at.elem;
    if (out.count) NCCL_CHECK(ncclSend(p.byte(p.send, out.offset), out.count * elem, ncclUint8, g, comm, s));
    if (in.count) NCCL_CHECK(ncclRecv(p.byte(p.recv, in.offset), in.count * elem, ncclUint8, g, comm, s));
  }
  NCCL_CHECK(ncclGroupEnd());
}

/// Pass 3: the piece of chunk c from GPU g (my own from the send buffer) into its band of
/// columns of my output rows.
inline void place(const Part& p, int g, int c, cudaStream_t s) {
  const Piece piece = g == p.me ? p.at.sent(p.me, p.me, c) : p.at.received(p.me, g, c);
  if (piece.count == 0) return;
  const std::size_t width = p.at.chunks_of(g).count(c) * p.at.elem;
  CUDA_CHECK(copy_band(p.byte(p.out, p.at.column(g, c)), p.at.rows * p.at.elem,
                       p.byte(g == p.me ? p.send : p.recv, piece.offset), width, width,
                       p.at.col_blocks().count(p.me), s));
}

/// The three streams of the pipeline and an event per chunk and pass, made once.
class Pipeline {
 public:
  explicit Pipeline(int chunks) : packed_(chunks), moved_(chunks) {
    // The transfers' stream first: NCCL's blocks then start as soon as an SM is free, not after
    // every block of the packs queued before them.
    int low = 0, high = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&low, &high));
    CUDA_CHECK(cudaStreamCreateWithPriority(&net_, cudaStreamNonBlocking, high));
    for (cudaStream_t* s : {&pack_, &place_}) CUDA_CHECK(cudaStreamCreateWithPriority(s, cudaStreamNonBlocking, low));
    for (auto* list : {&packed_, &moved_})
      for (cudaEvent_t& e : *list) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    for (cudaEvent_t* e : {&start_, &net_done_, &place_done_}) CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
  }
  ~Pipeline() {  // no checks: a destructor must not throw
    for (cudaStream_t s : {pack_, net_, place_}) cudaStreamDestroy(s);
    for (auto* list : {&packed_, &moved_})
      for (cudaEvent_t e : *list) cudaEventDestroy(e);
    for (cudaEvent_t e : {start_, net_done_, place_done_}) cudaEventDestroy(e);
  }
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  /// The transpose of p.at, chunk by chunk on the three streams; @p s waits for all of it.
  void run(const Part& p, ncclComm_t comm, cudaStream_t s) {
    if (p.at.gpus == 1) {  // the whole matrix is my own piece, and dense: one pass of step 08
      CUDA_CHECK(local_transpose(p.in, p.out, p.at.rows, p.at.cols, p.at.elem, s));
      return;
    }
    CUDA_CHECK(cudaEventRecord(start_, s));
    for (cudaStream_t t : {pack_, net_, place_}) CUDA_CHECK(cudaStreamWaitEvent(t, start_));
    for (int c = 0; c < p.at.chunks; ++c) {
      pack(p, c, pack_);
      CUDA_CHECK(cudaEventRecord(packed_[c], pack_));
      CUDA_CHECK(cudaStreamWaitEvent(net_, packed_[c]));
      exchange(p, c, comm, net_);
      CUDA_CHECK(cudaEventRecord(moved_[c], net_));
      CUDA_CHECK(cudaStreamWaitEvent(place_, packed_[c]));
      place(p, p.me, c, place_);  // my own piece needs no transfer
      CUDA_CHECK(cudaStreamWaitEvent(place_, moved_[c]));
      for (int g = 0; g < p.at.gpus; ++g)
        if (g != p.me) place(p, g, c, place_);
    }
    CUDA_CHECK(cudaEventRecord(net_done_, net_));
    CUDA_CHECK(cudaEventRecord(place_done_, place_));
    CUDA_CHECK(cudaStreamWaitEvent(s, net_done_));
    CUDA_CHECK(cudaStreamWaitEvent(s, place_done_));
  }

 private:
  cudaStream_t pack_ = nullptr, net_ = nullptr, place_ = nullptr;
  std::vector<cudaEvent_t> packed_, moved_;
  cudaEvent_t start_ = nullptr, net_done_ = nullptr, place_done_ = nullptr;
};

}  // namespace step10
