// The cost-model tests' common subject: Llama 3 8B on one DGX H100 node,
// with the job and the parallel config each test sets in its constructor.
#pragma once

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan::test {

struct Llama3_8bOnH100 {
  ModelSpec model = load_model("llama3-8b");
  ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job;
  ParallelConfig config;
};

/// The same model under ZeRO-3 over the node's 8 ranks: 32 sequences of 8K
/// tokens, two micro-batches of two per rank.
struct Llama3_8bZero3OnOneNode : Llama3_8bOnH100 {
  Llama3_8bZero3OnOneNode() {
    job.gpus = 8, job.gbs = 32, job.seq = 8192;
    config.tp = 1, config.pp = 1, config.dp = 8, config.mbs = 2, config.gbs = 32, config.zero = 3;
  }
};

}  // namespace parplan::test
