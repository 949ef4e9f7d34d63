// One closed-form check per file of the split step-cost model: the pipeline
// schedule (1F1B bubble), the data-parallel/ZeRO cost (flat ZeRO-3 traffic)
// and the collectives (ring all-reduce volume).
#include <gtest/gtest.h>

#include "cost/collectives.h"
#include "cost/step_cost.h"
#include "cost/step_internal.h"

namespace parplan {
namespace {

ModelSpec gpt_model(int layers) {
  ModelSpec m;
  m.name = "gpt";
  m.layers = layers;
  m.hidden = 4096;
  m.ffn_hidden = 4 * 4096;
  m.heads = 32;
  m.kv_groups = 32;
  m.head_dim = 128;
  m.vocab = 51200;
  m.max_positions = 2048;
  return m;
}

// A cluster whose network costs nothing: only compute and the schedule remain.
ClusterSpec ideal_cluster(double bandwidth_bytes_per_s = 1e30) {
  ClusterSpec c;
  c.name = "ideal";
  c.device.name = "gpu";
  c.device.peak_bf16_flops_per_s = 312e12;
  c.device.hbm_bytes = 1e15;
  c.device.hbm_bytes_per_s = 2e12;
  c.ranks_per_node = 8;
  NetworkTier tier;
  tier.name = "fabric";
  tier.ranks = 0;
  tier.bandwidth_bytes_per_s = bandwidth_bytes_per_s;
  tier.latency_s = 0;
  c.tiers = {tier};
  return c;
}

TEST(StepCostClosedForm, PipelineBubbleIsPMinusOneOverVmOfCompute) {
  // Narayanan et al. 2021, sec. 2.2: bubble fraction (p - 1) / (v m).
  const ModelSpec model = gpt_model(32);
  const ClusterSpec cluster = ideal_cluster();
  for (int pp : {2, 4, 8}) {
    for (int vp : {1, 2, 4}) {
      for (int m : {8, 16, 32}) {
        if (model.layers % (pp * vp) != 0) continue;
        JobSpec job;
        job.gpus = pp;
        job.seq = 2048;
        job.gbs = m;
        ParallelConfig c;
        c.pp = pp;
        c.vp = vp;
        c.gbs = m;
        ASSERT_EQ(config_problem(model, job, c), nullptr);
        const CostReport r = estimate_cost(model, cluster, job, c);
        EXPECT_NEAR(r.time.bubble_s / r.time.compute_s, (pp - 1.0) / (vp * m), 1e-9)
            << "pp " << pp << " vp " << vp << " m " << m;
      }
    }
  }
  EXPECT_DOUBLE_EQ(detail::pipeline_bubble_s(4, 2, 3.0), 3.0 * 3.0 / 2.0);
}

TEST(StepCostClosedForm, FlatZero3MovesThreePsiPerStep) {
  // Rajbhandari et al. 2020, sec. 7: ZeRO-3 moves 3 Psi per rank per step
  // (all-gather forward, all-gather backward, reduce-scatter of gradients),
  // each a ring collective moving (n - 1) / n of the 2-byte buffer.
  const ModelSpec model = gpt_model(8);
  const ClusterSpec cluster = ideal_cluster(100e9);
  for (int n : {2, 8, 64}) {
    JobSpec job;
    job.gpus = n;
    job.seq = 2048;
    job.gbs = n;  // one micro-batch per step
    ParallelConfig c;
    c.dp = n;
    c.gbs = n;
    c.zero = 3;
    ASSERT_EQ(config_problem(model, job, c), nullptr);
    const CostReport r = estimate_cost(model, cluster, job, c);
    double moved = 0;
    for (double bytes : r.dp_traffic.bytes) moved += bytes;
    const double psi = r.params;
    EXPECT_NEAR(moved / (3.0 * 2.0 * psi * (n - 1.0) / n), 1.0, 1e-3) << n;
  }
}

TEST(StepCostClosedForm, RingAllReduceMovesTwoNMinusOneOverNOfTheBuffer) {
  const ClusterSpec cluster = ideal_cluster(50e9);
  const double buffer_bytes = 1e9;
  for (int n : {2, 4, 8, 1024}) {
    const GroupSpan span = group_span(cluster, n, 1);
    TierTraffic traffic;
    const double seconds = all_reduce_s(cluster, span, buffer_bytes, &traffic);
    const double expected_bytes = 2.0 * (n - 1.0) / n * buffer_bytes;
    EXPECT_NEAR(traffic.bytes[0], expected_bytes, 1e-6 * expected_bytes) << n;
    EXPECT_NEAR(seconds, expected_bytes / 50e9, 1e-12) << n;
  }
}

}  // namespace
}  // namespace parplan
