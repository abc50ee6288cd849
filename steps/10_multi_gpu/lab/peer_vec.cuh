// Step 10's lab - the peer writes in 16-byte vectors: step 08's vector kernel itself
// (transpose_vec), its output a parameter (OwnersOut) that sends each output row to its owner
// through NCCL's windows. 16-byte loads and stores for every element size, where every row starts
// on 16 bytes; elsewhere the lesson's kernel (../peer.cuh), one element per access.
//
//   make step10-lab && ./step10-lab --rows 32768 --cols 32768 --only peer-vec
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "peer.cuh"       // the lesson's: block_first, block_owner, by_size, launch_to_owners
#include "transpose.cuh"  // steps/08_general: transpose_vec, vector_tile, make_grid

namespace step10 {

/// Where chunk (output row oc, first column orow) of step 08's vector tile goes: output row oc is
/// GPU g = owner(oc)'s row oc - first(g), and this GPU's row orow lands in its column
/// first_row + orow; outs[g] is GPU g's block, pitch elements a row.
template <int S>
struct OwnersOut {
  std::uint8_t* const* outs;
  std::int64_t cols, pitch, first_row;
  int gpus;
  __host__ __device__ std::uint8_t* operator()(std::int64_t oc, std::int64_t orow) const {
    const int g = block_owner(oc, cols, gpus);
    return outs[g] + ((oc - block_first(g, cols, gpus)) * pitch + first_row + orow) * S;
  }
};

/// Whether the vector kernel can take this GPU's block: every row it reads and every run it
/// writes starts on 16 bytes (the input's rows; the owners' rows, and this GPU's columns in them;
/// this GPU's rows in whole vectors). Every outs[g] must start on 16 bytes (the harness's do).
inline bool peer_vectors(std::size_t elem, const void* in, std::int64_t rows, std::int64_t cols,
                         std::int64_t first_row, std::int64_t out_pitch) {
  const auto on16 = [elem](std::int64_t n) { return n * static_cast<std::int64_t>(elem) % 16 == 0; };
  return reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && on16(cols) && on16(out_pitch) &&
         on16(first_row) && on16(rows);
}

/// Peer writes in 16-byte vectors where peer_vectors holds (step 08's vector kernel and tile for
/// the element size), else the lesson's launch_to_owners, one element per access. Its arguments:
/// peer.cuh's ToOwners.
inline cudaError_t launch_vec_to_owners(std::size_t elem, const void* in, std::int64_t rows,
                                        std::int64_t cols, std::int64_t first_row,
                                        std::int64_t out_pitch, int gpus, void* const* outs,
                                        cudaStream_t stream) {
  if (rows < 1 || cols < 1 || !peer_vectors(elem, in, rows, cols, first_row, out_pitch))
    return launch_to_owners<false>(elem, in, rows, cols, first_row, out_pitch, gpus, outs, stream);
  return by_size(elem, [&](auto size) {
    constexpr int S = decltype(size)::value;
    constexpr step08::TileSize t = step08::vector_tile(S);
    const std::int64_t blocks = step08::blocks_for(rows, cols, t);
    if (blocks < 0) return cudaErrorInvalidValue;
    step08::transpose_vec<S, t.rows, t.cols, OwnersOut<S>>
        <<<static_cast<unsigned>(blocks), step08::kThreads, 0, stream>>>(
            static_cast<const std::uint8_t*>(in),
            OwnersOut<S>{reinterpret_cast<std::uint8_t* const*>(outs), cols, out_pitch, first_row, gpus},
            rows, cols, step08::make_grid(rows, cols, t.rows, t.cols, S));
    return cudaGetLastError();
  });
}

}  // namespace step10
