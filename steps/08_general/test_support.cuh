// Step 08 tests: what the step's test.cu and the lab's share. The parameter of the GPU tests (one
// kernel of one element type), the test shapes, and the kernels' own code run on the CPU.
//
// The halves of each kernel are
// __host__ __device__ functions of the thread index, so the CPU can run a block exactly as the
// GPU would: every thread through the load half, then (the barrier) every thread through the
// store half, on a "shared memory" array framed by poison that must stay intact. This checks the
// index arithmetic of every path on every shape without a GPU. Also here: the bank-conflict
// degree of one warp access, and the layout check of a vector tile.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bank_model.hpp"
#include "harness.cuh"
#include "host_data.hpp"
#include "shapes.hpp"
#include "transpose.cuh"

namespace step08_test {

/// One GPU test case: a kernel of the table for one element type.
struct Case {
  course::ElemType type;
  course::Variant variant;
  bool may_refuse;  ///< the vector kernels refuse misaligned rows; every other kernel must run
};

inline void PrintTo(const Case& c, std::ostream* os) {
  *os << course::elem_name(c.type) << " " << c.variant.name;
}

/// The cases of @p list(type) for every element type.
template <class List>
std::vector<Case> cases_of(const List& list) {
  std::vector<Case> cases;
  for (course::ElemType t : course::all_elem_types()) {
    for (const course::Variant& v : list(t)) {
      cases.push_back({t, v, v.name.rfind("16B vectors", 0) == 0});
    }
  }
  return cases;
}

/// A GoogleTest-safe name: "f32_scalar__writes_cut_on_sectors".
inline std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name =
      std::string(course::elem_name(info.param.type)) + "_" + info.param.variant.name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// Shapes whose rows start on 16 bytes for every element size (multiples of 16 elements) but
// that are not multiples of any tile: the vector kernels must take them, edge tiles included.
// (Misaligned neighbours, for the shifted kernel: misaligned_shapes below.)
inline const std::vector<course::Shape>& aligned_edge_shapes() {
  static const std::vector<course::Shape> shapes = {
      {16, 16}, {16, 48}, {48, 272}, {272, 48}, {144, 400}, {1168, 48}, {48, 1168}, {2320, 80},
  };
  return shapes;
}

// Rows off 16 bytes on one side or both, several tiles tall and wide (the shifted kernel's first,
// middle and last tile rows), and rows shorter than a vector.
inline const std::vector<course::Shape>& misaligned_shapes() {
  static const std::vector<course::Shape> shapes = {
      {513, 259}, {512, 259}, {513, 256}, {496, 1000}, {1000, 488}, {3, 4099}, {4099, 3},
  };
  return shapes;
}

inline std::vector<course::Shape> every_test_shape() {
  std::vector<course::Shape> shapes = course::awkward_shapes();
  for (const course::Shape& s : aligned_edge_shapes()) shapes.push_back(s);
  return shapes;
}

// The rest is host code that runs the kernels' __host__ __device__ halves. nvcc compiles a .cu
// file twice, for the device and for the host; in the device pass, every __host__ __device__
// function that host code instantiates is also compiled as a stand-alone device function, which
// nearly doubled the tests' device compile time. No kernel is launched from here, so the device
// pass can skip it.
#ifndef __CUDA_ARCH__

constexpr std::size_t kGuard = 256;

inline std::uint8_t* aligned16(std::vector<std::uint8_t>& v) {
  const auto p = reinterpret_cast<std::uintptr_t>(v.data());
  return v.data() + (16 - p % 16) % 16;
}

/// Runs a 16-byte-vector tile kernel block by block: Tile is step08::VecTile<S, TR, TC> or a
/// lab tile with the same load/store halves.
template <class Tile>
void emulate_tiles(const std::uint8_t* in, std::uint8_t* out, std::int64_t rows,
                   std::int64_t cols) {
  using L = typename Tile::L;
  constexpr std::size_t n = L::kBytes;
  std::vector<std::uint8_t> storage(n + 2 * kGuard + 16);
  std::uint8_t* const smem = aligned16(storage) + kGuard;
  const step08::TileGrid grid = step08::make_grid(rows, cols, L::kRows, L::kCols, L::kElem);
  for (std::uint32_t b = 0; b < grid.tiles(); ++b) {
    std::fill(smem - kGuard, smem + n + kGuard, course::kPoisonByte);
    std::int64_t ty, tx;
    grid.tile(b, &ty, &tx);
    const step08::Corner at{ty * L::kRows, tx * L::kCols};
    for (unsigned t = 0; t < step08::kThreads; ++t) Tile::load(t, in, rows, cols, at, smem);
    for (unsigned t = 0; t < step08::kThreads; ++t) Tile::store(t, out, rows, cols, at, smem);
    for (std::size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(smem[-1 - static_cast<std::ptrdiff_t>(i)], course::kPoisonByte)
          << "wrote before the tile";
      ASSERT_EQ(smem[n + i], course::kPoisonByte) << "wrote past the tile";
    }
  }
}

template <int S, int TR, int TC>
void emulate_vec(const std::uint8_t* in, std::uint8_t* out, std::int64_t rows, std::int64_t cols) {
  emulate_tiles<step08::VecTile<S, TR, TC>>(in, out, rows, cols);
}

/// The scalar kernel with T x T tiles, block by block, on @p grid (the launcher's by default);
/// TileOf as transpose_scalar takes it.
template <int S, int T, bool Cut, template <int, int, bool> class TileOf = step08::ScalarTile>
void emulate_scalar_on(const step08::TileGrid& grid, const std::uint8_t* in, std::uint8_t* out,
                       std::int64_t rows, std::int64_t cols) {
  using Tile = TileOf<S, T, Cut>;
  using E = typename Tile::E;
  struct Shared {
    typename Tile::Array tile;
  };
  auto smem = std::make_unique<Shared>();
  const int phase = static_cast<int>(reinterpret_cast<std::uintptr_t>(out) / S % Tile::kSector);
  const auto* src = reinterpret_cast<const E*>(in);
  auto* dst = reinterpret_cast<E*>(out);
  for (std::uint32_t b = 0; b < grid.tiles(); ++b) {
    std::int64_t ty, tx;
    grid.tile(b, &ty, &tx);
    const std::int64_t r0 = ty * T, c0 = tx * T;
    const bool last = ty == grid.tiles_r - 1;
    // The same branch as the kernel: whole tiles take the path without bounds tests.
    const bool whole = Tile::whole(rows, cols, r0, c0);
    for (unsigned t = 0; t < step08::kThreads; ++t) {
      if (whole) Tile::template load<true>(t, src, rows, cols, r0, c0, smem->tile);
      else Tile::template load<false>(t, src, rows, cols, r0, c0, smem->tile);
    }
    for (unsigned t = 0; t < step08::kThreads; ++t) {
      if (whole) Tile::template store<true>(t, dst, rows, cols, r0, c0, phase, last, smem->tile);
      else Tile::template store<false>(t, dst, rows, cols, r0, c0, phase, last, smem->tile);
    }
  }
}

template <int S, int T>
void emulate_scalar(const std::uint8_t* in, std::uint8_t* out, std::int64_t rows,
                    std::int64_t cols, bool cut) {
  const step08::TileGrid grid = step08::make_grid(rows, cols, T, T, S);
  return cut ? emulate_scalar_on<S, T, true>(grid, in, out, rows, cols)
             : emulate_scalar_on<S, T, false>(grid, in, out, rows, cols);
}

/// The shifted kernel, block by block. Its load half needs a shuffle between lanes, so it runs in
/// two rounds as on the GPU: every thread fetches, then lane t takes lane t + 1's vectors (within
/// each 8 lanes, as __shfl_down_sync(..., 1, 8) gives them), then every thread packs. Untested:
/// full tiles skip the tests, as in the lesson's kernel (false: every tile tested, the lab's row).
template <int S, int TR, int TC, bool Untested = true>
void emulate_shift(const std::uint8_t* in, std::uint8_t* out, std::int64_t rows,
                   std::int64_t cols) {
  using Tile = step08::ShiftTile<S, TR, TC>;
  constexpr std::size_t n = Tile::L::kBytes;
  const auto o = reinterpret_cast<std::uintptr_t>(out);
  const int lead = step08::rows_start_on(32, S, rows, o) ? 0 : Tile::kLead;
  const int phase = static_cast<int>(o / S % Tile::kSector);
  std::vector<std::uint8_t> storage(n + 2 * kGuard + 16);
  std::uint8_t* const smem = aligned16(storage) + kGuard;
  std::vector<typename Tile::Fetched> f(step08::kThreads);
  const step08::TileGrid grid = step08::make_grid(rows, cols, TR - lead, TC, S);
  for (std::uint32_t b = 0; b < grid.tiles(); ++b) {
    std::fill(smem - kGuard, smem + n + kGuard, course::kPoisonByte);
    std::int64_t ty, tx;
    grid.tile(b, &ty, &tx);
    const step08::Corner top{ty * (TR - lead) - lead, tx * TC};
    const bool last = ty == grid.tiles_r - 1;
    const bool full =
        Untested && Tile::full(reinterpret_cast<std::uintptr_t>(in), rows, cols, top, last);
    for (unsigned t = 0; t < step08::kThreads; ++t) {
      if (full) Tile::template fetch<true>(t, in, rows, cols, top, f[t]);
      else Tile::template fetch<false>(t, in, rows, cols, top, f[t]);
    }
    for (unsigned t = 0; t < step08::kThreads; ++t) {
      if (t % 8 == 7) continue;
      for (int p = 0; p < Tile::P; ++p)
        for (int i = 0; i < Tile::k; ++i) f[t].next[p][i] = f[t + 1].v[p][i];
    }
    for (unsigned t = 0; t < step08::kThreads; ++t) Tile::pack(t, f[t], cols, top, smem);
    for (unsigned t = 0; t < step08::kThreads; ++t) {
      if (full) Tile::template store<true>(t, out, rows, cols, top, lead, phase, last, smem);
      else Tile::template store<false>(t, out, rows, cols, top, lead, phase, last, smem);
    }
    for (std::size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(smem[-1 - static_cast<std::ptrdiff_t>(i)], course::kPoisonByte)
          << "wrote before the tile";
      ASSERT_EQ(smem[n + i], course::kPoisonByte) << "wrote past the tile";
    }
  }
}

using Runner = std::function<void(const std::uint8_t*, std::uint8_t*, std::int64_t, std::int64_t)>;

/// Transposes a fresh pattern with @p run into a poisoned output framed by guard bands, with the
/// input starting @p shift bytes past a 16-byte boundary and the output @p output_shift bytes
/// (the same by default), and checks every bit.
inline void check_emulated(const Runner& run, course::ElemType type, std::int64_t rows,
                           std::int64_t cols, std::size_t shift = 0,
                           std::optional<std::size_t> output_shift = std::nullopt) {
  const course::Problem p{type, rows, cols, 1};
  const std::size_t n = p.bytes();
  const std::size_t out_shift = output_shift.value_or(shift);
  SCOPED_TRACE(p.describe() + ", buffers shifted by " + std::to_string(shift) + " and " +
               std::to_string(out_shift));
  std::vector<std::uint8_t> in_store(n + 16 + shift), out_store(n + 2 * kGuard + 16 + out_shift);
  std::uint8_t* in = aligned16(in_store) + shift;
  std::uint8_t* out_frame = aligned16(out_store);
  std::uint8_t* out = out_frame + kGuard + out_shift;
  const std::uint64_t seed = course::fresh_seed();
  course::fill_pattern(type, in, p.elements(), seed);
  std::vector<std::uint8_t> ref(n);
  course::cpu_transpose(p, in, ref.data());
  std::fill(out_frame, out_frame + n + 2 * kGuard + out_shift, course::kPoisonByte);
  run(in, out, rows, cols);
  if (::testing::Test::HasFatalFailure()) return;
  for (std::uint8_t* g = out_frame; g < out; ++g) {
    ASSERT_EQ(*g, course::kPoisonByte) << "wrote before the output";
  }
  for (std::size_t i = 0; i < kGuard; ++i) {
    ASSERT_EQ(out[n + i], course::kPoisonByte) << "wrote past the output";
  }
  const course::VerifyResult r = course::verify_transpose(p, ref.data(), out);
  ASSERT_TRUE(r.ok) << "seed " << seed << ": " << r.message;
}

/// The conflict degree of one warp instruction in which lane i touches `bytes` bytes at byte
/// offset addr[i] (-1: inactive). Accesses wider than 4 bytes are served a part of the warp at
/// a time (8 bytes: half a warp, 16 bytes: a quarter), so each part is scored on its own.
inline int degree(const std::vector<int>& addr, int bytes) {
  const int lanes_per_phase = bytes <= 4 ? 32 : 128 / bytes;
  int worst = 1;
  for (int begin = 0; begin < 32; begin += lanes_per_phase) {
    std::vector<std::int64_t> words;
    for (int lane = begin; lane < begin + lanes_per_phase; ++lane) {
      if (addr[lane] < 0) continue;
      for (int w = 0; w < (bytes < 4 ? 1 : bytes / 4); ++w) words.push_back(addr[lane] / 4 + w);
    }
    worst = std::max(worst, course::conflict_degree(words));
  }
  return worst;
}

/// A vector tile's layout as plain values, so that the layout check below is compiled once and
/// not once per tile shape.
struct Layout {
  int elem, rows, cols, unit, vec, unit_rows, units_per_chunk, row_bytes, in_vecs, out_chunks,
      bytes, load_passes, store_passes;
  unsigned (*unit_offset)(unsigned c, unsigned u);
  unsigned (*chunk_offset)(unsigned c, unsigned q);
};

template <int S, int TR, int TC>
Layout layout_of() {
  using L = step08::TileShape<S, TR, TC>;
  return {S,         TR,         TC,           L::kUnit,         L::kVec,
          L::kUnitRows, 16 / L::kUnit,   L::kRowBytes, L::kInVecs, L::kOutChunks,
          L::kBytes, L::kLoadPasses, L::kStorePasses, &L::unit_offset, &L::chunk_offset};
}

/// The shared-memory layout of a vector tile: every unit has its own place, the load phase
/// covers each (vector, unit row) once and writes its units without bank conflicts, and the
/// store phase reads 16-byte chunks without bank conflicts.
inline void check_layout(const Layout& L) {
  SCOPED_TRACE(std::to_string(L.elem) + "-byte elements, tile " + std::to_string(L.rows) + "x" +
               std::to_string(L.cols));
  std::set<int> seen;
  for (int c = 0; c < L.cols; ++c)
    for (int u = 0; u < L.unit_rows; ++u) {
      const int off = static_cast<int>(L.unit_offset(c, u));
      ASSERT_TRUE(off >= 0 && off + L.unit <= L.bytes && off % L.unit == 0);
      ASSERT_TRUE(seen.insert(off).second) << "unit (" << c << ", " << u << ") stored twice";
      ASSERT_EQ(off, static_cast<int>(L.chunk_offset(c, u / L.units_per_chunk)) +
                         u % L.units_per_chunk * L.unit);
      // The kernel's shortcut: the columns of one vector share the swizzle of its first column.
      const int first = c / L.vec * L.vec;
      ASSERT_EQ(off, static_cast<int>(L.unit_offset(first, u)) + (c - first) * L.row_bytes);
    }
  std::set<std::pair<int, int>> slots;
  for (int p = 0; p < L.load_passes; ++p)
    for (int warp = 0; warp < step08::kThreads / 32; ++warp)
      for (int e = 0; e < L.vec; ++e) {
        std::vector<int> addr(32);
        for (int lane = 0; lane < 32; ++lane) {
          const step08::Slot s = step08::load_slot(L.in_vecs, 32 * warp + lane, p);
          ASSERT_LT(s.vec, L.in_vecs);
          ASSERT_LT(s.row, L.unit_rows);
          if (e == 0) ASSERT_TRUE(slots.insert({s.vec, s.row}).second);
          addr[lane] = static_cast<int>(L.unit_offset(s.vec * L.vec + e, s.row));
        }
        EXPECT_EQ(degree(addr, L.unit), 1) << "unit write, pass " << p << ", element " << e;
      }
  EXPECT_EQ(slots.size(), static_cast<std::size_t>(L.in_vecs * L.unit_rows));
  for (int p = 0; p < L.store_passes; ++p)
    for (int warp = 0; warp < step08::kThreads / 32; ++warp) {
      std::vector<int> addr(32);
      for (int lane = 0; lane < 32; ++lane) {
        const int f = 32 * warp + lane + step08::kThreads * p;
        addr[lane] = static_cast<int>(L.chunk_offset(f / L.out_chunks, f % L.out_chunks));
      }
      EXPECT_EQ(degree(addr, 16), 1) << "chunk read, pass " << p;
    }
}

template <int S, int TR, int TC>
void check_layout() {
  check_layout(layout_of<S, TR, TC>());
}

#endif  // __CUDA_ARCH__

}  // namespace step08_test
