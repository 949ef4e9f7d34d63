// Megatron's --overlap-p2p-communication: only the interleaved schedule hides
// its sends and receives behind the next chunk's compute.
#include <gtest/gtest.h>

#include "cost/overlap.h"
#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/cp_test_plans.h"

namespace parplan {
namespace {

CostReport cost_of(const ClusterSpec& cluster, int vp, bool overlap_p2p) {
  const ModelSpec model = load_model("gpt-7.5b");
  JobSpec job;
  job.gpus = 64, job.gbs = 256, job.seq = 2048;
  ParallelConfig c;
  c.tp = 1, c.pp = 4, c.vp = vp, c.dp = 16, c.mbs = 1, c.gbs = 256, c.zero = 1;
  c.overlap_p2p = overlap_p2p;
  EXPECT_EQ(config_problem(model, job, c), nullptr);
  return estimate_cost(model, cluster, job, c);
}

TEST(PipelineOverlap, HidesPointToPointOnlyWithInterleaving) {
  const ClusterSpec ethernet = load_cluster("holmes-ethernet");
  // 1F1B: the flag changes nothing.
  EXPECT_DOUBLE_EQ(cost_of(ethernet, 1, true).time.pp_comm_s, cost_of(ethernet, 1, false).time.pp_comm_s);
  // Interleaved: exposed traffic shrinks but never below zero, and compute
  // itself does not change.
  const CostReport hidden = cost_of(ethernet, 3, true);
  const CostReport exposed = cost_of(ethernet, 3, false);
  EXPECT_GT(exposed.time.pp_comm_s, 0.0);
  EXPECT_LT(hidden.time.pp_comm_s, exposed.time.pp_comm_s);
  EXPECT_GE(hidden.time.pp_comm_s, 0.0);
  EXPECT_DOUBLE_EQ(hidden.time.compute_s, exposed.time.compute_s);
  // Per chunk: traffic C beside compute W slowed by s = 18.9 % (Lee et al.
  // 2025) while they overlap. Compute runs at 1/(1+s) while C runs, so C
  // inside the slowed window costs C s/(1+s); beyond it, C - W.
  const int m = 256 / 16;
  const double s = 0.189;
  const double per_chunk_p2p = exposed.time.pp_comm_s / (m * 3);
  const double per_chunk_compute = exposed.time.compute_s / (m * 3);
  const double expected = per_chunk_p2p <= per_chunk_compute * (1 + s) ? per_chunk_p2p * s / (1 + s)
                                                                       : per_chunk_p2p - per_chunk_compute;
  EXPECT_NEAR(hidden.time.pp_comm_s, m * 3 * expected, 1e-9);
}

TEST(PipelineOverlap, OverlapCostsTheComputeSlowdownOrWhatSticksOut) {
  // Lee et al. 2025 (arXiv 2507.03114): compute beside communication runs
  // 18.9 % slower on average.
  EXPECT_DOUBLE_EQ(kOverlapComputeSlowdown, 0.189);
  // No window: nothing is hidden.
  EXPECT_DOUBLE_EQ(exposed_after_overlap_s(2.0, 0.0, 0.189), 2.0);
  // Short traffic inside a long window: it costs the compute it slows.
  EXPECT_NEAR(exposed_after_overlap_s(1.0, 10.0, 0.189), 0.189 / 1.189, 1e-12);
  // Traffic longer than the slowed window: what sticks out.
  EXPECT_DOUBLE_EQ(exposed_after_overlap_s(5.0, 1.0, 0.189), 4.0);
  // Continuous where the two meet (C = W (1 + s)): both give W s.
  EXPECT_NEAR(exposed_after_overlap_s(1.189, 1.0, 0.189), 0.189, 1e-12);
  // With no slowdown, perfect overlap.
  EXPECT_DOUBLE_EQ(exposed_after_overlap_s(1.0, 2.0, 0.0), 0.0);
}

// Context parallelism: Megatron/TE's ring hides each step's KV send behind
// the previous block's attention; PyTorch's all-gather rotation (torchtitan's
// default) has only the first local block (1/cp of the attention) to hide
// behind. On a slow fabric the all-gather variant exposes more, never less;
// compute differs only by the engines' merge passes (cost/cp_merge_passes.h),
// PyTorch's in fp32 on K/V at the query-head width torchtitan's SDPA takes,
// more than TE's bf16 passes on the grouped K/V.
TEST(PipelineOverlap, AllGatherContextParallelHidesLessThanTheRing) {
  cp_test::CpPlan p = cp_test::llama3_8b_cp8_over_ethernet();
  const ModelSpec& model = p.model;
  const ClusterSpec& cluster = p.cluster;
  JobSpec& job = p.job;
  ParallelConfig& c = p.config;
  const CostReport ring = estimate_cost(model, cluster, job, c);
  job.cp_exchange = ContextParallelExchange::kAllGatherKv;
  const CostReport gathered = estimate_cost(model, cluster, job, c);
  EXPECT_GT(gathered.time.cp_comm_s, ring.time.cp_comm_s);
  EXPECT_GT(gathered.time.compute_s, ring.time.compute_s);
  c.cp = 1, c.dp = 8;
  job.seq = 8192;
  // Without context parallelism the choice changes nothing.
  const CostReport none_gathered = estimate_cost(model, cluster, job, c);
  job.cp_exchange = ContextParallelExchange::kRingOverlapped;
  EXPECT_DOUBLE_EQ(estimate_cost(model, cluster, job, c).time.step_s, none_gathered.time.step_s);
}

}  // namespace
}  // namespace parplan
