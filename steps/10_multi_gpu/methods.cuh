// The method of step 10 as the harness sees it: the pipeline of multi_transpose.cuh, its
// streams made once per run. The plain order and the direct writes into the other GPUs'
// memory are in lab/.
#pragma once

#include <memory>
#include <vector>

#include "multi_harness.hpp"
#include "multi_transpose.cuh"

namespace step10 {

inline Method overlapped() {
  auto pipe = std::make_shared<std::unique_ptr<Pipeline>>();
  Method m;
  m.id = "overlapped";
  m.name = "overlapped";
  m.chunked = true;
  m.prepare = [pipe](const Context& c) {
    *pipe = std::make_unique<Pipeline>(c.at.chunks);
    return std::string();
  };
  m.run = [pipe](const Context& c, cudaStream_t s) { (*pipe)->run(c.part(), c.comm, s); };
  m.release = [pipe] { pipe->reset(); };
  return m;
}

inline std::vector<Method> methods() { return {overlapped()}; }

}  // namespace step10
