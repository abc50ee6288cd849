// Step 08's lab: the kernels tried and not kept, as rows of the lab's table, after the lesson's
// own rows (the launcher and its paths) so that each table compares them in the same run:
//   * the vector kernel with other tile shapes than the launcher's, for every element size;
//   * the realigned vector kernel (realigned.cuh), both sides realigned, for 4- and 8-byte
//     elements: what the launcher took on misaligned rows before the scalar kernel's cut;
//   * the scalar kernel with a 32 x 32 tile for 4- and 8-byte elements, the size it had before
//     the 64 x 64 tile;
//   * the shifted vector kernel (1- and 2-byte elements) at three blocks per SM, with every tile
//     tested, and for int8 on the 128 x 128 tile (shifted.cuh);
//   * the staged kernel (1- and 2-byte elements): cp.async through shared memory (staged.cuh);
//   * the scalar kernel for halves writing two a store (paired.cuh).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "paired.cuh"
#include "realigned.cuh"
#include "shifted.cuh"
#include "staged_variants.cuh"
#include "variants.cuh"

namespace step08_lab {

using step08::tile_text;

/// The realigned vector kernel with both sides realigned, on any shape (on aligned shapes it
/// shows what the realignment costs when it is not needed).
template <int S>
course::Variant realigned_variant() {
  constexpr step08::TileSize t = step08::vector_tile(S);
  return {"realigned", "realigned 16B vectors, both sides", "256", tile_text(t.rows, t.cols),
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            if (!step08::valid_problem(S, p.rows, p.cols, reinterpret_cast<std::uintptr_t>(in),
                                       reinterpret_cast<std::uintptr_t>(out))) {
              return cudaErrorInvalidValue;
            }
            constexpr step08::TileSize vt = step08::vector_tile(S);
            return step08::launch_realigned<S, vt.rows, vt.cols, true, true>(in, out, p.rows,
                                                                             p.cols, s);
          }};
}

/// The shifted vector kernel with a TR x TC tile, launch bounds of MinBlocks blocks per SM, and
/// its full tiles untested (the lesson's) or every tile tested.
template <int S, int TR, int TC, int MinBlocks, bool Untested = true>
course::Variant shifted_lab_variant() {
  std::string name = "shifted vectors, " + tile_text(TR, TC) + " tile";
  std::string id = "shifted-" + tile_text(TR, TC);
  if (MinBlocks > 1) name += ", " + std::to_string(MinBlocks) + " blocks per SM";
  if (MinBlocks > 1) id += "-" + std::to_string(MinBlocks) + "blocks";
  if (!Untested) name += ", every tile tested";
  if (!Untested) id += "-tested";
  return {id, name, "256", tile_text(TR, TC),
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return step08::launch_shift_bounded<S, TR, TC, MinBlocks, Untested>(in, out, p.rows,
                                                                                p.cols, s);
          }};
}

/// The scalar kernel with T x T tiles of TileOf (the lesson's ScalarTile, or paired.cuh's
/// PairedTile) and the launcher's cut, on any shape.
template <int S, int T, template <int, int, bool> class TileOf = step08::ScalarTile>
course::Variant scalar_tile_variant(
    const std::string& id = "scalar-cut-" + tile_text(T, T),
    const std::string& name = "scalar, " + tile_text(T, T) + " tile, writes cut on sectors") {
  return {id, name, "32x8", tile_text(T, T),
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            const auto o = reinterpret_cast<std::uintptr_t>(out);
            if (!step08::valid_problem(S, p.rows, p.cols, reinterpret_cast<std::uintptr_t>(in),
                                       o)) {
              return cudaErrorInvalidValue;
            }
            const bool cut = !step08::rows_start_on(32, S, p.rows, o);
            return step08::launch_scalar<S, T, TileOf>(in, out, p.rows, p.cols, cut, s);
          }};
}

/// The lab's own kernels for one element type.
inline std::vector<course::Variant> lab_variants(course::ElemType type) {
  using step08::vector_variant;
  switch (course::elem_size(type)) {
    case 1:
      return {vector_variant<1, 256, 128>(), shifted_lab_variant<1, 256, 128, 3>(),
              shifted_lab_variant<1, 256, 128, 0, false>(), shifted_lab_variant<1, 128, 128, 1>(),
              staged_variant<1>()};
    case 2:
      return {vector_variant<2, 128, 64>(), vector_variant<2, 64, 128>(),
              shifted_lab_variant<2, 128, 128, 3>(), shifted_lab_variant<2, 128, 128, 0, false>(),
              staged_variant<2>(),
              scalar_tile_variant<2, step08::scalar_tile(2), step08::PairedTile>(
                  "scalar-pairs", "scalar, paired stores, writes cut on sectors")};
    case 4:
      return {vector_variant<4, 128, 64>(), realigned_variant<4>(), scalar_tile_variant<4, 32>()};
    case 8:
      return {vector_variant<8, 64, 32>(), vector_variant<8, 32, 64>(), realigned_variant<8>(),
              scalar_tile_variant<8, 32>()};
    default:
      return {vector_variant<16, 32, 32>()};
  }
}

/// The lab's table: the lesson's rows for the type, then the lab's.
inline std::vector<course::Variant> variants(course::ElemType type,
                                             const course::Problem* shape = nullptr) {
  std::vector<course::Variant> v = step08::variants(type, shape);
  for (course::Variant& lab : lab_variants(type)) v.push_back(std::move(lab));
  return v;
}

}  // namespace step08_lab
