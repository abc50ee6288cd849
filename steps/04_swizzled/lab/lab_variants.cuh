// The kernels of step 04's lab: step 03's padded tile as the control, the lesson's swizzle, and
// the swizzle with its row reduced by `& 31` and by a signed `% 32`.
#pragma once

#include <string>
#include <vector>

#include "harness.cuh"
#include "swizzle_forms.cuh"

namespace step04_lab {

template <Form F>
course::Variant form(const std::string& id, const std::string& name, const std::string& tile) {
  return {id, name, "32x32", tile,
          [](const course::Problem& p, const void* in, void* out, cudaStream_t s) {
            return transpose<F>(static_cast<const float*>(in), static_cast<float*>(out), p.rows,
                                p.cols, s);
          }};
}

inline std::vector<course::Variant> variants() {
  return {form<Form::padded>("padded", "padded 32x33 (step 03)", "32x33"),
          form<Form::xor_row>("xor-row", "swizzle, no mask (lesson)", "32x32"),
          form<Form::and_31>("and-31", "swizzle, mask row&31", "32x32"),
          form<Form::mod_32>("mod-32", "swizzle, signed row%32", "32x32")};
}

}  // namespace step04_lab
