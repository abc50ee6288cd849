// The libraries' transposes the steps are timed beside (common/peers.cu), held to the course's
// own checks: every awkward shape, poisoned output in guard bands, bit for bit.
#include <gtest/gtest.h>

#include "device_buffer.cuh"
#include "peers.cuh"
#include "testing.cuh"

namespace course {
namespace {

// cuBLASLt's transform as a kernel of the harness, made for each problem it is given.
Variant cublaslt(cudaDataType_t scale) {
  return Variant{"cublaslt", "cuBLASLt", "-", "-",
                 [scale](const Problem& p, const void* in, void* out, cudaStream_t s) {
                   CublasLtTranspose lt(p, scale);
                   const cudaError_t status = lt.run(in, out, s);
                   return status != cudaSuccess ? status : cudaStreamSynchronize(s);
                 }};
}

TEST(Peers, CublasLtTransposesEveryTypeItTakes) {
  REQUIRE_GPU();
  // Every type, with the first of its scale types that cuBLASLt takes (as the harness does);
  // int8 with both.
  for (ElemType t : all_elem_types()) {
    if (!cublaslt_has_type(t)) continue;
    cudaDataType_t scale = cublaslt_scales(t).front();
    for (cudaDataType_t s : cublaslt_scales(t)) {
      try {
        CublasLtTranspose lt(Problem{t, 1, 1, 1}, s);
        DeviceBuffer in(elem_size(t)), out(elem_size(t));
        lt.run(in.get(), out.get(), nullptr);
        scale = s;
        break;
      } catch (const CudaError&) {  // this scale type is refused: try the next
      }
    }
    EXPECT_TRUE(check_awkward_shapes(cublaslt(scale), t)) << elem_name(t);
  }
  EXPECT_TRUE(check_awkward_shapes(cublaslt(CUDA_R_32I), ElemType::i8)) << "int8, int32 scale";
}

TEST(Peers, CublasLtTransposesAStridedBatchInOneCall) {
  REQUIRE_GPU();
  EXPECT_TRUE(check_awkward_shapes(cublaslt(CUDA_R_32F), ElemType::f32, 3));
  EXPECT_TRUE(check_awkward_shapes(cublaslt(CUDA_R_32I), ElemType::i8, 5));
}

TEST(PeersCpu, TheTypesCuBlasLtTakes) {
  EXPECT_TRUE(cublaslt_has_type(ElemType::f16));
  EXPECT_TRUE(cublaslt_has_type(ElemType::i8));
  EXPECT_FALSE(cublaslt_has_type(ElemType::b128));
  EXPECT_FALSE(cublas_has_type(ElemType::f16));
}

}  // namespace
}  // namespace course
