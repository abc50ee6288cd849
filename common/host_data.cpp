#include "host_data.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "errors.hpp"

namespace course {

std::unique_ptr<std::uint8_t[]> host_bytes(std::size_t n) {
  std::unique_ptr<std::uint8_t[]> p(new (std::nothrow) std::uint8_t[n ? n : 1]);
  if (!p) throw UsageError("not enough host memory: " + std::to_string(n >> 20) + " MiB needed");
  return p;
}

std::uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& fn) {
  const std::int64_t min_chunk = 1 << 16;
  std::int64_t workers = std::max<std::int64_t>(1, std::thread::hardware_concurrency());
  workers = std::min(workers, (n + min_chunk - 1) / min_chunk);
  if (workers <= 1) {
    if (n > 0) fn(0, n);
    return;
  }
  std::vector<std::thread> threads;
  const std::int64_t chunk = (n + workers - 1) / workers;
  for (std::int64_t begin = 0; begin < n; begin += chunk) {
    threads.emplace_back(fn, begin, std::min(n, begin + chunk));
  }
  for (std::thread& t : threads) t.join();
}

namespace {

// A bijection on the integers modulo 2^k (k <= 64): multiplying by an odd number and xor-ing in
// a right shift are both invertible, so distinct inputs give distinct outputs.
std::uint64_t mix_bits(std::uint64_t x, int k) {
  const std::uint64_t mask = k == 64 ? ~0ull : (1ull << k) - 1;
  const int shift = (k + 1) / 2;
  x &= mask;
  x = (x * 0x9E3779B97F4A7C15ull) & mask;
  x ^= x >> shift;
  x = (x * 0xBF58476D1CE4E5B9ull) & mask;
  x ^= x >> shift;
  return x;
}

// An n-bit pattern (n = 8, 16, 32 or 64) with bit n-2 cleared: mix n-1 bits, then move the top
// one of them up to bit n-1. 1- and 2-byte elements have too few values to differ, so theirs are
// the low bits of a mix of the whole index: with only the index's low 7 or 15 bits mixed, the
// pattern would repeat every 128 or 32768 elements, and a kernel that mixed up elements that far
// apart would pass.
std::uint64_t pattern_bits(std::uint64_t index, std::uint64_t seed, int n) {
  const int k = n - 1;
  const std::uint64_t v = mix_bits(index + seed, n <= 16 ? 63 : k);
  const std::uint64_t low = v & ((1ull << (k - 1)) - 1);
  const std::uint64_t top = (v >> (k - 1)) & 1;
  return low | (top << k);
}

template <std::size_t S>
struct Elem {
  std::uint8_t b[S];
};

template <std::size_t S>
void transpose_blocked(const Problem& p, const std::uint8_t* in_bytes, std::uint8_t* out_bytes) {
  const auto* in = reinterpret_cast<const Elem<S>*>(in_bytes);
  auto* out = reinterpret_cast<Elem<S>*>(out_bytes);
  const std::int64_t R = p.rows, C = p.cols, B = 64;
  const std::int64_t row_blocks = (R + B - 1) / B;
  parallel_for(p.batch * row_blocks, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t job = begin; job < end; ++job) {
      const std::int64_t m = job / row_blocks;
      const std::int64_t r0 = (job % row_blocks) * B;
      const Elem<S>* src = in + m * R * C;
      Elem<S>* dst = out + m * R * C;
      for (std::int64_t c0 = 0; c0 < C; c0 += B) {
        const std::int64_t r1 = std::min(R, r0 + B), c1 = std::min(C, c0 + B);
        for (std::int64_t r = r0; r < r1; ++r)
          for (std::int64_t c = c0; c < c1; ++c) dst[c * R + r] = src[r * C + c];
      }
    }
  });
}

}  // namespace

void pattern_element(ElemType type, std::int64_t index, std::uint64_t seed, std::uint8_t* dst) {
  const std::size_t size = elem_size(type);
  const auto i = static_cast<std::uint64_t>(index);
  if (size == 16) {  // two 64-bit halves from indices 2i and 2i+1
    const std::uint64_t lo = pattern_bits(2 * i, seed, 64);
    const std::uint64_t hi = pattern_bits(2 * i + 1, seed, 64);
    std::memcpy(dst, &lo, 8);
    std::memcpy(dst + 8, &hi, 8);
  } else {
    const std::uint64_t v = pattern_bits(i, seed, static_cast<int>(8 * size));
    std::memcpy(dst, &v, size);  // little-endian: the low bytes of v
  }
}

void fill_pattern(ElemType type, std::uint8_t* dst, std::int64_t count, std::uint64_t seed,
                  std::int64_t first) {
  const std::size_t size = elem_size(type);
  parallel_for(count, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      pattern_element(type, first + i, seed, dst + static_cast<std::size_t>(i) * size);
    }
  });
}

bool is_nan_bits(ElemType type, const std::uint8_t* bits) {
  switch (type) {
    case ElemType::f32: {
      std::uint32_t v;
      std::memcpy(&v, bits, 4);
      return (v & 0x7F800000u) == 0x7F800000u && (v & 0x007FFFFFu) != 0;
    }
    case ElemType::f64: {
      std::uint64_t v;
      std::memcpy(&v, bits, 8);
      return (v & 0x7FF0000000000000ull) == 0x7FF0000000000000ull &&
             (v & 0x000FFFFFFFFFFFFFull) != 0;
    }
    case ElemType::f16: {
      std::uint16_t v;
      std::memcpy(&v, bits, 2);
      return (v & 0x7C00u) == 0x7C00u && (v & 0x03FFu) != 0;
    }
    case ElemType::bf16: {
      std::uint16_t v;
      std::memcpy(&v, bits, 2);
      return (v & 0x7F80u) == 0x7F80u && (v & 0x007Fu) != 0;
    }
    default:
      return false;
  }
}

std::string hex_bits(ElemType type, const std::uint8_t* bits) {
  std::ostringstream s;
  s << "0x" << std::hex;
  for (std::size_t i = elem_size(type); i-- > 0;) {
    s << "0123456789abcdef"[bits[i] >> 4] << "0123456789abcdef"[bits[i] & 15];
  }
  return s.str();
}

void cpu_transpose(const Problem& p, const std::uint8_t* in, std::uint8_t* out) {
  switch (elem_size(p.type)) {
    case 1: return transpose_blocked<1>(p, in, out);
    case 2: return transpose_blocked<2>(p, in, out);
    case 4: return transpose_blocked<4>(p, in, out);
    case 8: return transpose_blocked<8>(p, in, out);
    default: return transpose_blocked<16>(p, in, out);
  }
}

VerifyResult verify_transpose(const Problem& p, const std::uint8_t* expected,
                              const std::uint8_t* got) {
  const std::size_t size = elem_size(p.type);
  const bool check_nan = elem_is_float(p.type);
  // Each worker scans its range and records the first bad element it sees; the smallest wins.
  std::atomic<std::int64_t> first_bad{p.elements()};
  parallel_for(p.elements(), [&](std::int64_t begin, std::int64_t end) {
    const std::size_t off = static_cast<std::size_t>(begin) * size;
    const std::size_t len = static_cast<std::size_t>(end - begin) * size;
    if (!check_nan && std::memcmp(expected + off, got + off, len) == 0) return;
    for (std::int64_t i = begin; i < end && i < first_bad.load(); ++i) {
      const std::uint8_t* g = got + static_cast<std::size_t>(i) * size;
      if (std::memcmp(expected + static_cast<std::size_t>(i) * size, g, size) != 0 ||
          (check_nan && is_nan_bits(p.type, g))) {
        std::int64_t cur = first_bad.load();
        while (i < cur && !first_bad.compare_exchange_weak(cur, i)) {
        }
        return;
      }
    }
  });
  VerifyResult r;
  const std::int64_t i = first_bad.load();
  if (i == p.elements()) return r;

  // Output coordinates: matrix m holds cols x rows, so an output row is an input column.
  const std::int64_t out_rows = p.cols, out_cols = p.rows, m = i / (out_rows * out_cols);
  const std::size_t at = static_cast<std::size_t>(i) * size;
  r.ok = false;
  r.message = "mismatch at " + (p.batch > 1 ? "matrix " + std::to_string(m) + ", " : std::string()) +
              mismatch_at(p.type, (i % (out_rows * out_cols)) / out_cols, i % out_cols, out_rows,
                          out_cols, expected + at, got + at);
  return r;
}

std::string mismatch_at(ElemType type, std::int64_t row, std::int64_t col, std::int64_t out_rows,
                        std::int64_t out_cols, const std::uint8_t* expected, const std::uint8_t* got) {
  bool poisoned = true;
  for (std::size_t b = 0; b < elem_size(type); ++b) poisoned = poisoned && got[b] == kPoisonByte;
  std::ostringstream s;
  s << "(row " << row << ", col " << col << ") of the " << out_rows << " x " << out_cols
    << " output: expected " << hex_bits(type, expected) << ", got " << hex_bits(type, got);
  if (poisoned) {
    s << " (never written: still the poison)";
  } else if (is_nan_bits(type, got)) {
    s << " (a NaN)";
  }
  return s.str();
}

}  // namespace course
