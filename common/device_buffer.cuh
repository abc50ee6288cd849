/// @file device_buffer.cuh
/// @brief RAII owner of device memory: freed on every path, never copied.
#pragma once

#include <cstddef>
#include <utility>

#include "check.cuh"

namespace course {

/// Owns `bytes` bytes of device memory from cudaMalloc. Move-only; the destructor frees it.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates @p bytes (at least one byte, so that a pointer always exists).
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    CUDA_CHECK(cudaMalloc(&ptr_, bytes ? bytes : 1));
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);  // no check: a destructor must not throw
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  /// Takes @p other's memory; @p other is left empty.
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  /// Swaps memory with @p other, which frees this buffer's old memory when it is destroyed.
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }

  /// The device address, as bytes.
  void* get() const { return ptr_; }
  /// The device address, as @p T.
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  /// The size in bytes.
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace course
