// Step 08's lab - the staged kernel (staged.cuh) as rows of the lab's table, and with a grid of
// the tests' choosing (launch_staged_on), apart from lab_variants.cuh so that its tests compile
// it alone.
#pragma once

#include <cstdint>
#include <string>

#include "harness.cuh"
#include "staged.cuh"

namespace step08_lab {

/// The staged kernel for S-byte elements on any shape: one wave of blocks on the current device,
/// or (capacity > 0) a grid for that many resident blocks.
template <int S>
course::Variant staged_variant(std::int64_t capacity = 0) {
  using Strip = step08::StagedStrip<S, 64>;
  std::string id = "staged", name = "staged through shared memory";
  if (capacity > 0) {
    id += "-grid" + std::to_string(capacity);
    name += ", grid for " + std::to_string(capacity) + " blocks";
  }
  return {id, name, std::to_string(Strip::kThreads),
          std::to_string(64) + "x" + std::to_string(Strip::TC),  // a step: rows x strip
          [capacity](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return capacity > 0
                       ? step08::launch_staged_on<S, 64>(capacity, in, out, p.rows, p.cols, s)
                       : step08::launch_staged<S, 64>(in, out, p.rows, p.cols, s);
          }};
}

}  // namespace step08_lab
