// Step 10's lab tests: the lesson's peer kernel with its tiles walked down the columns, and
// step 08's vector kernel as peer writes, with G GPUs simulated on one (every GPU's output block
// on this device, peer_check.cuh), on the awkward shapes and every element type; where the
// vectors run (CPU). The plain order is the lesson's passes with one chunk, which the step's own
// tests cover; the runs on real GPUs are CTest's step10-lab.gpus.* tests.
#include <gtest/gtest.h>

#include <cstdint>

#include "peer_check.cuh"
#include "peer_vec.cuh"
#include "testing.cuh"

namespace {

using step10::check_peer;
const step10::ToOwners down = step10::launch_to_owners<true>, vectors = step10::launch_vec_to_owners;

// How many of G simulated GPUs take the vectors (the input's base is on 256 bytes, as cudaMalloc's).
int vector_gpus(course::ElemType t, std::int64_t rows, std::int64_t cols, int G) {
  const std::size_t size = course::elem_size(t);
  const step10::Blocks b{rows, G};
  int n = 0;
  for (int g = 0; g < G; ++g) {
    const auto* mine = reinterpret_cast<const void*>(std::uintptr_t{256} + b.first(g) * cols * size);
    n += b.count(g) > 0 && step10::peer_vectors(size, mine, b.count(g), cols, b.first(g), rows);
  }
  return n;
}

TEST(Step10LabPeer, EveryAwkwardShapeOverOneToFiveGpus) {
  REQUIRE_GPU();
  for (const course::Shape& s : course::awkward_shapes()) {
    for (int G : {1, 2, 3, 5}) {
      ASSERT_TRUE(check_peer(course::ElemType::f32, s.rows, s.cols, G, down, "peer writes, tiles down"));
      ASSERT_TRUE(check_peer(course::ElemType::f32, s.rows, s.cols, G, vectors, "peer writes in vectors"));
    }
  }
}

TEST(Step10LabPeer, EveryElementType) {
  REQUIRE_GPU();
  for (course::ElemType t : course::all_elem_types()) {
    for (int G : {2, 3}) {
      for (step10::ToOwners k : {down, vectors}) {
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
        ASSERT_TRUE(check_peer(t, s.rows, s.cols, G, vectors, "peer writes in vectors"));
        EXPECT_EQ(vector_gpus(t, s.rows, s.cols, G), G) << course::elem_name(t) << " " << s.rows << " x " << s.cols << " over " << G;
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
      ASSERT_TRUE(check_peer(t, 1001, 1024, G, vectors));  // odd blocks of rows
      ASSERT_TRUE(check_peer(t, 1024, 1001, G, vectors));  // input rows off 16 bytes
      ASSERT_TRUE(check_peer(t, 1040, 1040, 3, vectors));  // 347, 347, 346 rows
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
