// The methods of step 10 as the harness sees them: the pipeline of multi_transpose.cuh (any
// machines) and the direct placement of direct.cuh (one machine), their streams made once per
// run, after NCCL's all-to-all on symmetric windows (reference rows, beside the harness's plain
// one). The plain order, the peer writes and the other movers are in lab/. With an NCCL older
// than 2.28 (no windows) the pipeline runs alone.
#pragma once

#include <memory>
#include <vector>

#include "multi_harness.hpp"
#include "multi_transpose.cuh"
#include "nccl_buffer.cuh"  // STEP10_HAVE_WINDOWS
#if STEP10_HAVE_WINDOWS
#include "direct.cuh"
#include "symmetric_a2a.cuh"
#endif

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

inline std::vector<Method> methods() {
#if STEP10_HAVE_WINDOWS
  return {a2a_symmetric(false), a2a_symmetric(true), overlapped(), direct()};
#else
  return {overlapped()};
#endif
}

}  // namespace step10
