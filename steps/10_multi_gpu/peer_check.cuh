// Test helpers of step 10's and its lab's, with G GPUs simulated on one (every GPU's output block
// on this device, framed by poisoned guard bands): each block checked against its rows of the
// transpose, and a peer-writes launcher (peer.cuh's ToOwners) run by every simulated GPU.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "blocks.hpp"
#include "device_buffer.cuh"
#include "host_data.hpp"
#include "peer.cuh"

namespace step10 {

/// GPU g's output block is outs[g] past @p guard poisoned bytes, with as many after it: its
/// col_blocks.count(g) rows of @p rows elements of @p size bytes must be those rows of @p ref (the
/// whole transpose), and the guards untouched. Says where: the first wrong element.
inline ::testing::AssertionResult check_blocks(const std::vector<course::DeviceBuffer>& outs,
                                               std::size_t guard, const std::vector<std::uint8_t>& ref,
                                               const Blocks& col_blocks, std::int64_t rows,
                                               std::size_t size, const std::string& where) {
  for (int g = 0; g < static_cast<int>(outs.size()); ++g) {
    std::vector<std::uint8_t> got(outs[g].bytes());
    CUDA_CHECK(cudaMemcpy(got.data(), outs[g].get(), got.size(), cudaMemcpyDeviceToHost));
    const std::size_t n = col_blocks.count(g) * rows * size;
    for (std::size_t i = 0; i < guard; ++i) {
      if (got[i] != course::kPoisonByte || got[guard + n + i] != course::kPoisonByte) {
        return ::testing::AssertionFailure() << where << ": GPU " << g << " wrote outside its block";
      }
    }
    const std::uint8_t* want = ref.data() + col_blocks.first(g) * rows * size;
    for (std::size_t i = 0; i < n; i += size) {
      if (std::memcmp(want + i, got.data() + guard + i, size) != 0) {
        const std::int64_t e = static_cast<std::int64_t>(i / size);
        return ::testing::AssertionFailure()
               << where << ": GPU " << g << ": wrong element at (row "
               << col_blocks.first(g) + e / rows << ", col " << e % rows << ") of the output";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult check_peer(course::ElemType type, std::int64_t rows, std::int64_t cols,
                                             int G, ToOwners launch, const std::string& what = "peer writes") {
  const std::size_t size = course::elem_size(type), guard = 4096;
  const course::Problem p{type, rows, cols, 1};
  const std::uint64_t seed = course::fresh_seed();
  std::vector<std::uint8_t> in(p.bytes()), ref(p.bytes());
  course::fill_pattern(type, in.data(), rows * cols, seed);
  course::cpu_transpose(p, in.data(), ref.data());
  const Blocks row_blocks{rows, G}, col_blocks{cols, G};
  course::DeviceBuffer d_in(p.bytes());
  CUDA_CHECK(cudaMemcpy(d_in.get(), in.data(), p.bytes(), cudaMemcpyHostToDevice));
  std::vector<course::DeviceBuffer> outs;
  std::vector<void*> blocks;
  for (int g = 0; g < G; ++g) {
    outs.emplace_back(col_blocks.count(g) * rows * size + 2 * guard);
    CUDA_CHECK(cudaMemset(outs[g].get(), course::kPoisonByte, outs[g].bytes()));
    blocks.push_back(outs[g].as<char>() + guard);
  }
  course::DeviceBuffer table(G * sizeof(void*));
  CUDA_CHECK(cudaMemcpy(table.get(), blocks.data(), table.bytes(), cudaMemcpyHostToDevice));
  for (int g = 0; g < G; ++g) {
    if (row_blocks.count(g) == 0) continue;
    const void* mine = d_in.as<char>() + row_blocks.first(g) * cols * size;
    CUDA_CHECK(launch(size, mine, row_blocks.count(g), cols, row_blocks.first(g), rows, G, table.as<void*>(), nullptr));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  return check_blocks(outs, guard, ref, col_blocks, rows, size,
                      what + " on " + p.describe() + " over " + std::to_string(G) + " GPUs (seed " +
                          std::to_string(seed) + ")");
}

}  // namespace step10
