// Step 08, part 2 - narrow elements packed into 4-byte words: a thread loads the same 16 bytes of
// k = 4 / S neighbouring rows and transposes each k x k block in registers, so that each word it
// writes to shared memory holds k elements of one OUTPUT row. The CPU tests run this code too.
//   make step08 && ./step08 --type i8
#pragma once

#include <cstdlib>
#include <cstring>

#include "tile_grid.cuh"  // Element<S>

namespace step08 {

struct Vec16 { std::uint32_t w[4]; };  // one global load or store; word 0 the lowest addressed

/// A GPU faults on an access not aligned to its size, a CPU does not: the host version traps.
template <std::size_t N>
__host__ __device__ inline void expect_aligned([[maybe_unused]] const void* p) {
#ifndef __CUDA_ARCH__
  if (reinterpret_cast<std::uintptr_t>(p) % N != 0) std::abort();
#endif
}

__host__ __device__ inline Vec16 load16(const void* p) {
  expect_aligned<16>(p);
  const uint4 v = *static_cast<const uint4*>(p);
  return {{v.x, v.y, v.z, v.w}};
}
__host__ __device__ inline void store16(void* p, const Vec16& v) {
  expect_aligned<16>(p);
  *static_cast<uint4*>(p) = make_uint4(v.w[0], v.w[1], v.w[2], v.w[3]);
}
template <typename U>  // one unit of 4, 8 or 16 bytes to shared memory
__host__ __device__ inline void store_unit(void* p, const U& x) {
  expect_aligned<sizeof(U)>(p);
  *static_cast<U*>(p) = x;
}

/// prmt (CUDA's __byte_perm): byte i of the result is byte (s >> 4i) & 7 of the eight bytes
/// {y:x}, x the low four. Any shuffle of two words' bytes in one instruction.
__host__ __device__ inline std::uint32_t byte_perm(std::uint32_t x, std::uint32_t y,
                                                   std::uint32_t s) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, y, s);
#else
  const std::uint64_t both = (static_cast<std::uint64_t>(y) << 32) | x;
  std::uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= ((both >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return r;
#endif
}

/// Per element size: k = kRows rows packed, the Unit stored, and to_units: k vectors (the same 16
/// bytes of k rows) in, 16 / S units out, unit e = column e. From 4 bytes up: nothing to pack.
template <int S>
struct Pack {
  static constexpr int kRows = 1;
  using Unit = typename Element<S>::type;
  __host__ __device__ static void to_units(const Vec16 (&v)[1], Unit (&u)[16 / S]) {
    std::memcpy(u, v[0].w, 16);
  }
};

template <>
struct Pack<1> {  // int8, fp8: 4 x 4 blocks of bytes, interleaved by pairs of rows, then pairs
  static constexpr int kRows = 4;
  using Unit = std::uint32_t;
  __host__ __device__ static void to_units(const Vec16 (&v)[4], Unit (&u)[16]) {
#pragma unroll
    for (int w = 0; w < 4; ++w) {  // word w of rows a, b, c, d: columns 4w .. 4w + 3
      const std::uint32_t a = v[0].w[w], b = v[1].w[w], c = v[2].w[w], d = v[3].w[w];
      const std::uint32_t ab01 = byte_perm(a, b, 0x5140);  // a0 b0 a1 b1
      const std::uint32_t ab23 = byte_perm(a, b, 0x7362);  // a2 b2 a3 b3
      const std::uint32_t cd01 = byte_perm(c, d, 0x5140);  // c0 d0 c1 d1
      const std::uint32_t cd23 = byte_perm(c, d, 0x7362);  // c2 d2 c3 d3
      u[4 * w] = byte_perm(ab01, cd01, 0x5410);            // a0 b0 c0 d0
      u[4 * w + 1] = byte_perm(ab01, cd01, 0x7632);        // a1 b1 c1 d1
      u[4 * w + 2] = byte_perm(ab23, cd23, 0x5410);        // a2 b2 c2 d2
      u[4 * w + 3] = byte_perm(ab23, cd23, 0x7632);        // a3 b3 c3 d3
    }
  }
};

template <>
struct Pack<2> {  // float16, bfloat16: 2 x 2 blocks of halves, one round of prmt
  static constexpr int kRows = 2;
  using Unit = std::uint32_t;
  __host__ __device__ static void to_units(const Vec16 (&v)[2], Unit (&u)[8]) {
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      u[2 * w] = byte_perm(v[0].w[w], v[1].w[w], 0x5410);      // a_lo b_lo
      u[2 * w + 1] = byte_perm(v[0].w[w], v[1].w[w], 0x7632);  // a_hi b_hi
    }
  }
};

}  // namespace step08
