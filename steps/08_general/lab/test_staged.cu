// Step 08's lab tests: the staged kernel (staged.cuh), held to the lesson's standards (fresh
// random inputs, poisoned outputs in guard bands, bitwise compares). The lab's test.cu runs it
// on the awkward shapes with the lab's other kernels; here are the shapes and grids of its own.
//   GPU: misaligned shapes of bytes and halves from and to buffers off 16 bytes, grids of other
//        sizes than one wave (Step08StagedSmall: small enough for the sanitizers), the step's
//        misaligned targets, and (label large) the timed shapes and past 2^31 elements.
//   CPU: the grid, the kernel's own code run block by block and thread by thread (cp.async
//        copies landing at once and as late as the waits allow), every output element written
//        once with no sector shared inside a row, and no bank conflict in any phase.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "check.cuh"
#include "staged_variants.cuh"
#include "test_support.cuh"
#include "testing.cuh"

namespace {

using course::ElemType;
using course::Problem;
using course::Variant;

constexpr int kH = 64;  // the lab's step height
template <int S>
using Strip = step08::StagedStrip<S, kH>;

Variant staged(ElemType t, std::int64_t capacity = 0) {
  return course::elem_size(t) == 1 ? step08_lab::staged_variant<1>(capacity)
                                   : step08_lab::staged_variant<2>(capacity);
}

// Rows off 16 bytes on one side or both, several steps and strips, rows shorter than a vector,
// 1 x N, N x 1: at most half a million elements, so that the sanitizers run them quickly.
std::vector<course::Shape> small_misaligned() {
  std::vector<course::Shape> shapes = {{1, 4097}, {4097, 1}, {3, 40001}, {40001, 3}, {130, 70}};
  for (const course::Shape& s : step08_test::misaligned_shapes()) shapes.push_back(s);
  return shapes;
}

// ---- GPU ---------------------------------------------------------------------------------------

// Both buffers 0, 1 element, 5 elements and 14 bytes past 16 bytes.
void check_offsets(const std::vector<course::Shape>& shapes) {
  for (ElemType t : {ElemType::i8, ElemType::f16, ElemType::bf16}) {
    const std::size_t size = course::elem_size(t);
    for (const course::Shape& s : shapes) {
      for (std::size_t shift : {std::size_t{0}, size, 5 * size, std::size_t{14}}) {
        EXPECT_TRUE(course::check_transpose(staged(t), Problem{t, s.rows, s.cols, 1}, false,
                                            shift));
      }
    }
  }
}

TEST(Step08StagedSmall, TransposesMisalignedShapesFromAndToAnyOffset) {
  REQUIRE_GPU();
  check_offsets(small_misaligned());
}

// Grids other than one wave: one block per strip (no lead rows, strips longer than a wave), and
// one block per step (a lead on every block).
TEST(Step08StagedSmall, TransposesOnGridsOfOtherSizes) {
  REQUIRE_GPU();
  for (ElemType t : {ElemType::i8, ElemType::f16}) {
    for (std::int64_t capacity : {1, 7, 1 << 20}) {
      for (const course::Shape& s : {course::Shape{1000, 777}, course::Shape{777, 1000},
                                     course::Shape{4099, 3}}) {
        EXPECT_TRUE(course::check_transpose(staged(t, capacity), Problem{t, s.rows, s.cols, 1},
                                            false, course::elem_size(t)));
      }
    }
  }
}

TEST(Step08Staged, TransposesTheStepsMisalignedTargetsFromAndToAnyOffset) {
  REQUIRE_GPU();
  check_offsets({{4095, 4097}, {4096, 4097}, {4097, 4096}});
}

// The shapes the lab times, misaligned and aligned: hundreds of MB, so labelled large (not for
// the sanitizers).
TEST(Step08StagedLarge, TransposesTheTimedShapes) {
  REQUIRE_GPU();
  for (ElemType t : {ElemType::i8, ElemType::f16, ElemType::bf16}) {
    for (const course::Shape& s : {course::Shape{12345, 6789}, course::Shape{16385, 8191},
                                   course::Shape{16384, 16384}}) {
      EXPECT_TRUE(course::check_transpose(staged(t), Problem{t, s.rows, s.cols, 1}));
    }
  }
}

std::int64_t host_memory_available() {  // bytes, from /proc/meminfo; 0 when unknown
  std::ifstream f("/proc/meminfo");
  std::string key, unit;
  std::int64_t kb = 0;
  while (f >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

// Past 2^31 elements (and, for halves, past 2^32 bytes): every offset must be 64-bit. The
// check holds the input, the reference and the output on the host, two matrices on the device.
void check_large(ElemType type, std::int64_t rows, std::int64_t cols) {
  const Problem p{type, rows, cols, 1};
  const std::size_t n = p.bytes(), margin = std::size_t{1} << 30;
  std::size_t free_dev = 0, total_dev = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_dev, &total_dev));
  if (free_dev < 2 * n + margin / 4) {
    GTEST_SKIP() << p.describe() << " needs " << (2 * n >> 20) << " MiB of device memory, "
                 << (free_dev >> 20) << " MiB is free";
  }
  if (host_memory_available() < static_cast<std::int64_t>(3 * n + margin)) {
    GTEST_SKIP() << p.describe() << " needs " << ((3 * n + margin) >> 20)
                 << " MiB of host memory";
  }
  EXPECT_TRUE(course::check_transpose(staged(type), p));
}

TEST(Step08StagedLarge, I8Over2To31Elements) {
  REQUIRE_GPU();
  check_large(ElemType::i8, 46341, 46341);
}

TEST(Step08StagedLarge, F16Over2To32Bytes) {
  REQUIRE_GPU();
  check_large(ElemType::f16, 46341, 46341);
}

// ---- CPU: the grid and the refusals ------------------------------------------------------------

// Every step of every strip belongs to exactly one block; one wave where the strips allow it.
TEST(CpuStep08Staged, GridCoversEveryStepOnce) {
  for (std::int64_t rows : {1, 63, 64, 65, 4097, 12345, 1 << 20})
    for (std::int64_t cols : {1, 100, 128, 129, 6789, 300000})
      for (std::int64_t capacity : {0, 1, 7, 792, 1 << 20}) {
        SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols) + ", capacity " +
                     std::to_string(capacity));
        step08::StripGrid g;
        ASSERT_TRUE(step08::make_strips(rows, cols, kH, 128, capacity, &g));
        ASSERT_EQ(g.strips, static_cast<std::uint32_t>((cols + 127) / 128));
        ASSERT_EQ(g.steps, static_cast<std::uint32_t>((rows + kH - 1) / kH));
        ASSERT_GE(std::int64_t{g.chunks} * g.per_block, g.steps);  // every step has a block
        ASSERT_LT(std::int64_t{g.chunks - 1} * g.per_block, g.steps);  // and every block a step
        ASSERT_LE(g.blocks(), std::max<std::int64_t>(capacity, g.strips));
      }
  step08::StripGrid g;
  EXPECT_FALSE(step08::make_strips(std::int64_t{1} << 40, 1, kH, 128, 1, &g));  // 2^34 steps
  EXPECT_FALSE(step08::make_strips(1, std::int64_t{1} << 40, kH, 128, 1, &g));  // 2^33 strips
}

TEST(CpuStep08Staged, RefusesBeforeLaunching) {
  void* p = reinterpret_cast<void*>(std::uintptr_t{0x1000});
  void* odd = reinterpret_cast<void*>(std::uintptr_t{0x1001});
  EXPECT_EQ((step08::launch_staged<1, kH>(p, p, 0, 64, nullptr)), cudaErrorInvalidValue);
  EXPECT_EQ((step08::launch_staged<2, kH>(odd, p, 64, 64, nullptr)), cudaErrorInvalidValue);
  EXPECT_EQ((step08::launch_staged_on<2, kH>(1, p, odd, 64, 64, nullptr)), cudaErrorInvalidValue);
  EXPECT_EQ((step08::launch_staged_on<1, kH>(1, p, p, std::int64_t{1} << 40, 1, nullptr)),
            cudaErrorInvalidValue);
}

// The CPU tests from here on run host code only (see test_support.cuh).
#ifndef __CUDA_ARCH__

// ---- CPU: the kernel, block by block -----------------------------------------------------------

/// A block of kThreads threads on the CPU. Each phase runs every thread in turn; cp.async copies
/// are kept per thread in the groups it commits, and land either at once or as late as the
/// kernel's waits allow (wait_prior completes all of a thread's groups but its newest), so a
/// missing wait or a buffer reused too early shows as poison in the output. Two phases without
/// a barrier between them fail.
struct EmuBlock {
  struct Copy {
    std::uint8_t* dst;
    const std::uint8_t* src;
  };
  bool late;
  bool synced = true;
  std::vector<std::vector<std::vector<Copy>>> groups;  // per thread: committed groups, open one

  EmuBlock(int threads, bool late_)
      : late(late_), groups(threads, std::vector<std::vector<Copy>>(1)) {}

  static constexpr int kHeld = 128;  // every thread's own variables: the kernel's threads
  static unsigned held(unsigned t) { return t; }

  template <class F>
  void each(F&& f) {
    EXPECT_TRUE(synced) << "two phases without a barrier between them";
    synced = false;
    for (unsigned t = 0; t < groups.size(); ++t) f(t);
  }
  void sync() { synced = true; }
  void copy16(unsigned t, std::uint8_t* dst, const std::uint8_t* src) {
    step08::expect_aligned<16>(dst);
    step08::expect_aligned<16>(src);
    if (late) {
      groups[t].back().push_back({dst, src});
    } else {
      std::memcpy(dst, src, 16);
    }
  }
  void commit(unsigned t) { groups[t].emplace_back(); }
  void wait_prior(unsigned t) {
    auto& g = groups[t];  // [committed..., newest committed, open]
    while (g.size() > 2) {
      for (const Copy& c : g.front()) std::memcpy(c.dst, c.src, 16);
      g.erase(g.begin());
    }
  }
  /// Copies issued and never waited for: a block must end with none.
  std::size_t pending() const {
    std::size_t n = 0;
    for (const auto& thread : groups)
      for (const auto& group : thread) n += group.size();
    return n;
  }
};

using step08_test::kGuard;

/// The staged kernel, block by block, on a grid for @p capacity resident blocks.
template <int S>
void emulate_staged(const std::uint8_t* in, std::uint8_t* out, std::int64_t rows,
                    std::int64_t cols, std::int64_t capacity, bool late) {
  using T = Strip<S>;
  static_assert(T::kThreads <= EmuBlock::kHeld, "a Mine per thread");
  const auto o = reinterpret_cast<std::uintptr_t>(out);
  step08::StripGrid g;
  ASSERT_TRUE(step08::make_strips(rows, cols, kH, T::TC, capacity, &g));
  constexpr std::size_t n = sizeof(typename T::Smem);
  std::vector<std::uint8_t> storage(n + 2 * kGuard + 16);
  std::uint8_t* const smem = step08_test::aligned16(storage) + kGuard;
  for (std::uint32_t b = 0; b < g.blocks(); ++b) {
    std::fill(smem - kGuard, smem + n + kGuard, course::kPoisonByte);
    EmuBlock blk(T::kThreads, late);
    T::run(blk, in, out, rows, cols, g, b, T::lead_for(rows, o), T::phase_for(o),
           *reinterpret_cast<typename T::Smem*>(smem));
    ASSERT_EQ(blk.pending(), 0u) << "block " << b << " left copies in flight";
    for (std::size_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(smem[-1 - static_cast<std::ptrdiff_t>(i)], course::kPoisonByte) << "before smem";
      ASSERT_EQ(smem[n + i], course::kPoisonByte) << "past smem";
    }
  }
}

template <int S>
step08_test::Runner staged_runner(std::int64_t capacity, bool late) {
  return [capacity, late](const std::uint8_t* in, std::uint8_t* out, std::int64_t r,
                          std::int64_t c) { emulate_staged<S>(in, out, r, c, capacity, late); };
}

// The small misaligned shapes, the step's misaligned targets and their one-side-aligned neighbours.
std::vector<course::Shape> misaligned_and_small() {
  std::vector<course::Shape> shapes = {{4095, 4097}, {4096, 4097}, {4097, 4096}};
  for (const course::Shape& s : small_misaligned()) shapes.push_back(s);
  return shapes;
}

// Every shape of the step's tests with the copies landing at once, then with the copies late.
template <int S>
void check_every_shape(ElemType type, bool late) {
  SCOPED_TRACE(std::string(course::elem_name(type)) +
               (late ? ", copies late" : ", copies at once"));
  std::vector<course::Shape> shapes = step08_test::every_test_shape();
  for (const course::Shape& s : misaligned_and_small()) shapes.push_back(s);
  for (const course::Shape& s : shapes) {
    step08_test::check_emulated(staged_runner<S>(792, late), type, s.rows, s.cols);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(CpuStep08StagedEmulated, BytesOnEveryShape) { check_every_shape<1>(ElemType::i8, false); }
TEST(CpuStep08StagedEmulated, HalvesOnEveryShape) { check_every_shape<2>(ElemType::bf16, false); }
TEST(CpuStep08StagedEmulated, BytesOnEveryShapeCopiesLate) {
  check_every_shape<1>(ElemType::i8, true);
}
TEST(CpuStep08StagedEmulated, HalvesOnEveryShapeCopiesLate) {
  check_every_shape<2>(ElemType::f16, true);
}

// The course's int8 pattern repeats every 128 elements, so it cannot tell step k from step
// k + 2 (128 rows apart) whatever the row length: here the bytes come from the 32-bit pattern
// instead, which does not repeat. Otherwise as check_emulated.
void check_bytes_emulated(const step08_test::Runner& run, std::int64_t rows, std::int64_t cols,
                          std::size_t shift) {
  const Problem p{ElemType::i8, rows, cols, 1};
  const std::size_t n = p.bytes();
  SCOPED_TRACE(p.describe() + ", buffers shifted by " + std::to_string(shift));
  std::vector<std::uint8_t> in_store(n + 16 + shift + 4), out_store(n + 2 * kGuard + 16 + shift);
  std::uint8_t* in = step08_test::aligned16(in_store) + shift;
  std::uint8_t* out = step08_test::aligned16(out_store) + kGuard + shift;
  const std::uint64_t seed = course::fresh_seed();
  std::vector<std::uint8_t> words((n + 3) / 4 * 4);
  course::fill_pattern(ElemType::f32, words.data(), static_cast<std::int64_t>(words.size() / 4),
                       seed);
  std::memcpy(in, words.data(), n);
  std::vector<std::uint8_t> ref(n);
  course::cpu_transpose(p, in, ref.data());
  std::fill(out - kGuard, out + n + kGuard, course::kPoisonByte);
  run(in, out, rows, cols);
  if (::testing::Test::HasFatalFailure()) return;
  for (std::size_t i = 1; i <= kGuard; ++i) {
    ASSERT_EQ(out[-static_cast<std::ptrdiff_t>(i)], course::kPoisonByte) << "before the output";
    ASSERT_EQ(out[n + i - 1], course::kPoisonByte) << "past the output";
  }
  const course::VerifyResult r = course::verify_transpose(p, ref.data(), out);
  ASSERT_TRUE(r.ok) << "seed " << seed << ": " << r.message;
}

// Buffers 1 to 15 bytes past 16 (every row then has its own offset on both sides), on grids of
// one block per strip, a few blocks per strip, and one block per step; bytes that never repeat.
TEST(CpuStep08StagedEmulated, BuffersOffSixteenBytesOnEveryGrid) {
  std::vector<course::Shape> shapes = step08_test::misaligned_shapes();
  shapes.push_back({1000, 777});
  shapes.push_back({130, 70});
  for (std::int64_t capacity : {1, 7, 1 << 20})
    for (const course::Shape& s : shapes)
      for (std::size_t shift : {0, 1, 2, 5, 14}) {
        SCOPED_TRACE("capacity " + std::to_string(capacity));
        check_bytes_emulated(staged_runner<1>(capacity, shift % 2 == 1), s.rows, s.cols, shift);
        if (shift % 2 == 0) {
          step08_test::check_emulated(staged_runner<2>(capacity, shift == 14), ElemType::f16,
                                      s.rows, s.cols, shift);
        }
        if (HasFatalFailure()) return;
      }
}

// ---- CPU: the writes ---------------------------------------------------------------------------

// Over every block, step, thread and pass: each output element is written once; a whole vector
// is on 16 bytes; a partial one only at the start or the end of an output row; and no 32-byte
// sector of the output is written by two blocks unless a row starts or ends inside it.
template <int S>
void check_owners(std::int64_t rows, std::int64_t cols, std::uintptr_t out, std::int64_t capacity) {
  using T = Strip<S>;
  SCOPED_TRACE(std::to_string(S) + "-byte " + std::to_string(rows) + " x " +
               std::to_string(cols) + ", output at " + std::to_string(out % 32) + " mod 32" +
               ", capacity " + std::to_string(capacity));
  step08::StripGrid g;
  ASSERT_TRUE(step08::make_strips(rows, cols, kH, T::TC, capacity, &g));
  std::vector<std::uint8_t> written(static_cast<std::size_t>(rows * cols), 0);
  const std::uint64_t first_sector = out / 32;
  std::vector<std::int64_t> sector_writer((out % 32 + rows * cols * S) / 32 + 1, -1);  // block
  std::set<std::uint64_t> shared_sectors;
  auto* const o = reinterpret_cast<std::uint8_t*>(out);
  for (std::uint32_t b = 0; b < g.blocks(); ++b) {
    std::uint32_t k0, k1;
    const auto s = T::strip_of(nullptr, o, rows, cols, g, b, T::lead_for(rows, out),
                               T::phase_for(out), &k0, &k1);
    std::vector<typename T::Mine> my(T::kThreads);
    for (unsigned t = 0; t < T::kThreads; ++t) my[t] = T::mine(t, s);
    for (std::uint32_t k = k0; k < k1; ++k) {
      const bool last = k + 1 == g.steps;
      for (unsigned t = 0; t < T::kThreads; ++t)
        for (int p = 0; p < T::kStorePasses + (last ? T::kTailPasses : 0); ++p) {
          const auto x = T::piece(t, p, s, my[t], k, last);
          if (x.lo >= x.hi) continue;
          ASSERT_TRUE(x.lo >= 0 && x.hi <= T::V);
          const std::int64_t row = (x.first + x.lo) / rows, row_start = row * rows;
          ASSERT_EQ(row, s.c0 + x.c);
          const std::uintptr_t at = out + static_cast<std::uintptr_t>(x.first * S);
          if (x.lo == 0 && x.hi == T::V) {
            ASSERT_EQ(at % 16, 0u) << "a whole vector off 16 bytes";
          } else {
            ASSERT_TRUE(x.first < row_start || x.first + T::V > row_start + rows)
                << "a partial vector inside output row " << row;
          }
          for (std::int64_t e = x.first + x.lo; e < x.first + x.hi; ++e) {
            ASSERT_TRUE(e >= row_start && e < row_start + rows) << "element " << e;
            ASSERT_EQ(written[static_cast<std::size_t>(e)]++, 0) << "element " << e << " twice";
            const std::uint64_t sector = (out + static_cast<std::uint64_t>(e) * S) / 32;
            std::int64_t& writer = sector_writer[sector - first_sector];
            if (writer >= 0 && writer != b) shared_sectors.insert(sector);
            writer = b;
          }
        }
    }
  }
  const auto missing = std::find(written.begin(), written.end(), 0);
  ASSERT_EQ(missing, written.end()) << "element " << (missing - written.begin()) << " unwritten";
  for (std::uint64_t sector : shared_sectors) {
    // Elements of the sector: a row boundary (a multiple of rows) must fall strictly inside.
    const std::int64_t first = static_cast<std::int64_t>((sector * 32 - out) / S);
    bool seam = false;
    for (std::int64_t e = first + 1; e < first + 32 / S; ++e) seam = seam || e % rows == 0;
    ASSERT_TRUE(seam) << "sector at element " << first << " written by two blocks";
  }
}

TEST(CpuStep08StagedWrites, EveryElementOnceNoSectorSharedInsideARow) {
  const course::Shape shapes[] = {{2, 7}, {7, 2}, {1, 300}, {300, 1}, {513, 259}, {1000, 488},
                                  {130, 1000}};
  for (const course::Shape& s : shapes)
    for (std::uintptr_t out : {256, 256 + 2, 256 + 6, 256 + 18})
      for (std::int64_t capacity : {1, 7, 1 << 20}) {
        check_owners<1>(s.rows, s.cols, out, capacity);
        check_owners<2>(s.rows, s.cols, out, capacity);
        if (HasFatalFailure()) return;
      }
  check_owners<1>(4095, 4097, 256 + 6, 792);  // the target's shape: many steps and strips
  check_owners<2>(4097, 4095, 256 + 2, 792);
}

// ---- CPU: the banks --------------------------------------------------------------------------

// The conflict degree of every warp's shared-memory access, computed from the kernel's own slot
// functions and layout: the cp.async writes, the pack's 16-byte reads of raw rows and its unit
// writes to the ring, and the store's two 16-byte reads per vector, for every output phase and
// row length mod a sector. Every one is 1 except the last step's tail (a few vectors per strip).
template <int S>
void check_banks() {
  using T = Strip<S>;
  using Ring = typename T::Ring;
  SCOPED_TRACE(std::to_string(S) + "-byte elements");
  const int raw_at = 0, ring_at = static_cast<int>(offsetof(typename T::Smem, ring));
  std::set<std::pair<int, int>> pieces;
  for (int p = 0; p < T::kStagePasses; ++p)
    for (int w = 0; w < T::kThreads / 32; ++w)
      for (int ninth = 0; ninth < 2; ++ninth) {  // the 8 pieces of each row, then the ninth
        std::vector<int> addr(32, -1);
        for (int lane = 0; lane < 32; ++lane) {
          int i, q;
          T::stage_slot(32 * w + lane, p, &i, &q);
          if (ninth) {
            if (q != 7) continue;
            q = 8;
          }
          ASSERT_TRUE(pieces.insert({i, q}).second) << "piece " << q << " of row " << i;
          addr[lane] = raw_at + i * T::kRawRow + 16 * q;
        }
        EXPECT_EQ(step08_test::degree(addr, 16), 1) << "cp.async, pass " << p;
      }
  EXPECT_EQ(pieces.size(), static_cast<std::size_t>(kH * T::kChunks)) << "every piece of a step";
  for (int p = 0; p < T::kPackPasses; ++p)
    for (int w = 0; w < T::kThreads / 32; ++w) {
      for (int i = 0; i < T::k; ++i)
        for (int half = 0; half < 2; ++half) {  // the chunk holding the vector, the next one
          std::vector<int> addr(32);
          for (int lane = 0; lane < 32; ++lane) {
            int vec, g;
            T::pack_slot(32 * w + lane, p, &vec, &g);
            addr[lane] = raw_at + (g * T::k + i) * T::kRawRow + 16 * (vec + half);
          }
          EXPECT_EQ(step08_test::degree(addr, 16), 1) << "raw read, pass " << p;
        }
      for (std::int64_t first : {std::int64_t{0}, std::int64_t{kH}, std::int64_t{kH - T::kLead}})
        for (int e = 0; e < T::V; ++e) {
          std::vector<int> addr(32);
          for (int lane = 0; lane < 32; ++lane) {
            int vec, g;
            T::pack_slot(32 * w + lane, p, &vec, &g);
            const unsigned unit_row = static_cast<unsigned>(first + g * T::k) % T::NR / T::k;
            addr[lane] = ring_at + static_cast<int>(Ring::unit_offset(vec * T::V + e, unit_row));
          }
          EXPECT_EQ(step08_test::degree(addr, 4), 1) << "unit write, pass " << p;
        }
    }
  int tail_worst = 1;
  for (std::int64_t rows : {4095, 4096 + 2 / S, 12345, 12346, 16385, 4097 + 16})
    for (int phase = 0; phase < T::kSector; ++phase)
      for (std::uint32_t step : {0u, 1u, 2u, 3u}) {
        const std::int64_t cols = 1000;
        auto* out = reinterpret_cast<std::uint8_t*>(std::uintptr_t{256} + phase * S);
        const int lead = T::lead_for(rows, reinterpret_cast<std::uintptr_t>(out));
        for (std::int64_t c0 : {std::int64_t{0}, std::int64_t{T::TC}}) {
          const typename T::Strip s{nullptr, out, rows, cols, c0, T::TC, lead, phase};
          std::vector<typename T::Mine> my(T::kThreads);
          for (unsigned t = 0; t < T::kThreads; ++t) my[t] = T::mine(t, s);
          for (int p = 0; p < T::kStorePasses + T::kTailPasses; ++p)
            for (int w = 0; w < T::kThreads / 32; ++w)
              for (int half = 0; half < 2; ++half) {
                std::vector<int> addr(32, -1);
                for (int lane = 0; lane < 32; ++lane) {
                  const auto x = T::piece(32 * w + lane, p, s, my[32 * w + lane], step, true);
                  const unsigned ch = x.pos * S / 16, m = x.pos * S % 16;
                  if (x.lo >= x.hi || (half == 1 && m == 0)) continue;
                  addr[lane] = ring_at + static_cast<int>(Ring::chunk_offset(
                                             x.c, (ch + half) % Ring::kOutChunks));
                }
                const int d = step08_test::degree(addr, 16);
                if (p < T::kStorePasses) {
                  EXPECT_EQ(d, 1) << "store read, rows " << rows << ", phase " << phase
                                  << ", pass " << p;
                } else {
                  tail_worst = std::max(tail_worst, d);
                }
              }
        }
      }
  EXPECT_LE(tail_worst, 4) << "the last step's tail";
  std::printf("%d-byte elements: the last step's tail reads conflict up to %d ways\n", S,
              tail_worst);
}

TEST(CpuStep08StagedBanks, EveryPhaseIsConflictFree) {
  check_banks<1>();
  check_banks<2>();
}

#endif  // __CUDA_ARCH__

}  // namespace
