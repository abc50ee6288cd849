/// @file peers.cuh
/// @brief The libraries' transposes every step is timed beside: cuBLAS geam and cuBLASLt's
/// cublasLtMatrixTransform, each called the way an expert would call it.
///
/// Both are rows of the same run as the step's kernels (common/harness.cu): verified bit for bit
/// like them, timed with the same CUDA events. PyTorch's rows come from plots/peers.py.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "problem.hpp"

namespace course {

/// True for the types cuBLAS geam has: f32 (cublasSgeam) and f64 (cublasDgeam).
bool cublas_has_type(ElemType type);

/// cuBLAS's out-of-place transpose, C = 1 * A^T + 0 * B, as a reference row. cuBLAS is
/// column-major, so our row-major rows x cols input is its cols x rows matrix A (lda = cols), and
/// the row-major cols x rows output is its rows x cols matrix C (ldc = rows).
class CublasTranspose {
 public:
  CublasTranspose();
  ~CublasTranspose();
  CublasTranspose(const CublasTranspose&) = delete;
  CublasTranspose& operator=(const CublasTranspose&) = delete;

  /// Transposes every matrix of @p p (one geam per matrix: geam has no batched form).
  /// Throws CudaError on a cuBLAS error.
  void run(const Problem& p, const void* in, void* out, cudaStream_t stream);

 private:
  cublasHandle_t handle_ = nullptr;
};

/// True for the types cublasLtMatrixTransform takes: f32, f64, f16, bf16, i8.
bool cublaslt_has_type(ElemType type);

/// The scale types cublasLtMatrixTransform may take for @p type, the usual one first: float for
/// f32, f16, bf16 (as cuBLASLt asks for halves); double, then float, for f64; float, then int32,
/// for i8. The harness times each one that runs and keeps the fastest.
std::vector<cudaDataType_t> cublaslt_scales(ElemType type);

/// cublasLtMatrixTransform with TRANSA = T on row-major layouts (CUBLASLT_ORDER_ROW, so no
/// swap of rows and columns as with geam): C (cols x rows) = 1 * A^T. A batch is one call, a
/// strided batch (CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT and STRIDED_BATCH_OFFSET). The handle, the
/// descriptor and both layouts are made once, here, for problem @p p and scale type @p scale;
/// run() makes no allocation and needs no workspace.
class CublasLtTranspose {
 public:
  /// Makes the handle, the descriptor and the layouts for @p p with scale type @p scale; throws
  /// CudaError when cuBLASLt refuses one of them.
  CublasLtTranspose(const Problem& p, cudaDataType_t scale);
  ~CublasLtTranspose();
  CublasLtTranspose(const CublasLtTranspose&) = delete;
  CublasLtTranspose& operator=(const CublasLtTranspose&) = delete;

  /// Transposes every matrix of the problem given to the constructor, in one call. Throws
  /// CudaError when cuBLASLt refuses it (a scale type it does not take for this type).
  cudaError_t run(const void* in, void* out, cudaStream_t stream);
  /// "cuBLASLt MatrixTransform (scale 32F)": the row's kernel name.
  std::string name() const;

 private:
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatrixTransformDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, c_ = nullptr;
  cudaDataType_t scale_;
};

}  // namespace course
