// Step 10 tests. On the CPU, everywhere: the block arithmetic (owners, offsets, uneven blocks,
// chunks, every piece's place in the send and receive buffers), NCCL's id as text, the check of
// one GPU's block, the peer kernel's owners. On one GPU: the lesson's passes for G = 2, 3, 4 and 7
// GPUs simulated on it (every GPU's buffers on this device, NCCL's exchange replaced by copies of
// the same pieces) and the peer kernel for G = 1, 2, 3 and 5 (peer_check.cuh), on the awkward
// shapes and every element type, so that the sanitizers see every kernel; and the pipeline with
// one GPU. The runs on 2 or more real GPUs, started alone and under mpirun, are CTest's
// step10.gpus.* tests (run_gpus.cmake).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "blocks.hpp"
#include "link_rate.hpp"
#include "peer.cuh"
#include "reach.hpp"

#ifdef STEP10_HAVE_NCCL
#include "device_buffer.cuh"
#include "host_data.hpp"
#include "multi_harness.hpp"
#include "multi_transpose.cuh"
#include "peer_check.cuh"
#include "team.hpp"
#include "testing.cuh"
#endif

namespace {

using step10::Blocks;
using step10::Chunks;
using step10::Layout;
using step10::Piece;

TEST(CpuStep10Blocks, CoverEveryItemOnceInOrderWithSizesOneApart) {
  for (std::int64_t n : {0, 1, 2, 3, 7, 64, 1000, 1001, 4099}) {
    for (int parts : {1, 2, 3, 4, 7, 8}) {
      const Blocks b{n, parts};
      std::int64_t next = 0, smallest = n, largest = 0;
      for (int p = 0; p < parts; ++p) {
        ASSERT_EQ(b.first(p), next) << n << " over " << parts << ", block " << p;
        next += b.count(p);
        smallest = std::min(smallest, b.count(p));
        largest = std::max(largest, b.count(p));
        for (std::int64_t i = b.first(p); i < b.first(p) + b.count(p); ++i) {
          ASSERT_EQ(b.owner(i), p) << "item " << i << " of " << n << " over " << parts;
        }
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(largest - smallest, 1);
    }
  }
}

TEST(CpuStep10Blocks, GiveTheExtraItemsToTheFirstBlocksAndLeaveEmptyOnesLast) {
  const Blocks b{10, 4};  // 3 3 2 2
  EXPECT_EQ(b.count(0), 3);
  EXPECT_EQ(b.count(1), 3);
  EXPECT_EQ(b.count(3), 2);
  EXPECT_EQ(b.first(2), 6);
  EXPECT_EQ(b.owner(5), 1);
  EXPECT_EQ(b.owner(6), 2);
  const Blocks few{2, 3};  // 1 1 0: a GPU with no rows
  EXPECT_EQ(few.count(2), 0);
  EXPECT_EQ(few.first(2), 2);
  EXPECT_EQ(few.owner(1), 1);
}

// The peer kernel's owner arithmetic (peer.cuh, for the device) is Blocks' own.
TEST(CpuStep10Peer, TheKernelsOwnersAreTheBlocksOwners) {
  for (std::int64_t n : {1, 2, 5, 37, 1000, 1009}) {
    for (int parts : {1, 2, 3, 4, 7}) {
      const Blocks b{n, parts};
      for (int p = 0; p < parts; ++p) EXPECT_EQ(step10::block_first(p, n, parts), b.first(p));
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(step10::block_owner(i, n, parts), b.owner(i)) << i << " of " << n;
      }
    }
  }
}

TEST(CpuStep10Chunks, CoverTheRowsInWholeMultiplesOf64) {
  for (std::int64_t rows : {0, 1, 63, 64, 65, 1000, 16384, 16385}) {
    for (int k : {1, 2, 3, 4, 16, 64}) {
      const Chunks ch{rows, k};
      std::int64_t next = 0;
      for (int c = 0; c < k; ++c) {
        ASSERT_EQ(ch.first(c), next) << rows << " rows in " << k << " chunks, chunk " << c;
        ASSERT_GE(ch.count(c), 0);
        if (next + ch.count(c) < rows) EXPECT_EQ(ch.count(c) % step10::kChunkRows, 0);
        next += ch.count(c);
      }
      EXPECT_EQ(next, rows) << rows << " rows in " << k << " chunks";
    }
  }
  EXPECT_EQ((Chunks{16384, 16}.count(0)), 1024);
  EXPECT_EQ((Chunks{100, 4}.count(1)), 36);  // 64, 36, then empty
  EXPECT_EQ((Chunks{100, 4}.count(2)), 0);
}

// Every piece of every GPU has one place in its sender's send buffer and one in its receiver's
// receive buffer; together they fill the send buffer exactly and the receive buffer without
// overlap (the gaps move pieces onto 16 bytes); a piece's two ends agree on its size; and the
// pieces that reach a GPU cover each of its output rows' columns exactly once.
TEST(CpuStep10Layout, PiecesTileTheSendAndReceiveBuffersAndTheOutputColumns) {
  const std::int64_t shapes[][2] = {{1, 1}, {1, 37}, {37, 1}, {3, 5}, {7, 13}, {1000, 50},
                                    {997, 1009}, {4099, 3}, {300, 200}};
  for (const auto& shape : shapes) {
    for (int G : {1, 2, 3, 4, 7}) {
      for (int chunks : {1, 2, 5}) {
        const Layout at{shape[0], shape[1], 4, G, chunks};
        for (int g = 0; g < G; ++g) {
          std::vector<int> sent(at.in_elems(g)), received(at.recv_elems(g));
          std::vector<int> columns(at.rows);
          for (int other = 0; other < G; ++other) {
            for (int c = 0; c < chunks; ++c) {
              const Piece s = at.sent(g, other, c), r = at.received(g, other, c);
              ASSERT_EQ(s.count, at.received(other, g, c).count);
              ASSERT_EQ(r.count, at.sent(other, g, c).count);
              for (std::int64_t i = s.offset; i < s.offset + s.count; ++i) ++sent.at(i);
              for (std::int64_t i = r.offset; i < r.offset + r.count; ++i) ++received.at(i);
              const std::int64_t width = at.chunks_of(other).count(c);
              for (std::int64_t j = 0; j < width; ++j) ++columns.at(at.column(other, c) + j);
            }
          }
          const auto once = [](const std::vector<int>& v) {
            return std::all_of(v.begin(), v.end(), [](int x) { return x == 1; });
          };
          EXPECT_TRUE(once(sent)) << shape[0] << " x " << shape[1] << ", GPU " << g << " of " << G;
          EXPECT_EQ(std::count(received.begin(), received.end(), 1), at.out_elems(g));
          EXPECT_EQ(std::count_if(received.begin(), received.end(), [](int x) { return x > 1; }), 0)
              << shape[0] << " x " << shape[1] << ", GPU " << g;
          EXPECT_TRUE(once(columns)) << shape[0] << " x " << shape[1] << ", GPU " << g;
        }
      }
    }
  }
}

// NCCL copies a piece fastest when it starts on 16 bytes. Every piece received does, for every
// element size, G and split (46341 rows over 2 GPUs: 23171 and 23170, odd); every piece sent
// does but the last chunk's, whose rows may be any number.
TEST(CpuStep10Layout, PiecesStartOn16BytesButTheLastChunksSends) {
  const std::int64_t shapes[][2] = {{46341, 46341}, {1000, 999}, {997, 1009}, {4099, 37}, {65, 63}};
  for (const auto& shape : shapes) {
    for (std::size_t elem : {1, 2, 4, 8, 16}) {
      for (int G : {2, 3, 4, 7}) {
        for (int chunks : {1, 4, 32}) {
          const Layout at{shape[0], shape[1], elem, G, chunks};
          for (int d = 0; d < G; ++d) {
            for (int s = 0; s < G; ++s) {
              for (int c = 0; c < chunks; ++c) {
                const std::string where = std::to_string(shape[0]) + " x " + std::to_string(shape[1]) +
                                          ", " + std::to_string(elem) + " bytes, G " + std::to_string(G) +
                                          ", chunk " + std::to_string(c) + " of " + std::to_string(chunks);
                EXPECT_EQ(at.received(d, s, c).offset * elem % 16, 0u) << where;
                const bool last = c == chunks - 1 || at.chunks_of(s).count(c + 1) == 0;
                if (!last) EXPECT_EQ(at.sent(s, d, c).offset * elem % 16, 0u) << where;
              }
            }
          }
        }
      }
    }
  }
}

TEST(CpuStep10Layout, AutoChunksOnePer128MiBFrom4To32AndOneOnOneGpu) {
  EXPECT_EQ(step10::auto_chunks(32768, 32768, 4, 1), 1);
  EXPECT_EQ(step10::auto_chunks(1024, 1024, 4, 2), 4);
  EXPECT_EQ(step10::auto_chunks(32768, 32768, 4, 2), 16);   // 2 GiB per GPU
  EXPECT_EQ(step10::auto_chunks(65536, 65536, 4, 2), 32);   // 8 GiB: the most
}

// The direct placement writes through the other GPUs' windows only where every rule holds, and
// refuses in one line otherwise: no window (NCCL_LOCAL_REGISTER=0), a window NCCL did not map
// (symmetric memory off: its local registration), GPUs on other machines, no peer access.
TEST(CpuStep10Reach, RefusesUnlessEveryGpuIsMappedAndReachable) {
  step10::ReachFacts ok;
  ok.me = 1;
  ok.gpus = 3;
  ok.window = ok.window_mapped = true;
  ok.lsa = 3;
  ok.peer_access = {1, 1, 1};
  EXPECT_EQ(step10::why_unreachable(ok), "");

  step10::ReachFacts f = ok;
  f.window = f.window_mapped = false;
  EXPECT_NE(step10::why_unreachable(f).find("no window"), std::string::npos);
  f = ok;
  f.window_mapped = false;
  EXPECT_NE(step10::why_unreachable(f).find("not mapped"), std::string::npos);
  f = ok;
  f.lsa = 1;
  EXPECT_NE(step10::why_unreachable(f).find("reaches only 1 of the 3"), std::string::npos);
  f = ok;
  f.peer_access = {0, 1, 1};
  EXPECT_NE(step10::why_unreachable(f).find("cannot map GPU 0's memory"), std::string::npos);
  f = ok;
  f.peer_access = {1, 1, -1};
  EXPECT_NE(step10::why_unreachable(f).find("cannot see GPU 2"), std::string::npos);
  for (const auto& why : {step10::why_unreachable(f)}) EXPECT_EQ(why.find('\n'), std::string::npos);
}

// The bound's link rate, from what NVML reports: an H100's 18 NVLinks at NVML's 26.562 GB/s per
// link and direction; PCIe by generation and lanes, less the line code; unknown stays unknown.
TEST(CpuStep10LinkRate, NvlinkTimesLinksElsePcieElseUnknown) {
  EXPECT_NEAR(step10::nvlink_gbps(18, 26562), 478.1, 0.1);
  EXPECT_NEAR(step10::nvlink_gbps(18, 25000), 450.0, 1e-9);
  EXPECT_EQ(step10::nvlink_gbps(0, 25000), 0.0);
  EXPECT_NEAR(step10::pcie_gbps(5, 16), 63.0, 0.05);   // 32 GT/s x 16 x 128/130 / 8
  EXPECT_NEAR(step10::pcie_gbps(4, 16), 31.5, 0.05);
  EXPECT_NEAR(step10::pcie_gbps(2, 16), 8.0, 1e-9);    // 5 GT/s, 8b/10b
  EXPECT_NEAR(step10::pcie_gbps(6, 16), 121.0, 0.05);  // 64 GT/s, 242 of 256 bytes
  EXPECT_EQ(step10::pcie_gbps(0, 16), 0.0);

  step10::LinkFacts f;
  f.known = true;
  f.nvlinks = 18;
  f.nvlink_mbps = 26562;
  f.nvlink_to_all = true;
  f.pcie_gen = 5;
  f.pcie_lanes = 16;
  const step10::LinkRate nv = step10::link_rate(f);
  EXPECT_NEAR(nv.gbps, 478.1, 0.1);
  EXPECT_NE(nv.what.find("18 NVLinks"), std::string::npos);
  EXPECT_NE(nv.what.find("theoretical"), std::string::npos);
  f.nvlink_mbps = 0;  // NVLinks to every GPU whose speed NVML did not give: PCIe, and say why
  f.why_no_speed = "NVML speed fields: 3, 3";
  EXPECT_NEAR(step10::link_rate(f).gbps, 63.0, 0.05);
  EXPECT_NE(step10::link_rate(f).what.find("18 NVLinks of unknown speed (NVML speed fields: 3, 3)"),
            std::string::npos);
  f.nvlink_mbps = 26562;
  f.nvlink_to_all = false;  // an NVLink bridge to one GPU, the others over PCIe
  EXPECT_NEAR(step10::link_rate(f).gbps, 63.0, 0.05);
  EXPECT_NE(step10::link_rate(f).what.find("PCIe 5 x16"), std::string::npos);
  f.pcie_gen = 0;
  EXPECT_EQ(step10::link_rate(f).gbps, 0.0);
  EXPECT_EQ(step10::link_rate(step10::LinkFacts{}).gbps, 0.0);
}

#ifdef STEP10_HAVE_NCCL

TEST(CpuStep10Team, NcclIdSurvivesTheTripThroughTheEnvironment) {
  ncclUniqueId id;
  for (std::size_t i = 0; i < sizeof id; ++i) id.internal[i] = static_cast<char>(i * 37 + 11);
  const std::string hex = step10::to_hex(&id, sizeof id);
  EXPECT_EQ(hex.size(), 2 * sizeof id);
  ncclUniqueId back{};
  ASSERT_TRUE(step10::from_hex(hex, &back, sizeof back));
  EXPECT_EQ(std::memcmp(&id, &back, sizeof id), 0);
  EXPECT_FALSE(step10::from_hex(hex.substr(1), &back, sizeof back));            // too short
  EXPECT_FALSE(step10::from_hex("zz" + hex.substr(2), &back, sizeof back));     // not hex
}

// The data tells the same method on other GPU counts, or with chunks given, apart by its id.
TEST(CpuStep10Ids, CarryTheGpusAndChunksGiven) {
  EXPECT_EQ(step10::run_id("overlapped", 2, true, "auto"), "overlapped-2gpus");
  EXPECT_EQ(step10::run_id("overlapped", 1, true, "auto"), "overlapped-1gpu");
  EXPECT_EQ(step10::run_id("overlapped", 4, true, "8"), "overlapped-4gpus-8chunks");
  EXPECT_EQ(step10::run_id("peer", 2, false, "8"), "peer-2gpus");
}

// The check of one GPU's block passes the right block and names the first wrong element in the
// whole output's coordinates, saying when it was never written.
TEST(CpuStep10Check, FindsTheFirstWrongElementOfOneGpusBlock) {
  const Layout at{7, 10, 4, 3, 1};  // GPU 1 holds output rows 4..6 (input columns 4..6)
  const std::uint64_t seed = 42;
  std::vector<std::uint8_t> block(at.out_elems(1) * 4);
  for (std::int64_t j = 0; j < 3; ++j)
    for (std::int64_t r = 0; r < 7; ++r)
      course::pattern_element(course::ElemType::f32, r * 10 + 4 + j, seed, &block[(j * 7 + r) * 4]);
  EXPECT_EQ(step10::check_block(at, 1, course::ElemType::f32, seed, block.data()), "");
  block[(1 * 7 + 5) * 4] ^= 1;  // output row 5, column 5
  EXPECT_NE(step10::check_block(at, 1, course::ElemType::f32, seed, block.data())
                .find("mismatch at (row 5, col 5) of the 10 x 7 output"),
            std::string::npos);
  std::memset(&block[(0 * 7 + 2) * 4], 0xFF, 4);  // output row 4, column 2: the poison
  EXPECT_NE(step10::check_block(at, 1, course::ElemType::f32, seed, block.data())
                .find("(row 4, col 2) of the 10 x 7 output: expected"),
            std::string::npos);
  EXPECT_NE(step10::check_block(at, 1, course::ElemType::f32, seed, block.data())
                .find("never written"),
            std::string::npos);
}

// G GPUs simulated on one: runs the lesson's pack and place for every GPU, with the exchange
// done by copies of the same pieces, and checks every GPU's block and its guard bands.
::testing::AssertionResult check_simulated(course::ElemType type, std::int64_t rows,
                                           std::int64_t cols, int G, int chunks) {
  const std::size_t size = course::elem_size(type), guard = 4096;
  const Layout at{rows, cols, size, G, chunks};
  const std::uint64_t seed = course::fresh_seed();
  const course::Problem p{type, rows, cols, 1};
  std::vector<std::uint8_t> in(p.bytes()), ref(p.bytes());
  course::fill_pattern(type, in.data(), rows * cols, seed);
  course::cpu_transpose(p, in.data(), ref.data());

  std::vector<course::DeviceBuffer> ins, outs, sends, recvs;
  std::vector<step10::Part> parts;
  for (int g = 0; g < G; ++g) {
    ins.emplace_back(at.in_elems(g) * size);
    outs.emplace_back(at.out_elems(g) * size + 2 * guard);
    sends.emplace_back(at.in_elems(g) * size);
    recvs.emplace_back(at.recv_elems(g) * size);
    CUDA_CHECK(cudaMemcpy(ins[g].get(), in.data() + at.row_blocks().first(g) * cols * size,
                          at.in_elems(g) * size, cudaMemcpyHostToDevice));
    for (auto* b : {&outs[g], &sends[g], &recvs[g]})
      CUDA_CHECK(cudaMemset(b->get(), course::kPoisonByte, b->bytes()));
    parts.push_back({at, g, ins[g].get(), outs[g].as<char>() + guard, sends[g].get(), recvs[g].get()});
  }
  for (int c = 0; c < chunks; ++c) {
    for (int g = 0; g < G; ++g) step10::pack(parts[g], c, nullptr);
    for (int s = 0; s < G; ++s) {
      for (int d = 0; d < G; ++d) {
        const Piece from = at.sent(s, d, c), to = at.received(d, s, c);
        if (s == d || from.count == 0) continue;
        CUDA_CHECK(cudaMemcpy(recvs[d].as<char>() + to.offset * size,
                              sends[s].as<char>() + from.offset * size, from.count * size,
                              cudaMemcpyDeviceToDevice));
      }
    }
    for (int d = 0; d < G; ++d)
      for (int s = 0; s < G; ++s) step10::place(parts[d], s, c, nullptr);
  }
  CUDA_CHECK(cudaDeviceSynchronize());

  return step10::check_blocks(outs, guard, ref, at.col_blocks(), rows, size,
                              p.describe() + " over " + std::to_string(G) + " GPUs in " +
                                  std::to_string(chunks) + " chunks (seed " + std::to_string(seed) + ")");
}

TEST(Step10Simulated, EveryAwkwardShapeOverTwoThreeAndFourGpus) {
  REQUIRE_GPU();
  for (const course::Shape& s : course::awkward_shapes()) {
    for (int G : {2, 3, 4}) {
      for (int chunks : {1, 3}) {
        ASSERT_TRUE(check_simulated(course::ElemType::f32, s.rows, s.cols, G, chunks));
      }
    }
  }
}

TEST(Step10Simulated, EveryElementTypeOnOddShapesAndSevenGpus) {
  REQUIRE_GPU();
  const course::Shape shapes[] = {{1, 37}, {37, 1}, {7, 13}, {127, 129}, {997, 1009}, {1031, 4}};
  for (course::ElemType t : course::all_elem_types()) {
    for (const course::Shape& s : shapes) {
      for (int G : {2, 7}) {
        ASSERT_TRUE(check_simulated(t, s.rows, s.cols, G, 2));
      }
    }
  }
}

// Chunks of whole multiples of 64 rows and shapes where they leave tiles whole and split.
TEST(Step10Simulated, ManyChunksOnBiggerShapes) {
  REQUIRE_GPU();
  ASSERT_TRUE(check_simulated(course::ElemType::f32, 2048, 1536, 2, 16));
  ASSERT_TRUE(check_simulated(course::ElemType::i8, 4096, 1000, 3, 8));
  ASSERT_TRUE(check_simulated(course::ElemType::f64, 1000, 999, 4, 64));
}

// The peer writes' kernel, every simulated GPU writing into every GPU's block.
TEST(Step10Simulated, PeerWritesOnEveryAwkwardShapeOverOneToFiveGpus) {
  REQUIRE_GPU();
  for (const course::Shape& s : course::awkward_shapes()) {
    for (int G : {1, 2, 3, 5}) {
      ASSERT_TRUE(step10::check_peer(course::ElemType::f32, s.rows, s.cols, G, step10::launch_to_owners<false>));
    }
  }
}

TEST(Step10Simulated, PeerWritesInEveryElementType) {
  REQUIRE_GPU();
  for (course::ElemType t : course::all_elem_types()) {
    for (int G : {2, 3}) {
      ASSERT_TRUE(step10::check_peer(t, 997, 1009, G, step10::launch_to_owners<false>));
      ASSERT_TRUE(step10::check_peer(t, 37, 1, G, step10::launch_to_owners<false>));
    }
  }
}

// With one GPU, the pipeline is step 08's transpose of the whole matrix (no NCCL call).
std::vector<course::Variant> one_gpu_variants() {
  std::vector<course::Variant> v;
  for (course::ElemType t : course::all_elem_types()) {
    v.push_back({std::string("pipeline-1gpu-") + course::elem_name(t),
                 std::string("pipeline on one GPU, ") + course::elem_name(t), "256", "-",
                 [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
                   const Layout at{p.rows, p.cols, course::elem_size(p.type), 1, 1};
                   step10::Pipeline pipe(1);
                   pipe.run({at, 0, in, out, nullptr, nullptr}, nullptr, s);
                   return cudaGetLastError();
                 }});
  }
  return v;
}

TEST(Step10OneGpu, ThePipelineTransposesEveryAwkwardShapeInEveryType) {
  REQUIRE_GPU();
  const auto variants = one_gpu_variants();
  for (std::size_t i = 0; i < variants.size(); ++i) {
    EXPECT_TRUE(course::check_awkward_shapes(variants[i], course::all_elem_types()[i]));
  }
}

#endif  // STEP10_HAVE_NCCL

}  // namespace
