// The kernels of step 08 as the harness and the tests see them, per element type: the launcher
// (what a reader would call), then each of its paths on its own, so that the table shows what
// each one costs on every shape: the vector kernel with the launcher's tile for the type, the
// shifted vector kernel (1- and 2-byte elements), and the scalar kernel with its writes cut at
// the tile's edges and on the output rows' sectors. A path
// that cannot take the shape refuses it (the row says "refused"). The tile shapes and the
// realigned vector kernel that were tried and not kept are in lab/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness.cuh"
#include "transpose.cuh"

namespace step08 {

inline std::string tile_text(int rows, int cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

/// The vector kernel alone, TR x TC tiles, aligned rows only.
template <int S, int TR, int TC>
course::Variant vector_variant() {
  return {"vec-" + tile_text(TR, TC), "16B vectors, tile " + tile_text(TR, TC), "256",
          tile_text(TR, TC),
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            const auto i = reinterpret_cast<std::uintptr_t>(in);
            const auto o = reinterpret_cast<std::uintptr_t>(out);
            if (!valid_problem(S, p.rows, p.cols, i, o) || !input_rows_aligned(S, p.cols, i) ||
                !output_rows_aligned(S, p.rows, o)) {
              return cudaErrorInvalidValue;
            }
            return launch_vec<S, TR, TC>(in, out, p.rows, p.cols, s);
          }};
}

/// The shifted vector kernel alone (1- and 2-byte elements) on any shape, writes cut on the
/// output rows' sectors where they start off them (as the launcher does).
template <int S>
course::Variant shifted_variant() {
  constexpr TileSize t = shift_tile(S);
  return {"shifted", "shifted vectors, tile " + tile_text(t.rows, t.cols), "256",
          tile_text(t.rows, t.cols),
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            const auto o = reinterpret_cast<std::uintptr_t>(out);
            if (!valid_problem(S, p.rows, p.cols, reinterpret_cast<std::uintptr_t>(in), o)) {
              return cudaErrorInvalidValue;
            }
            constexpr TileSize st = shift_tile(S);
            const bool cut = !output_rows_on_sectors(S, p.rows, o);
            return launch_shift<S, st.rows, st.cols>(in, out, p.rows, p.cols, cut, s);
          }};
}

/// The scalar kernel alone, with the launcher's tile, on any shape. CUT: output rows cut on their
/// sectors when they do not start on one (as the launcher does); without, every tile cuts at its
/// own edge, so the table shows what the cut buys.
template <int S, bool CUT>
course::Variant scalar_variant() {
  constexpr int t = scalar_tile(S);
  return {CUT ? "scalar-cut" : "scalar-edges",
          CUT ? "scalar, writes cut on sectors" : "scalar, writes cut at tile edges", "32x8",
          tile_text(t, t),
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            const auto o = reinterpret_cast<std::uintptr_t>(out);
            if (!valid_problem(S, p.rows, p.cols, reinterpret_cast<std::uintptr_t>(in), o)) {
              return cudaErrorInvalidValue;
            }
            const bool cut = CUT && !output_rows_on_sectors(S, p.rows, o);
            return launch_scalar<S, t>(in, out, p.rows, p.cols, cut, s);
          }};
}

/// The launcher. With @p shape, the name says which path it takes for that shape (in buffers
/// from cudaMalloc, which are 256-byte aligned).
inline course::Variant auto_variant(course::ElemType type, const course::Problem* shape = nullptr) {
  const std::size_t size = course::elem_size(type);
  std::string name = "auto", tile = "-";
  Plan plan;
  if (shape && plan_transpose(size, shape->rows, shape->cols, 256, 256, &plan)) {
    name += ": " + plan.describe();
    if (plan.path != Path::copy) tile = tile_text(plan.tile.rows, plan.tile.cols);
  }
  return {"auto", name, "256", tile,
          [size](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose(in, out, p.rows, p.cols, size, s);
          }};
}

/// The launcher's kernels for S-byte elements, each on its own.
template <int S>
std::vector<course::Variant> paths() {
  constexpr TileSize t = vector_tile(S);
  std::vector<course::Variant> v = {vector_variant<S, t.rows, t.cols>()};
  if constexpr (S <= 2) v.push_back(shifted_variant<S>());
  v.push_back(scalar_variant<S, false>());
  v.push_back(scalar_variant<S, true>());
  return v;
}

/// Every kernel of the step for one element type, the launcher first.
inline std::vector<course::Variant> variants(course::ElemType type,
                                             const course::Problem* shape = nullptr) {
  std::vector<course::Variant> v = {auto_variant(type, shape)};
  std::vector<course::Variant> p;
  switch (course::elem_size(type)) {
    case 1: p = paths<1>(); break;
    case 2: p = paths<2>(); break;
    case 4: p = paths<4>(); break;
    case 8: p = paths<8>(); break;
    default: p = paths<16>(); break;
  }
  v.insert(v.end(), p.begin(), p.end());
  return v;
}

}  // namespace step08
