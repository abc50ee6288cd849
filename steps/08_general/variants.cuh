// The kernels of step 08 as the harness and the tests see them, per element type: the launcher
// (what a reader would call), then each path on its own so the table shows what each one costs:
// the vector kernel with a few tile shapes, the realigned vector kernel (4- and 8-byte elements),
// and the scalar kernel with both ways of cutting its writes. A path that cannot take the shape
// refuses it (the row says "refused").
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
  return {"16B vectors, tile " + tile_text(TR, TC), "256", tile_text(TR, TC),
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            const auto i = reinterpret_cast<std::uintptr_t>(in);
            const auto o = reinterpret_cast<std::uintptr_t>(out);
            if (!valid_problem(S, p.rows, p.cols, i, o) || !input_rows_aligned(S, p.cols, i) ||
                !output_rows_aligned(S, p.rows, o)) {
              return cudaErrorInvalidValue;
            }
            return launch_vec<S, TR, TC, false, false>(in, out, p.rows, p.cols, s);
          }};
}

/// The realigned vector kernel with both sides realigned, on any shape: the launcher's choice for
/// misaligned 4- and 8-byte rows before the scalar kernel cut its writes on sectors, kept here for
/// comparison (on aligned shapes it also shows what the realignment costs when not needed).
template <int S>
course::Variant realigned_variant() {
  constexpr TileSize t = vector_tile(S);
  return {"realigned 16B vectors, both sides", "256", tile_text(t.rows, t.cols),
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            if (!valid_problem(S, p.rows, p.cols, reinterpret_cast<std::uintptr_t>(in),
                               reinterpret_cast<std::uintptr_t>(out))) {
              return cudaErrorInvalidValue;
            }
            return launch_vec<S, vector_tile(S).rows, vector_tile(S).cols, true, true>(
                in, out, p.rows, p.cols, s);
          }};
}

/// The scalar kernel alone, on any shape. REALIGN: output rows cut on their sectors when they do
/// not start on one (as the launcher does); without, every tile cuts at its own edge, so the
/// table shows what the realignment buys.
template <int S, bool REALIGN = true>
course::Variant scalar_variant() {
  constexpr int t = scalar_tile(S);
  return {REALIGN ? "scalar, writes cut on sectors" : "scalar, writes cut at tile edges", "32x8",
          tile_text(t, t),
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            if (!valid_problem(S, p.rows, p.cols, reinterpret_cast<std::uintptr_t>(in),
                               reinterpret_cast<std::uintptr_t>(out))) {
              return cudaErrorInvalidValue;
            }
            const bool realign =
                REALIGN && !output_rows_on_sectors(S, p.rows, reinterpret_cast<std::uintptr_t>(out));
            return launch_scalar<S, t>(in, out, p.rows, p.cols, realign, s);
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
  return {name, "256", tile,
          [size](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose(in, out, p.rows, p.cols, size, s);
          }};
}

/// Every kernel of the step for one element type, the launcher first.
inline std::vector<course::Variant> variants(course::ElemType type,
                                             const course::Problem* shape = nullptr) {
  std::vector<course::Variant> v = {auto_variant(type, shape)};
  switch (course::elem_size(type)) {
    case 1:
      v.push_back(vector_variant<1, 128, 128>());
      v.push_back(vector_variant<1, 256, 128>());
      v.push_back(scalar_variant<1, false>());
      v.push_back(scalar_variant<1>());
      break;
    case 2:
      v.push_back(vector_variant<2, 128, 64>());
      v.push_back(vector_variant<2, 64, 128>());
      v.push_back(vector_variant<2, 128, 128>());
      v.push_back(scalar_variant<2, false>());
      v.push_back(scalar_variant<2>());
      break;
    case 4:
      v.push_back(vector_variant<4, 64, 64>());
      v.push_back(vector_variant<4, 128, 64>());
      v.push_back(realigned_variant<4>());
      v.push_back(scalar_variant<4, false>());
      v.push_back(scalar_variant<4>());
      break;
    case 8:
      v.push_back(vector_variant<8, 64, 32>());
      v.push_back(vector_variant<8, 32, 64>());
      v.push_back(vector_variant<8, 32, 32>());
      v.push_back(realigned_variant<8>());
      v.push_back(scalar_variant<8, false>());
      v.push_back(scalar_variant<8>());
      break;
    default:
      v.push_back(vector_variant<16, 32, 32>());
      v.push_back(vector_variant<16, 16, 16>());
      v.push_back(scalar_variant<16, false>());
      v.push_back(scalar_variant<16>());
      break;
  }
  return v;
}

}  // namespace step08
