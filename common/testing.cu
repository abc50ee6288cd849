#include "testing.cuh"

#include <cctype>
#include <vector>

#include "check.cuh"
#include "device_buffer.cuh"
#include "host_data.hpp"

namespace course {

namespace {
// Guard bands: whole multiples of 256 bytes, so the matrix keeps cudaMalloc's alignment
// (unless the caller shifts it on purpose).
constexpr std::size_t kGuard = 4096;
}  // namespace

::testing::AssertionResult check_transpose(const Variant& v, const Problem& p, bool may_refuse,
                                           std::size_t shift) {
  const std::uint64_t seed = fresh_seed();
  const std::size_t n = p.bytes(), begin = kGuard + shift;  // the output starts at got[begin]
  std::vector<std::uint8_t> in(n), ref(n), got(begin + n + kGuard);
  fill_pattern(p.type, in.data(), p.elements(), seed);
  cpu_transpose(p, in.data(), ref.data());

  DeviceBuffer d_in(n + shift), d_out(got.size());
  std::uint8_t* src = d_in.as<std::uint8_t>() + shift;
  CUDA_CHECK(cudaMemcpy(src, in.data(), n, cudaMemcpyHostToDevice));
  const std::string where = v.name + " on " + p.describe() + " (seed " + std::to_string(seed) + ")";
  const cudaError_t status = run_poisoned(v, p, src, d_out.get(), d_out.bytes(), begin);
  if (status != cudaSuccess) {
    if (may_refuse) return ::testing::AssertionSuccess() << where << ": refused";
    return ::testing::AssertionFailure()
           << where << ": the launcher refused the shape (" << cudaGetErrorString(status) << ")";
  }
  CUDA_CHECK(cudaMemcpy(got.data(), d_out.get(), got.size(), cudaMemcpyDeviceToHost));

  for (std::size_t i = 0; i < begin; ++i) {
    if (got[i] != kPoisonByte) {
      return ::testing::AssertionFailure()
             << where << ": wrote " << begin - i << " bytes before the start of the output";
    }
  }
  for (std::size_t i = 0; i < kGuard; ++i) {
    if (got[begin + n + i] != kPoisonByte) {
      // Report the last byte written past the end, so the size of the overrun is visible.
      std::size_t last = i;
      for (std::size_t j = i; j < kGuard; ++j)
        if (got[begin + n + j] != kPoisonByte) last = j;
      return ::testing::AssertionFailure()
             << where << ": wrote past the end of the output (up to byte " << last + 1
             << " after it)";
    }
  }
  const VerifyResult r = verify_transpose(p, ref.data(), got.data() + begin);
  if (!r.ok) return ::testing::AssertionFailure() << where << ": " << r.message;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_awkward_shapes(const Variant& v, ElemType type,
                                                std::int64_t batch) {
  for (const Shape& s : awkward_shapes()) {
    const Problem p{type, s.rows, s.cols, batch};
    ::testing::AssertionResult r = check_transpose(v, p);
    if (!r) return r;
  }
  return ::testing::AssertionSuccess();
}

std::string variant_test_name(const ::testing::TestParamInfo<Variant>& info) {
  std::string name = info.param.name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

}  // namespace course
