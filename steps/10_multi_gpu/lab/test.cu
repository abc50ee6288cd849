// Step 10's lab tests: the peer kernel's block arithmetic against blocks.hpp (CPU), and the peer
// kernel with G GPUs simulated on one (every GPU's output block on this device), on the awkward
// shapes and every element type. The plain order is the lesson's passes with one chunk, which
// the step's own tests cover; the runs on real GPUs are CTest's step10-lab.gpus.* tests.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "blocks.hpp"
#include "device_buffer.cuh"
#include "host_data.hpp"
#include "peer.cuh"
#include "testing.cuh"

namespace {

TEST(CpuStep10Peer, TheKernelsOwnersAreTheBlocksOwners) {
  for (std::int64_t n : {1, 2, 5, 37, 1000, 1009}) {
    for (int parts : {1, 2, 3, 4, 7}) {
      const step10::Blocks b{n, parts};
      for (int p = 0; p < parts; ++p) EXPECT_EQ(step10::block_first(p, n, parts), b.first(p));
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(step10::block_owner(i, n, parts), b.owner(i)) << i << " of " << n;
      }
    }
  }
}

// Every simulated GPU runs the kernel on its rows, writing into every GPU's block (all on this
// device); each block, framed by guard bands, must be its rows of the transpose.
enum class Kernel { along, down, vectors };

::testing::AssertionResult check_peer(course::ElemType type, std::int64_t rows, std::int64_t cols,
                                      int G, Kernel kernel = Kernel::along, int* vector_gpus = nullptr) {
  const bool down = kernel == Kernel::down;
  const std::size_t size = course::elem_size(type), guard = 4096;
  const course::Problem p{type, rows, cols, 1};
  const std::uint64_t seed = course::fresh_seed();
  std::vector<std::uint8_t> in(p.bytes()), ref(p.bytes());
  course::fill_pattern(type, in.data(), rows * cols, seed);
  course::cpu_transpose(p, in.data(), ref.data());
  const step10::Blocks row_blocks{rows, G}, col_blocks{cols, G};
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
  if (vector_gpus) *vector_gpus = 0;
  for (int g = 0; g < G; ++g) {
    if (row_blocks.count(g) == 0) continue;
    const void* mine = d_in.as<char>() + row_blocks.first(g) * cols * size;
    if (kernel == Kernel::vectors) {
      bool vectors = false;
      CUDA_CHECK(step10::launch_vec_to_owners(size, mine, row_blocks.count(g), cols, row_blocks.first(g),
                                              rows, G, table.as<void*>(), nullptr, &vectors));
      if (vector_gpus) *vector_gpus += vectors;
      continue;
    }
    CUDA_CHECK((down ? step10::launch_to_owners<true> : step10::launch_to_owners<false>)(size, mine,
                                        row_blocks.count(g), cols, row_blocks.first(g), rows, G,
                                        table.as<void*>(), nullptr));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::string where = std::string(down ? "peer writes, tiles down, on " : kernel == Kernel::vectors ? "peer writes in vectors on " : "peer writes on ") + p.describe() + " over " + std::to_string(G) +
                            " GPUs (seed " + std::to_string(seed) + ")";
  for (int g = 0; g < G; ++g) {
    std::vector<std::uint8_t> got(outs[g].bytes());
    CUDA_CHECK(cudaMemcpy(got.data(), outs[g].get(), got.size(), cudaMemcpyDeviceToHost));
    const std::size_t n = col_blocks.count(g) * rows * size;
    for (std::size_t i = 0; i < guard; ++i) {
      if (got[i] != course::kPoisonByte || got[guard + n + i] != course::kPoisonByte) {
        return ::testing::AssertionFailure() << where << ": wrote outside GPU " << g << "'s block";
      }
    }
    if (std::memcmp(got.data() + guard, ref.data() + col_blocks.first(g) * rows * size, n) != 0) {
      return ::testing::AssertionFailure() << where << ": GPU " << g << "'s block is wrong";
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(Step10LabPeer, EveryAwkwardShapeOverOneToFiveGpus) {
  REQUIRE_GPU();
  for (const course::Shape& s : course::awkward_shapes()) {
    for (int G : {1, 2, 3, 5}) {
      ASSERT_TRUE(check_peer(course::ElemType::f32, s.rows, s.cols, G));
      ASSERT_TRUE(check_peer(course::ElemType::f32, s.rows, s.cols, G, Kernel::down));
      ASSERT_TRUE(check_peer(course::ElemType::f32, s.rows, s.cols, G, Kernel::vectors));
    }
  }
}

TEST(Step10LabPeer, EveryElementType) {
  REQUIRE_GPU();
  for (course::ElemType t : course::all_elem_types()) {
    for (int G : {2, 3}) {
      for (Kernel k : {Kernel::along, Kernel::down, Kernel::vectors}) {
        ASSERT_TRUE(check_peer(t, 997, 1009, G, k));
        ASSERT_TRUE(check_peer(t, 37, 1, G, k));
      }
    }
  }
}

// The vector kernel runs where every row starts on 16 bytes, for every element size, and its
// output lands on every GPU's block whole; tiles that straddle two owners' rows and edge tiles.
TEST(Step10LabPeer, VectorsOnAlignedBlocksInEveryType) {
  REQUIRE_GPU();
  for (course::ElemType t : course::all_elem_types()) {
    for (int G : {1, 2, 4}) {
      for (const course::Shape& s : {course::Shape{1024, 2048}, course::Shape{512, 4000}, course::Shape{2048, 336}}) {
        int vector_gpus = 0;
        ASSERT_TRUE(check_peer(t, s.rows, s.cols, G, Kernel::vectors, &vector_gpus));
        EXPECT_EQ(vector_gpus, G) << course::elem_name(t) << " " << s.rows << " x " << s.cols << " over " << G;
      }
    }
  }
}

// Where rows do not start on 16 bytes (46341-like odd blocks, odd columns) some or every GPU takes
// the element kernel, and the result is the same.
TEST(Step10LabPeer, VectorsFallBackOnMisalignedRowsInEveryType) {
  REQUIRE_GPU();
  for (course::ElemType t : course::all_elem_types()) {
    for (int G : {2, 3}) {
      ASSERT_TRUE(check_peer(t, 1001, 1024, G, Kernel::vectors));  // odd blocks of rows
      ASSERT_TRUE(check_peer(t, 1024, 1001, G, Kernel::vectors));  // input rows off 16 bytes
      ASSERT_TRUE(check_peer(t, 1040, 1040, 3, Kernel::vectors));  // 347, 347, 346 rows
    }
  }
}

TEST(CpuStep10Peer, VectorsOnlyWhereEveryRowStartsOn16Bytes) {
  alignas(16) static char in[64];
  EXPECT_TRUE(step10::peer_vectors(4, in, 512, 1024, 512, 1024));
  EXPECT_FALSE(step10::peer_vectors(4, in + 4, 512, 1024, 512, 1024));  // input not on 16 bytes
  EXPECT_FALSE(step10::peer_vectors(4, in, 512, 1023, 512, 1024));      // input rows
  EXPECT_FALSE(step10::peer_vectors(4, in, 512, 1024, 512, 1022));      // the owners' rows
  EXPECT_FALSE(step10::peer_vectors(1, in, 512, 1024, 520, 1024));      // my first column
  EXPECT_FALSE(step10::peer_vectors(2, in, 23171, 1024, 0, 46342));     // my rows: odd
  EXPECT_TRUE(step10::peer_vectors(16, in, 3, 5, 7, 11));               // 16 bytes: always
}

}  // namespace
