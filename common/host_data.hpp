/// @file host_data.hpp
/// @brief Host-side data for checking a transpose: bit patterns, poison, CPU reference, verifier.
///
/// None of this needs a GPU, so all of it is tested on any machine.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "problem.hpp"

namespace course {

/// Every byte of an output is set to this before a kernel runs. For the float types the all-ones
/// pattern is a NaN, and fill_pattern never produces it, so an unwritten element always fails.
constexpr std::uint8_t kPoisonByte = 0xFF;

/// @p n bytes of host memory (at least one); throws UsageError ("not enough host memory: ...")
/// where there are not so many.
std::unique_ptr<std::uint8_t[]> host_bytes(std::size_t n);

/// A fresh random seed (from std::random_device), so every run checks new inputs.
std::uint64_t fresh_seed();

/// Writes `count` elements of @p type to @p dst: element i gets a pseudo-random pattern that is a
/// bijection of (i + seed), so no two elements share a pattern within 2^31 elements for 4-byte
/// types (2^63 for 8- and 16-byte types; 2- and 1-byte types have only 2^15 and 2^7 values, and
/// theirs come from the whole index, so they do not repeat with a period).
/// The second-highest bit of each element is always 0: for f16, bf16, f32 and f64 that is the
/// top exponent bit, so no pattern is a NaN or an infinity, and none equals the poison.
/// With @p first, dst[i] is element first + i's: a part of a larger matrix (step 10's rows).
void fill_pattern(ElemType type, std::uint8_t* dst, std::int64_t count, std::uint64_t seed,
                  std::int64_t first = 0);

/// Writes to @p dst the pattern that fill_pattern gives element @p index (one element of
/// @p type), so that a part of a matrix can be made or checked without the whole: each GPU of
/// step 10 fills its own rows and checks its own block of the transpose.
void pattern_element(ElemType type, std::int64_t index, std::uint64_t seed, std::uint8_t* dst);

/// True when the element at @p bits is a NaN of @p type (always false for integer types).
bool is_nan_bits(ElemType type, const std::uint8_t* bits);

/// The CPU reference: transposes each of p.batch matrices of p.rows x p.cols (row-major, back to
/// back) into p.cols x p.rows, moving whole elements as bytes. Multithreaded and cache-blocked
/// so it keeps up with a 32768 x 32768 check.
void cpu_transpose(const Problem& p, const std::uint8_t* in, std::uint8_t* out);

/// The outcome of a bitwise comparison.
struct VerifyResult {
  bool ok = true;       ///< every element matched, bit for bit (and no NaN)
  std::string message;  ///< empty when ok; else the first mismatch, with (row, col, expected, got)
};

/// Compares @p got with @p expected, both holding the transposed output (p.batch matrices of
/// p.cols x p.rows), bit for bit. A NaN in @p got fails even where @p expected holds the same
/// bits. The message names the first mismatch in output coordinates: matrix, row, col, the
/// expected and the received bits, and says so when the element still holds the poison.
VerifyResult verify_transpose(const Problem& p, const std::uint8_t* expected,
                              const std::uint8_t* got);

/// The words every verifier gives its first mismatch: "(row R, col C) of the OUT_ROWS x OUT_COLS
/// output: expected 0x.., got 0x..", and whether @p got still holds the poison or is a NaN.
std::string mismatch_at(ElemType type, std::int64_t row, std::int64_t col, std::int64_t out_rows,
                        std::int64_t out_cols, const std::uint8_t* expected, const std::uint8_t* got);

/// Runs fn(begin, end) over [0, n) split across the host's cores.
void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& fn);

/// The bits of one element as hexadecimal, most significant byte first ("0x3f800000").
std::string hex_bits(ElemType type, const std::uint8_t* bits);

}  // namespace course
