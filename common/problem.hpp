/// @file problem.hpp
/// @brief Element types and the shape of a transpose problem (host-only, no CUDA needed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace course {

/// The element types the course transposes. A transpose only moves bytes, so the harness handles
/// every type by its size; the type still matters for bit patterns (no NaN) and for reporting.
enum class ElemType { f32, f64, f16, bf16, i8, b128 };

/// Bytes per element: 4, 8, 2, 2, 1, 16.
std::size_t elem_size(ElemType t);
/// The name used on the command line and in reports: "f32", "f64", "f16", "bf16", "i8", "b128".
const char* elem_name(ElemType t);
/// Parses a name written by elem_name; returns false for an unknown name.
bool parse_elem_type(const std::string& name, ElemType* out);
/// True for floating-point types, whose NaN patterns must never pass verification.
bool elem_is_float(ElemType t);
/// Every type, in the order above.
const std::vector<ElemType>& all_elem_types();

/// One transpose: `batch` matrices of rows x cols, stored row-major and back to back, become
/// `batch` matrices of cols x rows.
struct Problem {
  ElemType type = ElemType::f32;  ///< the element type
  std::int64_t rows = 8192;       ///< rows of each input matrix
  std::int64_t cols = 8192;       ///< columns of each input matrix
  std::int64_t batch = 1;         ///< how many matrices

  /// Elements of all the matrices together.
  std::int64_t elements() const { return rows * cols * batch; }
  /// Bytes of all the matrices together (the input; the output is as large).
  std::size_t bytes() const { return static_cast<std::size_t>(elements()) * elem_size(type); }
  /// Bytes a transpose must move through memory: each element read once and written once.
  double bytes_moved() const { return 2.0 * static_cast<double>(bytes()); }
  /// "8192 x 8192 f32" or "64 x 64 f32, batch 16384".
  std::string describe() const;
};

}  // namespace course
