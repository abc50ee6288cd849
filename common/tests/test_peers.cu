// The libraries' transposes the steps are timed beside (common/peers.cu), held to the course's
// own checks: every awkward shape, poisoned output in guard bands, bit for bit.
#include <gtest/gtest.h>

#include "peers.cuh"
#include "testing.cuh"

namespace course {
namespace {

// cuBLASLt's transform as a kernel of the harness, made for each problem it is given.
Variant cublaslt(bool int_scale) {
  return Variant{"cublaslt", "cuBLASLt", "-", "-",
                 [int_scale](const Problem& p, const void* in, void* out, cudaStream_t s) {
                   CublasLtTranspose lt(p, int_scale);
                   const cudaError_t status = lt.run(in, out, s);
                   return status != cudaSuccess ? status : cudaStreamSynchronize(s);
                 }};
}

TEST(Peers, CublasLtTransposesEveryTypeItTakes) {
  REQUIRE_GPU();
  for (ElemType t : all_elem_types()) {
    if (!cublaslt_has_type(t)) continue;
    EXPECT_TRUE(check_awkward_shapes(cublaslt(false), t)) << elem_name(t);
  }
  EXPECT_TRUE(check_awkward_shapes(cublaslt(true), ElemType::i8)) << "int8, int32 scale";
}

TEST(Peers, CublasLtTransposesAStridedBatchInOneCall) {
  REQUIRE_GPU();
  EXPECT_TRUE(check_awkward_shapes(cublaslt(false), ElemType::f32, 3));
  EXPECT_TRUE(check_awkward_shapes(cublaslt(true), ElemType::i8, 5));
}

TEST(PeersCpu, TheTypesCuBlasLtTakes) {
  EXPECT_TRUE(cublaslt_has_type(ElemType::f16));
  EXPECT_TRUE(cublaslt_has_type(ElemType::i8));
  EXPECT_FALSE(cublaslt_has_type(ElemType::b128));
  EXPECT_FALSE(cublas_has_type(ElemType::f16));
}

}  // namespace
}  // namespace course
