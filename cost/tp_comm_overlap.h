// Whether a config's tensor-parallel traffic runs under Megatron-LM's
// --tp-comm-overlap: the cost model and the Megatron emitter ask the same
// question, so a plan is emitted as it was costed.
#pragma once

#include "cost/spec/job_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

/// Asked for, tp > 1 and sequence parallelism (which it requires:
/// megatron/training/arguments.py:855-856 at core_r0.13.0).
inline bool tp_comm_overlapped(const JobSpec& job, const ParallelConfig& c) {
  return job.tp_comm_overlap && c.tp > 1 && c.sp;
}

}  // namespace parplan
