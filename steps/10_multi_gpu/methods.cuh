// The methods of step 10 as the harness sees them: the pipeline of multi_transpose.cuh (any
// machines) and the direct placement of direct.cuh (one machine), their streams made once per
// run, and the peer writes of peer.cuh (one machine), after NCCL's all-to-all on symmetric
// windows (reference rows, beside the harness's plain one). The plain order and the other movers
// are in lab/. With an NCCL older than 2.28 (no windows) the pipeline runs alone.
#pragma once

#include <string>
#include <vector>

#include "multi_harness.hpp"
#include "multi_transpose.cuh"
#include "nccl_buffer.cuh"  // STEP10_HAVE_WINDOWS
#if STEP10_HAVE_WINDOWS
#include "direct.cuh"
#include "peer.cuh"
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

#if STEP10_HAVE_WINDOWS
/// The peer writes as the harness sees them: a barrier, one kernel, a barrier.
inline Method peer_writes(
    ToOwners launch = launch_to_owners<false>, const std::string& id = "peer",
    const std::string& name = "peer writes: one kernel writes into every GPU's output") {
  Method m;
  m.id = id;
  m.name = name;
  return with_state<Window>(m, [launch](Window& window, const Context& c, cudaStream_t s) {
    const std::int64_t rows = c.at.row_blocks().count(c.me), first = c.at.row_blocks().first(c.me);
    c.barrier(s);  // entry: every GPU's output is free to write into
    if (rows > 0) {
      CUDA_CHECK(launch(c.at.elem, c.in, rows, c.at.cols, first, c.at.rows, c.at.gpus,
                        window.table(), s));
    }
    c.barrier(s);  // exit: every GPU's writes into this output are done
  });
}

#endif

inline std::vector<Method> methods() {
#if STEP10_HAVE_WINDOWS
  return {a2a_symmetric(false), a2a_symmetric(true), overlapped(), direct(), peer_writes()};
#else
  return {overlapped()};
#endif
}

}  // namespace step10
