/// @file device_buffer.cuh
/// @brief RAII owner of device memory: freed on every path, never copied.
#pragma once

#include <cstddef>
#include <utility>

#include "check.cuh"

namespace course {

/// Where DeviceBuffer's memory comes from: cudaMalloc. Another policy with the same two functions
/// gives the same buffer over another allocator (step 10's ncclMemAlloc, nccl_buffer.cuh).
struct CudaMalloc {
  /// `bytes` bytes into *ptr; throws on failure.
  static void allocate(void** ptr, std::size_t bytes) { CUDA_CHECK(cudaMalloc(ptr, bytes)); }
  /// Frees ptr; no check: a destructor must not throw.
  static void release(void* ptr) { cudaFree(ptr); }
};

/// Owns `bytes` bytes of device memory from @p Alloc. Move-only; the destructor frees it.
template <typename Alloc>
class BasicDeviceBuffer {
 public:
  BasicDeviceBuffer() = default;
  /// Allocates @p bytes (at least one byte, so that a pointer always exists).
  explicit BasicDeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    Alloc::allocate(&ptr_, bytes ? bytes : 1);
  }
  ~BasicDeviceBuffer() {
    if (ptr_) Alloc::release(ptr_);
  }
  BasicDeviceBuffer(const BasicDeviceBuffer&) = delete;
  BasicDeviceBuffer& operator=(const BasicDeviceBuffer&) = delete;
  /// Takes @p other's memory; @p other is left empty.
  BasicDeviceBuffer(BasicDeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  /// Swaps memory with @p other, which frees this buffer's old memory when it is destroyed.
  BasicDeviceBuffer& operator=(BasicDeviceBuffer&& other) noexcept {
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

/// Device memory from cudaMalloc: what every step allocates.
using DeviceBuffer = BasicDeviceBuffer<CudaMalloc>;

}  // namespace course
