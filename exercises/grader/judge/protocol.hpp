/// @file protocol.hpp
/// @brief What the grader's worker and judge share: the plan a worker runs, the records it
/// writes, the value codec of the CPU checks and the masks of the timed run (host and device).
///
/// The worker runs the submission's code and writes only data: output matrices, return codes,
/// the values the submission's functions answered. The judge, built from the course alone and
/// run after every process of the submission is gone, reads that data and decides. Nothing here
/// is a verdict the worker could write for itself.
///
/// Plan (text, one item per line after the first line "plan 1"):
///   transpose ROWS COLS SEED     out of place, output between guard bands of poison
///   inplace N SEED               in place, the matrix between guard bands of poison
///   check NAME                   a CPU check: the values the functions answer, in call order
///   swizzle                      ex02::swizzle over the 32 x 32 tile, on the host and the device
///   speed ROWS COLS SEED REPS    REPS chained calls, a fresh mask after each (see mask_of)
///   devices                      how many CUDA devices the worker sees
/// Records (binary, on the data channel): a header line "@ITEM TAG BYTES\n", then BYTES bytes.
/// Tags: region (bytes), status (text "CODE NAME"), cuda (text: a CUDA error that ended the
/// run), error (text), values (codec below), swizzle_host / swizzle_device (32 x 32 int32),
/// timing (text "key=value ..."), devices (text), nodev (text), done (empty: the item is
/// complete).
#pragma once

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#ifdef __CUDACC__
#define GRADER_HD __host__ __device__
#else
#define GRADER_HD
#endif

namespace grader {

/// Guard bands around an output (bytes each side), filled with the poison byte like the course's
/// tests: a write just outside the matrix changes them.
constexpr std::size_t kGuard = 4096;
constexpr unsigned char kPoison = 0xFF;

/// The CUDA runtime's codes the judge names without including CUDA (driver_types.h).
constexpr int kCudaSuccess = 0;
constexpr int kCudaErrorInvalidValue = 1;
constexpr int kCudaErrorNotYetImplemented = 31;

/// The largest record the judge accepts (a 16384 x 16384 float matrix is 1 GiB).
constexpr std::uint64_t kMaxRecordBytes = std::uint64_t{3} << 30;

/// One item of a plan, as the worker and the judge read it.
struct Item {
  std::string kind;  // transpose, inplace, check, swizzle, speed, devices
  std::int64_t rows = 0, cols = 0, reps = 0;
  std::uint64_t seed = 0;
  std::string name;  // of a check
  std::string line;
};

/// Reads one line of a plan into @p it; false for an unknown kind.
inline bool parse_item(const std::string& line, Item* it) {
  std::istringstream in(line);
  it->line = line;
  in >> it->kind;
  if (it->kind == "transpose") {
    in >> it->rows >> it->cols >> it->seed;
  } else if (it->kind == "inplace") {
    in >> it->rows >> it->seed;
    it->cols = it->rows;
  } else if (it->kind == "check") {
    in >> it->name;
  } else if (it->kind == "speed") {
    in >> it->rows >> it->cols >> it->seed >> it->reps;
  } else {
    return it->kind == "swizzle" || it->kind == "devices";
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The timed run: after call k the worker XORs every 32-bit word of the output with a mask that
// depends on a key the grader sends only when the clock starts, on k and on the word's position.
// So no call can be skipped or replayed, and the final matrix cannot be worked out ahead: each
// of the REPS transposes must really happen, on whatever does them. The masks touch only the
// low 20 bits (mantissa), so no pattern becomes a NaN. The judge checks sampled elements by
// following each one back through the calls.

GRADER_HD inline std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/// Rounds of mixing per mask: free for a GPU (the kernel is bound by memory), a real cost for a
/// CPU that would compute every mask of every call.
constexpr int kMaskRounds = 12;

/// The key of call @p step, from the run's key.
GRADER_HD inline std::uint32_t step_key(std::uint64_t key, std::uint32_t step) {
  return mix32(static_cast<std::uint32_t>(key) ^ mix32(static_cast<std::uint32_t>(key >> 32) +
                                                       0x9e3779b9u * (step + 1)));
}

/// The mask of the word at @p pos after a call whose key is @p k.
GRADER_HD inline std::uint32_t mask_of(std::uint32_t k, std::uint64_t pos) {
  std::uint32_t h = k ^ mix32(static_cast<std::uint32_t>(pos) + 0x632be5abu);
  h ^= static_cast<std::uint32_t>(pos >> 32);
  for (int r = 0; r < kMaskRounds; ++r) h = mix32(h + 0x85ebca6bu * static_cast<std::uint32_t>(r));
  return h & 0x000FFFFFu;
}

// ---------------------------------------------------------------------------------------------
// The CPU checks' values: each int64 the submission's functions answered, in call order, as the
// zigzag varint of its difference from the previous one (consecutive indices cost one byte).

inline void put_value(std::string& out, std::int64_t v, std::int64_t& prev) {
  const std::uint64_t d = static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(prev);
  std::uint64_t z = (d << 1) ^ (0 - (d >> 63));
  prev = v;
  while (z >= 0x80) {
    out.push_back(static_cast<char>((z & 0x7F) | 0x80));
    z >>= 7;
  }
  out.push_back(static_cast<char>(z));
}

/// Reads one value at @p pos of @p data (advancing pos); false at the end or on bad bytes.
inline bool get_value(const std::string& data, std::size_t& pos, std::int64_t& v,
                      std::int64_t& prev) {
  std::uint64_t z = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= data.size()) return false;
    const auto b = static_cast<unsigned char>(data[pos++]);
    z |= static_cast<std::uint64_t>(b & 0x7F) << shift;
    if (!(b & 0x80)) {
      const std::uint64_t d = (z >> 1) ^ (0 - (z & 1));
      prev = static_cast<std::int64_t>(static_cast<std::uint64_t>(prev) + d);
      v = prev;
      return true;
    }
  }
  return false;
}

}  // namespace grader
