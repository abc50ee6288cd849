// Step 08's lab - bytes and halves on rows that start anywhere, staged through shared memory.
//
// Since the shifted kernel (transpose_shift.cuh), which holds a whole tile of aligned vectors in
// registers (about 100 a thread, two blocks per SM) and loads 32 lead rows above each tile:
//   * global -> shared without registers: cp.async copies the aligned 16-byte pieces that cover
//     each row's 128 bytes (9 pieces when the row starts off 16 bytes) into a raw buffer, and
//     each thread then realigns from shared memory (shift_bytes on two 16-byte reads), packs and
//     writes units into the lesson's swizzled layout, and stores 16-byte vectors;
//   * a block walks DOWN a strip 128 bytes wide, 64 rows a step, two raw buffers deep: the
//     copies of the next two steps are in flight while it packs and stores this one;
//   * the packed rows live in a ring of two steps: the output rows are still cut on their own
//     32-byte sectors (as the lesson's kernels cut them), and the rows a cut piece needs from
//     above are the previous step's, already in the ring. Lead rows are loaded once per block,
//     not once per tile;
//   * one wave: the launcher splits each strip into as many pieces as fill the GPU once.
//
//   make step08-lab && ./step08-lab --type i8 --rows 12345 --cols 6789 --only staged
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "shift.cuh"
#include "transpose.cuh"

namespace step08 {

/// How a block's threads run on the GPU: each thread runs its own share of a phase, a barrier
/// ends it, and cp.async (LDGSTS) copies 16 bytes global -> shared in groups that each thread
/// commits and waits for. The CPU tests drive the same code with a block of their own.
struct DeviceBlock {
  const std::uint8_t* smem;  ///< the block's shared memory, as a pointer
  unsigned smem_at;          ///< and as a shared-space address (computed once: cheaper per copy)

  /// A thread's own variables: one set on the GPU, where each thread runs the block's code.
  static constexpr int kHeld = 1;
  __host__ __device__ static unsigned held(unsigned) { return 0; }

  template <class F>
  __host__ __device__ void each(F&& f) {
#ifdef __CUDA_ARCH__
    f(threadIdx.x);
#else
    (void)f;
#endif
  }
  __host__ __device__ void sync() {
#ifdef __CUDA_ARCH__
    __syncthreads();
#endif
  }
  __host__ __device__ void copy16(unsigned, std::uint8_t* to, const std::uint8_t* gmem) {
#ifdef __CUDA_ARCH__
    const unsigned dst = smem_at + static_cast<unsigned>(to - smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(gmem) : "memory");
#else
    (void)to, (void)gmem;
#endif
  }
  __host__ __device__ void commit(unsigned) {
#ifdef __CUDA_ARCH__
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
  }
  /// Waits for every group this thread committed but the newest.
  __host__ __device__ void wait_prior(unsigned) {
#ifdef __CUDA_ARCH__
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
#endif
  }
};

/// The blocks of the staged kernel: each takes `per_block` steps of one strip.
struct StripGrid {
  std::uint32_t strips = 0;     ///< strips across the input (cols / strip width, rounded up)
  std::uint32_t steps = 0;      ///< steps down the input (rows / step rows, rounded up)
  std::uint32_t per_block = 0;  ///< consecutive steps of one strip per block
  std::uint32_t chunks = 0;     ///< blocks per strip
  __host__ __device__ std::int64_t blocks() const {
    return static_cast<std::int64_t>(strips) * chunks;
  }
};

/// Splits each strip into as many blocks as @p capacity (blocks the GPU holds at once) allows,
/// so that every block is resident from the start and all take about as long; false past CUDA's
/// grid limit. Each block pays its lead rows once, so the fewer the blocks, the fewer lead rows.
__host__ __device__ inline bool make_strips(std::int64_t rows, std::int64_t cols, int step_rows,
                                            int strip_cols, std::int64_t capacity,
                                            StripGrid* g) {
  const std::int64_t steps = (rows + step_rows - 1) / step_rows;
  const std::int64_t strips = (cols + strip_cols - 1) / strip_cols;
  const std::int64_t limit = INT32_MAX;  // blocks in x, and 32-bit step and strip counts
  if (steps > limit || strips > limit) return false;
  std::int64_t chunks = capacity / strips;
  chunks = chunks < 1 ? 1 : chunks > steps ? steps : chunks;
  const std::int64_t per = (steps + chunks - 1) / chunks;
  chunks = (steps + per - 1) / per;
  if (chunks > limit / strips) return false;
  *g = {static_cast<std::uint32_t>(strips), static_cast<std::uint32_t>(steps),
        static_cast<std::uint32_t>(per), static_cast<std::uint32_t>(chunks)};
  return true;
}

/// One block's strip: 128 bytes of each input row (TC elements), H rows a step, S = 1 or 2.
template <int S, int H>
struct StagedStrip {
  static_assert(S == 1 || S == 2, "wider elements need no packing (the scalar kernel)");
  static constexpr int kThreads = 128;
  static constexpr int V = 16 / S, k = Pack<S>::kRows;
  static constexpr int TC = 128 / S;                // strip width: one 128-byte line per row
  static constexpr int kVecs = TC / V;              // 8 vectors per row of the strip
  static constexpr int kSector = 32 / S;            // elements per 32-byte sector
  static constexpr int kLead = kSector;             // rows a cut piece may reach above a step
  static constexpr int NR = 2 * H;                  // rows in the ring: this step and the last
  using Ring = TileShape<S, NR, TC>;                // the lesson's layout, row r at r mod NR
  static constexpr int kChunks = TC * S / 16 + 1;   // 16-byte pieces that cover a row's 128 B
  static constexpr int kRawRow = 16 * kChunks;
  static constexpr int QS = H / V;                  // output vectors per output row and step
  static constexpr int kRowsPerQuarter = 8 / QS;    // output rows per 8 lanes in the store
  static constexpr int kStagePasses = H / (kThreads / 8);
  static constexpr int kPackPasses = H / k * kVecs / kThreads;
  static constexpr int kStorePasses = TC * QS / kThreads;
  static constexpr int kTail = kSector / V;         // more vectors per row in the last step
  static constexpr int kTailPasses = TC * kTail / kThreads;
  static constexpr int kOutPasses = kStorePasses + kTailPasses;
  static_assert(H % kSector == 0 && (H & (H - 1)) == 0, "steps of whole sectors, a power of 2");
  static_assert(H <= kThreads, "a thread per row takes the ninth piece");
  static_assert(H / k * kVecs % kThreads == 0 && TC * QS % kThreads == 0 &&
                TC * kTail % kThreads == 0, "whole passes");
  static_assert(QS <= 8 && 8 % QS == 0 && TC / kRowsPerQuarter % kSector == 0,
                "the output rows that share 8 lanes are a whole number of sectors apart");

  struct Smem {
    alignas(16) std::uint8_t raw[2][H * kRawRow];  // two steps of rows as copied, 16 B pieces
    alignas(16) std::uint8_t ring[Ring::kBytes];   // packed and transposed: output row c, units
  };

  /// What every phase of one block needs to know.
  struct Strip {
    const std::uint8_t* in;
    std::uint8_t* out;
    std::int64_t rows, cols, c0;  ///< the matrix; the strip's first column
    int width;                    ///< columns of the strip inside the matrix (TC but the last)
    int lead;                     ///< kLead when the output rows are cut on sectors, else 0
    int phase;                    ///< the output buffer's offset in its sector, in elements
  };

  /// What thread t keeps from step to step, so that a step adds only its own offset: where its
  /// rows start in the input (bytes from `in`, for step 0), and where its output vectors start
  /// in the output (elements from `out`) and in the step (elements from the step's top row).
  struct Mine {
    std::int64_t row[kStagePasses];  ///< row i of stage pass p
    std::int64_t row9;               ///< row t, for the ninth piece
    std::int64_t first[kOutPasses];  ///< output vector of store pass p, at step 0
    int at[kOutPasses];              ///< the same from the step's top: q * V - d
  };

  /// Stage thread t's pass p: piece q of raw row i, 8 lanes along a row (a 128-byte line, as in
  /// the lesson's loads). Then thread t takes the ninth piece of row t, where the row needs it.
  __host__ __device__ static void stage_slot(unsigned t, int p, int* i, int* q) {
    *i = static_cast<int>(t / 8 + kThreads / 8 * p);
    *q = static_cast<int>(t % 8);
  }

  // Rows first .. first + n - 1 (n <= H) into raw: the 16-byte pieces from the one holding the
  // row's first column to the one holding its last. A piece that reaches past either end of the
  // matrix (its first and last row only) is read byte by byte instead, inside the matrix.
  // Offsets count bytes from `in`; a row's low four bits say where it is off 16 bytes.
  template <class Block>
  __host__ __device__ static void stage(Block& b, unsigned t, const Strip& s, const Mine& my,
                                        std::int64_t first, int n, std::uint8_t* raw) {
    const std::int64_t last = s.rows * s.cols * S - 16;  // the last offset a whole piece may have
    const auto in16 = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(s.in) % 16);
    const std::int64_t top = first * s.cols * S;
    const int rows = s.rows - first < n ? static_cast<int>(s.rows - first) : n;
    auto piece = [&](std::uint8_t* dst, std::int64_t from) {
      if (from >= 0 && from <= last) {
        b.copy16(t, dst, s.in + from);
      } else {
#pragma unroll 1
        for (int j = 0; j < 16; ++j) {
          dst[j] = from + j >= 0 && from + j < last + 16 ? s.in[from + j] : 0;
        }
      }
    };
    auto offsets = [&](std::int64_t row, std::int64_t* base, int* end) {
      const int m = static_cast<int>((in16 + static_cast<unsigned>(row)) % 16);
      *base = row - m;           // the piece holding the row's first byte
      *end = m + s.width * S;    // the row's end, from there
    };
#pragma unroll
    for (int p = 0; p < kStagePasses; ++p) {
      int i, q;
      stage_slot(t, p, &i, &q);
      if (i >= rows) continue;
      std::int64_t base;
      int end;
      offsets(top + my.row[p], &base, &end);
      if (16 * q < end) piece(raw + i * kRawRow + 16 * q, base + 16 * q);
    }
    if (static_cast<int>(t) < rows) {  // the ninth piece of row t, where the row reaches it
      std::int64_t base;
      int end;
      offsets(top + my.row9, &base, &end);
      if (16 * 8 < end) piece(raw + t * kRawRow + 16 * 8, base + 16 * 8);
    }
  }

  /// Pack thread t's pass p: vector vec (V columns) of unit row g (k raw rows).
  __host__ __device__ static void pack_slot(unsigned t, int p, int* vec, int* g) {
    const unsigned f = t + kThreads * p;
    *vec = static_cast<int>(f % kVecs);  // 8 lanes along a row: one 128-byte raw row each
    *g = static_cast<int>(f / kVecs);
  }

  // Raw rows first .. first + n - 1 -> the ring: each of the k rows of a unit row shifted into
  // place (two 16-byte reads, shift_bytes), packed into units, scattered as in the lesson.
  __host__ __device__ static void pack(unsigned t, const Strip& s, std::int64_t first, int n,
                                       const std::uint8_t* raw, std::uint8_t* ring) {
    using Unit = typename Pack<S>::Unit;
    const auto pitch = static_cast<unsigned>(s.cols * S);  // mod 2^32: only mod 16 matters
    const auto base = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(s.in)) +
                      static_cast<unsigned>(s.c0 * S);
#pragma unroll
    for (int p = 0; p < kPackPasses; ++p) {
      int vec, g;
      pack_slot(t, p, &vec, &g);
      const int i0 = g * k;
      if (i0 >= n || first + i0 >= s.rows || vec * V >= s.width) continue;
      Vec16 v[k];
#pragma unroll
      for (int i = 0; i < k; ++i) {
        const unsigned m = (base + static_cast<unsigned>(first + i0 + i) * pitch) % 16;
        const std::uint8_t* at = raw + (i0 + i) * kRawRow + 16 * vec;
        v[i] = shift_bytes(load16(at), load16(at + 16), m);  // the next: garbage when m = 0
      }
      Unit u[V];
      Pack<S>::to_units(v, u);
      const unsigned unit_row = static_cast<unsigned>(first + i0) % NR / k;
      std::uint8_t* dst = ring + Ring::unit_offset(vec * V, unit_row);
#pragma unroll
      for (int e = 0; e < V; ++e) store_unit(dst + e * Ring::kRowBytes, u[e]);
    }
  }

  /// One output vector: elements `first` .. first + V - 1 of the output (counted from `out`),
  /// of which [lo, hi) are written (none when lo >= hi); they start at ring row `pos` of line c.
  struct Piece {
    std::int64_t first;
    int lo, hi, c;
    unsigned pos;
  };

  /// Store thread t's pass p: vector q of ring line (output row of the strip) c. The 8 lanes
  /// that share a pass of 16-byte reads take 8 / QS rows TC / (8 / QS) apart: a whole number of
  /// sectors apart, they are cut alike and start at the same ring row, and the swizzle puts
  /// them on different banks. Passes from kStorePasses on are the last step's tail.
  __host__ __device__ static void store_slot(unsigned t, int p, int* c, int* q) {
    if (p < kStorePasses) {
      const unsigned f = t + kThreads * p;
      *q = static_cast<int>(f % QS);
      const unsigned j = f / QS % kRowsPerQuarter;
      *c = static_cast<int>(f / 8 + TC / kRowsPerQuarter * j);
    } else {
      const unsigned f = t + kThreads * (p - kStorePasses);
      *q = static_cast<int>(QS + f % kTail);
      *c = static_cast<int>(f / kTail);
    }
  }

  /// Thread t's offsets (Mine) in block strip s.
  __host__ __device__ static Mine mine(unsigned t, const Strip& s) {
    Mine my{};
#pragma unroll
    for (int p = 0; p < kStagePasses; ++p) {
      int i, q;
      stage_slot(t, p, &i, &q);
      my.row[p] = (i * s.cols + s.c0) * S;
    }
    my.row9 = (t * s.cols + s.c0) * S;
#pragma unroll
    for (int p = 0; p < kOutPasses; ++p) {
      int c, q;
      store_slot(t, p, &c, &q);
      const std::int64_t o = s.c0 + c;
      const int d = s.lead == 0 ? 0
                                : static_cast<int>((static_cast<unsigned>(s.phase) +
                                                    static_cast<unsigned>(o) *
                                                        static_cast<unsigned>(s.rows)) &
                                                   (kSector - 1));
      my.at[p] = q * V - d;
      my.first[p] = o * s.rows + my.at[p];
    }
    return my;
  }

  // Output row o = c0 + c is cut on its sectors: step `step` writes its elements
  // [step*H - d, (step+1)*H - d), d = (phase + o * rows) mod kSector (0 without the cut), the
  // first step from 0 and the last step on to the end of the row. Only those two steps can have
  // a partial vector.
  __host__ __device__ static Piece piece(unsigned t, int p, const Strip& s, const Mine& my,
                                         std::uint32_t step, bool last) {
    int c, q;
    store_slot(t, p, &c, &q);
    Piece x{0, 0, 0, c, 0};
    if (c >= s.width) return x;  // past the matrix's last column
    const std::int64_t top = static_cast<std::int64_t>(step) * H;
    const int at = my.at[p];
    x.first = my.first[p] + top;
    x.pos = (static_cast<unsigned>(top) + at) % NR;
    x.hi = V;
    if (step == 0 && at < 0) x.lo = -at < V ? -at : V;  // before the row's start
    if (last) x.hi = s.rows - top - at < V ? static_cast<int>(s.rows - top - at) : V;
    return x;
  }

  __host__ __device__ static void store(unsigned t, const Strip& s, const Mine& my,
                                        std::uint32_t step, bool last, const std::uint8_t* ring) {
#pragma unroll
    for (int p = 0; p < kOutPasses; ++p) {
      if (p >= kStorePasses && !last) break;
      const Piece x = piece(t, p, s, my, step, last);
      if (x.lo >= x.hi) continue;
      const unsigned ch = x.pos * S / 16, m = x.pos * S % 16;
      const unsigned next = (ch + 1) % Ring::kOutChunks;  // read whatever m is: fewer instructions
      const Vec16 v = shift_bytes(load16(ring + Ring::chunk_offset(x.c, ch)),
                                  load16(ring + Ring::chunk_offset(x.c, next)), m);
      std::uint8_t* dst = s.out + x.first * S;
      if (x.lo == 0 && x.hi == V) {
        store16(dst, v);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) {  // a row's first or last vector: shared, so narrow
          if (e < x.lo || e >= x.hi) continue;
          const std::uint32_t word = v.w[e * S / 4] >> (8 * (e * S % 4));  // e unrolled: registers
          if constexpr (S == 1) store_unit(dst + e, static_cast<std::uint8_t>(word));
          else store_unit(dst + 2 * e, static_cast<std::uint16_t>(word));
        }
      }
    }
  }

  /// The cut for an output buffer at @p out: kLead rows above each block's first step when the
  /// output rows start off their sectors (0 when they are on them), and the buffer's offset in
  /// its sector in elements. (Host code: the launcher and the tests.)
  static int lead_for(std::int64_t rows, std::uintptr_t out) {
    return rows_start_on(32, S, rows, out) ? 0 : kLead;
  }
  static int phase_for(std::uintptr_t out) {
    return static_cast<int>(out / S % kSector);
  }

  /// Block @p block's strip, and its steps [*k0, *k1).
  __host__ __device__ static Strip strip_of(const std::uint8_t* in, std::uint8_t* out,
                                            std::int64_t rows, std::int64_t cols,
                                            const StripGrid& g, std::uint32_t block, int lead,
                                            int phase, std::uint32_t* k0, std::uint32_t* k1) {
    const std::uint32_t x = block % g.strips, y = block / g.strips;
    *k0 = y * g.per_block;
    *k1 = g.steps - *k0 < g.per_block ? g.steps : *k0 + g.per_block;
    const std::int64_t c0 = static_cast<std::int64_t>(x) * TC;
    return {in, out, rows, cols, c0, static_cast<int>(cols - c0 < TC ? cols - c0 : TC), lead,
            phase};
  }

  /// The whole life of block @p block, phase by phase; b.sync() is the barrier between phases.
  /// Raw buffer (k - k0) % 2 holds step k. While the block packs and stores step k, the copies
  /// of steps k + 1 and k + 2 are in flight.
  template <class Block>
  __host__ __device__ static void run(Block& b, const std::uint8_t* in, std::uint8_t* out,
                                      std::int64_t rows, std::int64_t cols, const StripGrid& g,
                                      std::uint32_t block, int lead, int phase, Smem& sm) {
    std::uint32_t k0, k1;
    const Strip s = strip_of(in, out, rows, cols, g, block, lead, phase, &k0, &k1);
    const bool has_lead = lead != 0 && k0 > 0;  // the rows above the block's first step
    const std::int64_t top = static_cast<std::int64_t>(k0) * H;
    Mine my[Block::kHeld];  // a thread's own: on the GPU each thread holds one
    b.each([&](unsigned t) {
      Mine& mt = my[b.held(t)];
      mt = mine(t, s);
      if (has_lead) stage(b, t, s, mt, top - kLead, kLead, sm.raw[1]);
      b.commit(t);
      stage(b, t, s, mt, top, H, sm.raw[0]);
      b.commit(t);
      b.wait_prior(t);  // the lead rows
    });
    b.sync();
    b.each([&](unsigned t) {
      if (has_lead) pack(t, s, top - kLead, kLead, sm.raw[1], sm.ring);
    });
    b.sync();
    b.each([&](unsigned t) {
      if (k0 + 1 < k1) stage(b, t, s, my[b.held(t)], top + H, H, sm.raw[1]);
      b.commit(t);
      b.wait_prior(t);  // step k0
    });
    b.sync();
    for (std::uint32_t k = k0; k < k1; ++k) {
      std::uint8_t* raw = sm.raw[(k - k0) % 2];
      b.each([&](unsigned t) { pack(t, s, static_cast<std::int64_t>(k) * H, H, raw, sm.ring); });
      b.sync();
      b.each([&](unsigned t) {
        const Mine& mt = my[b.held(t)];
        if (k + 2 < k1) stage(b, t, s, mt, (static_cast<std::int64_t>(k) + 2) * H, H, raw);
        b.commit(t);
        store(t, s, mt, k, k + 1 == g.steps, sm.ring);
        b.wait_prior(t);  // step k + 1
      });
      b.sync();
    }
  }
};

/// Six blocks of 128 threads per SM (34 KB of shared memory each): 24 warps, as many as the
/// shifted kernel's three blocks of 256.
template <int S, int H>
__global__ void __launch_bounds__(StagedStrip<S, H>::kThreads, 6)
    transpose_staged(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                     std::int64_t rows, std::int64_t cols, StripGrid g, int lead, int phase) {
  using Strip = StagedStrip<S, H>;
  __shared__ typename Strip::Smem sm;
  std::uint64_t at;  // an asm the compiler does not see through: it would recompute it per copy
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(at) : "l"(&sm));
  DeviceBlock b{reinterpret_cast<const std::uint8_t*>(&sm), static_cast<unsigned>(at)};
  Strip::run(b, in, out, rows, cols, g, blockIdx.x, lead, phase, sm);
}

/// Launches transpose_staged on a grid for @p capacity resident blocks; the output rows are cut
/// on their sectors where they start off them. Refuses what the launcher refuses.
template <int S, int H>
cudaError_t launch_staged_on(std::int64_t capacity, const void* in, void* out, std::int64_t rows,
                             std::int64_t cols, cudaStream_t stream) {
  using Strip = StagedStrip<S, H>;
  const auto i = reinterpret_cast<std::uintptr_t>(in), o = reinterpret_cast<std::uintptr_t>(out);
  if (!valid_problem(S, rows, cols, i, o)) return cudaErrorInvalidValue;
  StripGrid g;
  if (!make_strips(rows, cols, H, Strip::TC, capacity, &g)) return cudaErrorInvalidValue;
  transpose_staged<S, H><<<static_cast<unsigned>(g.blocks()), Strip::kThreads, 0, stream>>>(
      static_cast<const std::uint8_t*>(in), static_cast<std::uint8_t*>(out), rows, cols, g,
      Strip::lead_for(rows, o), Strip::phase_for(o));
  return cudaGetLastError();
}

/// The same on one wave of the current device: blocks per SM (from the occupancy calculator)
/// times its SMs. Shared memory gets the largest share of each SM's L1 (the kernel reads and
/// writes global memory around L1), so that six blocks fit: a grid sized for six that ran five
/// would take a second wave. Both are asked once, not at every launch.
template <int S, int H>
cudaError_t launch_staged(const void* in, void* out, std::int64_t rows, std::int64_t cols,
                          cudaStream_t stream) {
  if (!valid_problem(S, rows, cols, reinterpret_cast<std::uintptr_t>(in),
                     reinterpret_cast<std::uintptr_t>(out))) {
    return cudaErrorInvalidValue;
  }
  struct Fit {
    cudaError_t status;
    int per_sm;
  };
  static const Fit fit = [] {
    Fit f{cudaFuncSetAttribute(transpose_staged<S, H>,
                               cudaFuncAttributePreferredSharedMemoryCarveout,
                               cudaSharedmemCarveoutMaxShared),
          0};
    if (f.status == cudaSuccess) {
      f.status = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &f.per_sm, transpose_staged<S, H>, StagedStrip<S, H>::kThreads, 0);
    }
    return f;
  }();
  int device = 0, sms = 0;
  cudaError_t e = fit.status;
  if (e == cudaSuccess) e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e != cudaSuccess) return e;
  return launch_staged_on<S, H>(static_cast<std::int64_t>(fit.per_sm) * sms, in, out, rows, cols,
                                stream);
}

}  // namespace step08
