// Step 09's lab: the cycle pass with its long cycles cut into runs (THREE_PASS.md, "Pieces and
// warps"). One warp walks a cycle's chunk from end to end, so the pass has cycles x chunks
// warps: at 8191 x 4097, 18 cycles of 455 rows give 2,322 warps, a quarter of what the GPU holds.
// Cut into runs, each run's last write needs the old value of the row after it, which another
// warp overwrites: that row is saved first, one row of scratch per run, and the lesson's kernel
// (../inplace_rect.cuh, permute_pieces) ends the run on it. CutRuns is the lesson's Knobs with
// this hook.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "check.cuh"
#include "inplace_rect.cuh"

namespace step09_lab {

using i64 = std::int64_t;

/// Cycles longer than @p most cut into runs of at most @p most pieces, the cut runs first;
/// tails[t] names the piece whose old value ends cut run t: the next run's first, or the
/// cycle's x0.
struct CutCycles {
  step09::Cycles runs;
  std::vector<int> tails;
};
inline CutCycles cut_cycles(const step09::Cycles& cy, int most) {
  CutCycles cut;
  step09::Cycles whole;
  for (int t = 0; t < cy.count(); ++t) {
    const int first = cy.starts[t], last = cy.starts[t + 1];
    step09::Cycles& to = last - first > most ? cut.runs : whole;
    for (int a = first; a < last; a += most) {
      const int b = std::min(a + most, last);
      to.order.insert(to.order.end(), cy.order.begin() + a, cy.order.begin() + b);
      to.starts.push_back(static_cast<int>(to.order.size()));
      if (&to == &cut.runs) cut.tails.push_back(cy.order[b < last ? b : first]);
    }
  }
  const int at = static_cast<int>(cut.runs.order.size());
  for (int t = 0; t < whole.count(); ++t) cut.runs.starts.push_back(at + whole.starts[t + 1]);
  cut.runs.order.insert(cut.runs.order.end(), whole.order.begin(), whole.order.end());
  return cut;
}

/// Row t of @p saved <- piece tails[t] of @p a, before the gather; a block row per tail.
template <typename U, typename Index>
__global__ void save_tails(U* saved, const U* a, Index len, const int* tails) {
  const Index e = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e < len) saved[blockIdx.y * len + e] = a[static_cast<Index>(tails[blockIdx.y]) * len + e];
}

/// The lesson's knobs with its hook on the cycles: where cycles x chunks warps would not fill the
/// GPU (64 warps an SM), cycles cut into runs of moved x chunks / wanted pieces, at least 16; the
/// tails follow the table's order, and the saved rows take a piece each.
struct CutRuns : step09::Knobs {
  template <typename K, typename T>
  static void plan(step09::Cycles& cy, step09::RectPlan& plan, const T* a, i64 len) {
    plan.cut = 0;
    plan.saved = course::DeviceBuffer();
    if (cy.count() == 0) return;
    int device = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const i64 chunks = step09::units_of<K>(a, len).chunks, wanted = 64LL * sms;
    if (cy.count() * chunks >= wanted) return;
    const i64 moved = static_cast<i64>(cy.order.size());
    CutCycles cut = cut_cycles(cy, static_cast<int>(std::max<i64>(16, moved * chunks / wanted)));
    plan.cut = static_cast<unsigned>(cut.tails.size());
    if (plan.cut) plan.saved = course::DeviceBuffer(plan.cut * len * sizeof(T));
    cy = std::move(cut.runs);
    cy.order.insert(cy.order.end(), cut.tails.begin(), cut.tails.end());
  }
  template <typename U, typename Index>
  static void save(const step09::RectPlan& plan, const U* a, Index len, cudaStream_t stream) {
    if (plan.cut == 0) return;
    const int* const tails = plan.table.as<int>() + plan.table.bytes() / sizeof(int) - plan.cut;
    const dim3 grid(static_cast<unsigned>((len + 255) / 256), plan.cut);
    save_tails<U, Index><<<grid, 256, 0, stream>>>(plan.saved.as<U>(), a, len, tails);
  }
};

}  // namespace step09_lab
