#include "peers.cuh"

#include <string>

#include "check.cuh"

namespace course {

namespace {

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw CudaError(std::string("cuBLAS error: ") + call + " failed at " + file + ":" +
                    std::to_string(line) + ": " + cublasGetStatusName(status) + " (" +
                    cublasGetStatusString(status) + ")");
  }
}
#define CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

cudaDataType_t lt_type(ElemType type) {
  switch (type) {
    case ElemType::f32: return CUDA_R_32F;
    case ElemType::f64: return CUDA_R_64F;
    case ElemType::f16: return CUDA_R_16F;
    case ElemType::bf16: return CUDA_R_16BF;
    case ElemType::i8: return CUDA_R_8I;
    default: throw UsageError(std::string("cuBLASLt has no ") + elem_name(type) + " transform");
  }
}

// A row-major rows x cols layout, `batch` matrices one after the other.
cublasLtMatrixLayout_t row_major(cudaDataType_t type, std::int64_t rows, std::int64_t cols,
                                 std::int64_t batch) {
  cublasLtMatrixLayout_t layout = nullptr;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, type, rows, cols, cols));
  const cublasLtOrder_t order = CUBLASLT_ORDER_ROW;
  CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &order,
                                                sizeof order));
  if (batch > 1) {
    const std::int32_t count = static_cast<std::int32_t>(batch);
    const std::int64_t stride = rows * cols;
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                  &count, sizeof count));
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
  }
  return layout;
}

}  // namespace

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

bool cublaslt_has_type(ElemType type) {
  return type == ElemType::f32 || type == ElemType::f64 || type == ElemType::f16 ||
         type == ElemType::bf16 || type == ElemType::i8;
}

std::vector<cudaDataType_t> cublaslt_scales(ElemType type) {
  if (type == ElemType::f64) return {CUDA_R_64F, CUDA_R_32F};
  if (type == ElemType::i8) return {CUDA_R_32F, CUDA_R_32I};
  return {CUDA_R_32F};
}

CublasLtTranspose::CublasLtTranspose(const Problem& p, cudaDataType_t scale) : scale_(scale) {
  const cudaDataType_t type = lt_type(p.type);
  CUBLAS_CHECK(cublasLtCreate(&handle_));
  CUBLAS_CHECK(cublasLtMatrixTransformDescCreate(&desc_, scale_));
  const cublasOperation_t trans = CUBLAS_OP_T;
  CUBLAS_CHECK(cublasLtMatrixTransformDescSetAttribute(
      desc_, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &trans, sizeof trans));
  a_ = row_major(type, p.rows, p.cols, p.batch);
  c_ = row_major(type, p.cols, p.rows, p.batch);
}

CublasLtTranspose::~CublasLtTranspose() {
  if (c_) cublasLtMatrixLayoutDestroy(c_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (desc_) cublasLtMatrixTransformDescDestroy(desc_);
  if (handle_) cublasLtDestroy(handle_);
}

cudaError_t CublasLtTranspose::run(const void* in, void* out, cudaStream_t stream) {
  // alpha = 1 and beta = 0 in the scale's type; with beta = 0 there is no B (nullptr).
  const double one_d = 1, zero_d = 0;
  const float one_f = 1, zero_f = 0;
  const std::int32_t one_i = 1, zero_i = 0;
  const bool f64 = scale_ == CUDA_R_64F, i32 = scale_ == CUDA_R_32I;
  const void* one = f64 ? static_cast<const void*>(&one_d) : i32 ? static_cast<const void*>(&one_i)
                                                                 : &one_f;
  const void* zero = f64 ? static_cast<const void*>(&zero_d)
                         : i32 ? static_cast<const void*>(&zero_i) : &zero_f;
  CUBLAS_CHECK(cublasLtMatrixTransform(handle_, desc_, one, in, a_, zero, nullptr, nullptr, out,
                                       c_, stream));
  return cudaGetLastError();
}

std::string CublasLtTranspose::name() const {
  const char* scale = scale_ == CUDA_R_64F ? "64F" : scale_ == CUDA_R_32I ? "32I" : "32F";
  return std::string("cuBLASLt MatrixTransform (scale ") + scale + ")";
}

}  // namespace course
