// The kernels of step 07's lab, as its binary and its tests see them. Each float4 row names its
// threads, its shared layout and its order, and changes one of them against a neighbour; the
// lesson's own kernel appears as "swizzled, down the columns". LAB.md reads the table.
#pragma once

#include <string>
#include <vector>

#include "harness.cuh"
#include "scalar.cuh"
#include "tile64.cuh"

namespace step07lab {

template <int THREADS, Smem S, int BAND = 1, bool STREAM = false, int CHUNK = 1>
course::Variant tile64(const std::string& id, const std::string& what) {
  const std::string name = std::to_string(THREADS) + " thr x " +
                           std::to_string(kVectors / THREADS) + " float4, " + what;
  return {std::to_string(THREADS) + "-" + id, name, std::to_string(THREADS), "64x64",
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose<THREADS, S, BAND, STREAM, CHUNK>(static_cast<const float*>(in),
                                                              static_cast<float*>(out), p.rows,
                                                              p.cols, s);
          }};
}

template <int THREADS>
course::Variant scalar() {
  return {"scalar-" + std::to_string(THREADS),
          "one float per access: " + std::to_string(THREADS) + " thr, padded, down the columns",
          std::to_string(THREADS), "64x65",
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose_scalar<THREADS>(static_cast<const float*>(in),
                                             static_cast<float*>(out), p.rows, p.cols, s);
          }};
}

template <bool ROW_HALVES>
course::Variant clone() {
  const std::string halves = ROW_HALVES ? "rows" : "columns";
  return {"clone-" + halves, "clone of cuBLAS: 256 thr, 32x65 halves of " + halves,
          "32x8", "32x65",
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose_clone<ROW_HALVES>(static_cast<const float*>(in),
                                               static_cast<float*>(out), p.rows, p.cols, s);
          }};
}

constexpr int kColumns = 0;  // BAND == 0: down the columns

inline std::vector<course::Variant> variants() {
  return {
      // The order of the tiles: plain (what a 2D grid does) against down the columns, for the
      // three thread counts; bands and squares in between.
      tile64<512, Smem::swizzled>("plain", "swizzled, plain order"),
      tile64<256, Smem::swizzled>("plain", "swizzled, plain order"),
      tile64<128, Smem::swizzled>("plain", "swizzled, plain order"),
      tile64<512, Smem::swizzled, kColumns>("columns", "swizzled, down the columns"),
      tile64<256, Smem::swizzled, kColumns>("columns", "swizzled, down the columns"),
      tile64<256, Smem::swizzled, 8>("bands8", "swizzled, bands of 8"),
      tile64<256, Smem::swizzled, 8, false, 8>("squares8", "swizzled, squares of 8x8"),
      tile64<256, Smem::swizzled, 16, false, 16>("squares16", "swizzled, squares of 16x16"),
      tile64<512, Smem::swizzled, 16, false, 16>("squares16", "swizzled, squares of 16x16"),
      // The shared layout and the cache hint, in the order they were first tried.
      tile64<256, Smem::padded>("padded", "padded, plain order"),
      tile64<256, Smem::swizzled, 1, true>("streaming", "streaming hints, plain order"),
      tile64<256, Smem::quads>("quads", "quads, plain order"),
      tile64<256, Smem::quads, kColumns>("quads-columns", "quads, down the columns"),
      tile64<256, Smem::signed_swizzle, kColumns>("signed-columns",
                                                  "signed swizzle, down the columns"),
      // One float per access.
      scalar<512>(),
      scalar<256>(),
      clone<true>(),
      clone<false>(),
  };
}

}  // namespace step07lab
