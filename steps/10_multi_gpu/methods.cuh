// The methods of step 10 as the harness sees them: the pipeline of multi_transpose.cuh (any
// machines) and the direct placement of direct.cuh (one machine), their streams made once per
// run, after NCCL's all-to-all on symmetric windows (reference rows, beside the harness's plain
// one). The plain order, the peer writes and the other movers are in lab/. With an NCCL older
// than 2.28 (no windows) the pipeline runs alone.
#pragma once

#include <string>
#include <vector>

#include "multi_harness.hpp"
#include "multi_transpose.cuh"
#include "nccl_buffer.cuh"  // STEP10_HAVE_WINDOWS
#if STEP10_HAVE_WINDOWS
#include "direct.cuh"
#include "symmetric_a2a.cuh"
#endif

namespace step10 {

/// What the pipeline sends with: the team's communicator and the harness's staging buffers. The
/// lab's variants give it others in their place (lab_variants.cuh: a communicator held to a few
/// SMs, buffers registered with NCCL).
struct TeamLinks {
  explicit TeamLinks(const Context&) {}
  ncclComm_t comm(const Context& c) const { return c.comm; }
  Part part(const Context& c) const { return c.part(); }
};

/// The pipeline's streams and events, made once per run, and what it sends with.
template <typename Links>
struct Overlapped : Runs {
  Links links;
  Pipeline pipe;
  explicit Overlapped(const Context& c) : links(c), pipe(c.at.chunks) {}
};

template <typename Links = TeamLinks>
inline Method overlapped(const std::string& id = "overlapped", const std::string& name = "overlapped") {
  Method m;
  m.id = id;
  m.name = name;
  m.chunked = true;
  return with_state<Overlapped<Links>>(m, [](Overlapped<Links>& st, const Context& c, cudaStream_t s) {
    st.pipe.run(st.links.part(c), st.links.comm(c), s);
  });
}

inline std::vector<Method> methods() {
#if STEP10_HAVE_WINDOWS
  return {a2a_symmetric(false), a2a_symmetric(true), overlapped(), direct()};
#else
  return {overlapped()};
#endif
}

}  // namespace step10
