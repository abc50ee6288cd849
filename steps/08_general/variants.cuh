// The kernels of step 08 as the harness and the tests see them, per element type: the launcher
// (what a reader would call), then each of its kernels on its own, so that the table shows what
// each costs on every shape: the vector kernel with the launcher's tile for the type, the
// shifted vectors (1- and 2-byte elements), and the scalar kernel with its writes cut at the
// tile's edges and on the output rows' sectors. A kernel that cannot take the shape refuses it
// (the row says "refused"). The tile shapes and kernels tried and not kept are in lab/.
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
            if (!valid_problem(S, p.rows, p.cols, i, o) || !rows_start_on(16, S, p.cols, i) ||
                !rows_start_on(16, S, p.rows, o)) {
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
            return launch_shift<S, st.rows, st.cols>(in, out, p.rows, p.cols,
                                                     !rows_start_on(32, S, p.rows, o), s);
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
            const bool cut = CUT && !rows_start_on(32, S, p.rows, o);
            return launch_scalar<S, t>(in, out, p.rows, p.cols, cut, s);
          }};
}

/// The name of a plan's path as the table shows it: "16B vectors", "scalar, sector-aligned
/// writes", ...; and the tile it runs for S-byte elements.
inline std::string describe(const Plan& plan) {
  switch (plan.path) {
    case Path::copy: return "copy";
    case Path::vector: return "16B vectors";
    case Path::shifted:
      return std::string(plan.cut ? "shifted vectors, sector-aligned writes" : "shifted vectors") +
             (plan.min_blocks ? ", " + std::to_string(plan.min_blocks) + " blocks per SM" : "");
    default: return plan.cut ? "scalar, sector-aligned writes" : "scalar";
  }
}
template <int S>
std::string tile_of(const Plan& plan) {
  switch (plan.path) {
    case Path::copy: return "-";
    case Path::vector: return tile_text(vector_tile(S).rows, vector_tile(S).cols);
    case Path::shifted: return tile_text(shift_tile(S).rows, shift_tile(S).cols);
    default: return tile_text(scalar_tile(S), scalar_tile(S));
  }
}

/// The launcher for S-byte elements. With @p shape, the name says which path it takes for that
/// shape on this GPU (in buffers from cudaMalloc, which are 256-byte aligned).
template <int S>
course::Variant launcher_variant(const course::Problem* shape) {
  std::string name = "auto", tile = "-";
  Plan plan;
  if (shape && plan_transpose(S, shape->rows, shape->cols, 256, 256, &plan, current_gpu())) {
    name += ": " + describe(plan);
    tile = tile_of<S>(plan);
  }
  return {"auto", name, "256", tile,
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose_elements<S>(in, out, p.rows, p.cols, s);
          }};
}

/// Every kernel of the step for S-byte elements, the launcher first.
template <int S>
std::vector<course::Variant> variants_of(const course::Problem* shape) {
  constexpr TileSize t = vector_tile(S);
  std::vector<course::Variant> v = {launcher_variant<S>(shape),
                                    vector_variant<S, t.rows, t.cols>()};
  if constexpr (S <= 2) v.push_back(shifted_variant<S>());
  v.push_back(scalar_variant<S, false>());
  v.push_back(scalar_variant<S, true>());
  return v;
}

/// From --type to the kernels: the element size picks the templates.
inline std::vector<course::Variant> variants(course::ElemType type,
                                             const course::Problem* shape = nullptr) {
  switch (course::elem_size(type)) {
    case 1: return variants_of<1>(shape);
    case 2: return variants_of<2>(shape);
    case 4: return variants_of<4>(shape);
    case 8: return variants_of<8>(shape);
    default: return variants_of<16>(shape);
  }
}

/// The launcher alone (the first row of the table).
inline course::Variant auto_variant(course::ElemType type,
                                    const course::Problem* shape = nullptr) {
  return variants(type, shape).front();
}

}  // namespace step08
