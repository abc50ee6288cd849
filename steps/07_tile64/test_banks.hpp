// The bank model of the float4 path's column reads, shared by step 07's tests and its lab's: the
// worst conflict degree over every warp's reads, for a tile layout index(r, c) (the lesson's
// tile_index, or one of the lab's layouts).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "bank_model.hpp"
#include "transpose.cuh"

namespace step07 {

// For each j, lane t reads tile row 4 * slot + j of column `row`.
template <int THREADS, typename Index>
int worst_read_degree(Index index) {
  int worst = 0;
  for (int warp = 0; warp < THREADS; warp += 32) {
    for (int k = 0; k < kVectors / THREADS; ++k) {
      for (int j = 0; j < 4; ++j) {
        std::vector<std::int64_t> words;
        for (int t = warp; t < warp + 32; ++t) {
          const Place p = place<THREADS>(t, k);
          words.push_back(index(4 * p.slot + j, p.row));
        }
        worst = std::max(worst, course::conflict_degree(words));
      }
    }
  }
  return worst;
}

}  // namespace step07
