#include "references.cuh"

#include <string>

#include "check.cuh"

namespace course {

namespace {

__global__ void copy_float4(const float4* __restrict__ in, float4* __restrict__ out,
                            std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

__global__ void copy_bytes(const unsigned char* __restrict__ in, unsigned char* __restrict__ out,
                           std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw CudaError(std::string("cuBLAS error: ") + call + " failed at " + file + ":" +
                    std::to_string(line) + ": " + cublasGetStatusName(status) + " (" +
                    cublasGetStatusString(status) + ")");
  }
}
#define CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

}  // namespace

cudaError_t launch_copy_kernel(const void* in, void* out, std::size_t bytes,
                               cudaStream_t stream) {
  constexpr unsigned kThreads = 256;
  const std::size_t vectors = bytes / 16, tail = bytes % 16;
  if (vectors > 0) {
    const std::size_t blocks = (vectors + kThreads - 1) / kThreads;
    if (blocks > 0x7FFFFFFFu) return cudaErrorInvalidConfiguration;
    copy_float4<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<const float4*>(in), static_cast<float4*>(out), vectors);
  }
  if (tail > 0) {
    copy_bytes<<<1, 16, 0, stream>>>(static_cast<const unsigned char*>(in) + 16 * vectors,
                                     static_cast<unsigned char*>(out) + 16 * vectors, tail);
  }
  return cudaGetLastError();
}

cudaError_t launch_memcpy(const void* in, void* out, std::size_t bytes, cudaStream_t stream) {
  return cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, stream);
}

bool cublas_has_type(ElemType type) { return type == ElemType::f32 || type == ElemType::f64; }

CublasTranspose::CublasTranspose() { CUBLAS_CHECK(cublasCreate(&handle_)); }

CublasTranspose::~CublasTranspose() {
  if (handle_) cublasDestroy(handle_);
}

void CublasTranspose::run(const Problem& p, const void* in, void* out, cudaStream_t stream) {
  if (p.rows > 0x7FFFFFFF || p.cols > 0x7FFFFFFF) {
    throw UsageError("cuBLAS geam takes int sizes: " + p.describe() + " is too large for it");
  }
  CUBLAS_CHECK(cublasSetStream(handle_, stream));
  const int m = static_cast<int>(p.rows), n = static_cast<int>(p.cols);
  const std::size_t matrix = static_cast<std::size_t>(p.rows * p.cols);
  for (std::int64_t b = 0; b < p.batch; ++b) {
    if (p.type == ElemType::f32) {
      const float one = 1, zero = 0;
      const float* a = static_cast<const float*>(in) + b * matrix;
      float* c = static_cast<float*>(out) + b * matrix;
      CUBLAS_CHECK(cublasSgeam(handle_, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, a, n, &zero, c, m,
                               c, m));
    } else if (p.type == ElemType::f64) {
      const double one = 1, zero = 0;
      const double* a = static_cast<const double*>(in) + b * matrix;
      double* c = static_cast<double*>(out) + b * matrix;
      CUBLAS_CHECK(cublasDgeam(handle_, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &one, a, n, &zero, c, m,
                               c, m));
    } else {
      throw UsageError(std::string("cuBLAS geam has no ") + elem_name(p.type) + " version");
    }
  }
}

}  // namespace course
