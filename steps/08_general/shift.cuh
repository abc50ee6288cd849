// Step 08, part 3 - rows that start anywhere: 16 bytes that start m bytes past a 16-byte boundary,
// cut out of the two aligned vectors that hold them; host code too, so the CPU tests check it.
//   make step08 && ./step08 --type i8 --rows 4095 --cols 4097
#pragma once

#include <cstdint>

#include "pack.cuh"

namespace step08 {

/// __funnelshift_r: the low word of hi:lo shifted right by s bits (0 <= s < 32).
__host__ __device__ inline std::uint32_t funnel_r(std::uint32_t lo, std::uint32_t hi, unsigned s) {
#ifdef __CUDA_ARCH__
  return __funnelshift_r(lo, hi, s);
#else
  return s == 0 ? lo : (lo >> s) | (hi << (32 - s));
#endif
}

/// The 16 bytes that start m bytes into lo (0 <= m < 16) and run on into hi. A run-time m
/// cannot index registers, so: two selects (8 bytes, then 4), then a funnel shift (0-3 bytes).
__host__ __device__ inline Vec16 shift_bytes(const Vec16& lo, const Vec16& hi, unsigned m) {
  const std::uint32_t x[8] = {lo.w[0], lo.w[1], lo.w[2], lo.w[3],
                              hi.w[0], hi.w[1], hi.w[2], hi.w[3]};
  std::uint32_t y[6], z[5];
#pragma unroll
  for (int i = 0; i < 6; ++i) y[i] = (m & 8) ? x[i + 2] : x[i];
#pragma unroll
  for (int i = 0; i < 5; ++i) z[i] = (m & 4) ? y[i + 1] : y[i];
  Vec16 r;
#pragma unroll
  for (int i = 0; i < 4; ++i) r.w[i] = funnel_r(z[i], z[i + 1], 8 * (m & 3));
  return r;
}

/// 16 bytes at @p p (on 16 bytes); only those inside [begin, end) are read, the rest are 0.
__host__ __device__ inline Vec16 load16_within(const std::uint8_t* p, const std::uint8_t* begin,
                                               const std::uint8_t* end) {
  if (p >= begin && p + 16 <= end) return load16(p);
  Vec16 v{};
#pragma unroll
  for (int b = 0; b < 16; ++b) {
    if (p + b >= begin && p + b < end) v.w[b / 4] |= std::uint32_t{p[b]} << (8 * (b % 4));
  }
  return v;
}

}  // namespace step08
