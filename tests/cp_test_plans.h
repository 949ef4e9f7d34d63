// A context-parallel plan whose cp ring crosses a slow fabric, shared by the
// tests of the engines' context-parallel exchanges.
#pragma once

#include <gtest/gtest.h>

#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan::cp_test {

struct CpPlan {
  ModelSpec model;
  ClusterSpec cluster;
  JobSpec job;
  ParallelConfig config;
};

/// Llama 3 8B at 64K tokens on 64 GPUs of holmes-ethernet: tp 8 fills each
/// node, so the cp 8 ring crosses the Ethernet.
inline CpPlan llama3_8b_cp8_over_ethernet() {
  CpPlan p{load_model("llama3-8b"), load_cluster("holmes-ethernet"), {}, {}};
  p.job.gpus = 64, p.job.gbs = 8, p.job.seq = 65536;
  ParallelConfig& c = p.config;
  c.tp = 8, c.pp = 1, c.cp = 8, c.dp = 1, c.mbs = 1, c.gbs = 8, c.zero = 1;
  EXPECT_EQ(config_problem(p.model, p.job, c), nullptr);
  return p;
}

}  // namespace parplan::cp_test
