// DeepSpeed-MoE (Megatron-DeepSpeed) without token dropping pads every
// expert to the busiest expert's count (deepspeed/moe/sharded_moe.py,
// drop_tokens False: capacity = max(exp_counts), all-reduced with MAX):
// every rank runs its experts at that count, whatever ep is. Megatron-LM's
// dropless dispatcher runs each rank's own rows, so its busiest rank sums
// its E/ep experts' loads (cost/moe.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "cost/moe.h"
#include "cost/step_cost.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

JobSpec mds_job() {
  JobSpec job;
  job.gpus = 64;
  job.gbs = 256;
  job.seq = 4096;
  apply_engine_recipe("megatron-deepspeed", job);
  return job;
}

// Mixtral routes with an auxiliary loss: the busiest expert carries
// kAuxLossMaxVio over the mean (Fedus et al. 2022), a rank of E/ep experts
// that over sqrt(E/ep).
TEST(MoeDeepSpeedPadding, EveryExpertRunsTheBusiestExpertsCount) {
  const ModelSpec m = load_model("mixtral-8x7b");
  ASSERT_EQ(m.experts, 8);
  JobSpec ds = mds_job();
  ASSERT_TRUE(ds.moe_pads_to_busiest_expert);
  JobSpec megatron = ds;
  megatron.moe_pads_to_busiest_expert = false;
  for (int ep : {1, 2, 4, 8}) {
    ParallelConfig c;
    c.ep = ep;
    EXPECT_DOUBLE_EQ(moe_load_factor(m, ds, c), 1.0 + kAuxLossMaxVio) << "ep " << ep;
    const double rank = ep == 1 ? 1.0 : 1.0 + kAuxLossMaxVio / std::sqrt(8.0 / ep);
    EXPECT_DOUBLE_EQ(moe_load_factor(m, megatron, c), rank) << "ep " << ep;
  }
  // A capacity factor is the gate's capacity, as before.
  ds.capacity_factor = 1.1;
  ds.pad_to_capacity = true;
  ParallelConfig c;
  c.ep = 2;
  EXPECT_DOUBLE_EQ(moe_load_factor(m, ds, c), 1.1);
}

// Padding to the busiest expert never shortens a step.
TEST(MoeDeepSpeedPadding, NeverFasterThanRunningEachRanksOwnRows) {
  const ModelSpec model = load_model("mixtral-8x7b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  int compared = 0;
  for (int ep : {1, 2, 4, 8}) {
    for (int tp : {1, 2}) {
      JobSpec ds = mds_job();
      ParallelConfig c;
      c.tp = tp, c.pp = 2, c.ep = ep, c.etp = 1, c.sp = tp > 1, c.mbs = 1, c.zero = 1;
      c.dp = ds.gpus / (tp * c.pp);
      c.gbs = ds.gbs;
      c.recompute = Recompute::kFull;
      if (config_problem(model, ds, c) != nullptr) continue;
      JobSpec own_rows = ds;
      own_rows.moe_pads_to_busiest_expert = false;
      EXPECT_GE(estimate_cost(model, cluster, ds, c).time.step_s,
                estimate_cost(model, cluster, own_rows, c).time.step_s)
          << "ep " << ep << " tp " << tp;
      ++compared;
    }
  }
  EXPECT_GT(compared, 4);
}

}  // namespace
}  // namespace parplan
