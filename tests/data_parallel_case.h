// A job spread over data parallelism alone (tp = pp = 1, dp = every GPU),
// the setup several cost tests share.
#pragma once

#include "cost/spec/job_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan::test {

struct DataParallelCase {
  JobSpec job;
  ParallelConfig config;
};

/// `gpus` data-parallel ranks, `gbs` sequences of `seq` tokens per step,
/// `mbs` per micro-batch, ZeRO stage `zero`.
inline DataParallelCase data_parallel_case(int gpus, int gbs, int seq, int mbs, int zero) {
  DataParallelCase out;
  out.job.gpus = gpus, out.job.gbs = gbs, out.job.seq = seq;
  out.config.tp = 1, out.config.pp = 1, out.config.dp = gpus;
  out.config.mbs = mbs, out.config.gbs = gbs, out.config.zero = zero;
  return out;
}

}  // namespace parplan::test
