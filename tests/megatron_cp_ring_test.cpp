// Megatron's context parallelism is Transformer Engine's p2p ring
// (AttnFuncWithCPAndKVP2P): every step each rank sends the K/V it holds to
// the next rank while one block of attention runs, and the ring moves in
// lockstep, so the slowest hop sets each step. A ring that crosses nodes
// pays a whole node link per step, not a node's share of an all-gather
// (cost/pipeline_schedule.cpp, megatron_cp_comm).
#include <gtest/gtest.h>

#include "cost/step_cost.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace megatron_cp_ring_test {

double cp_comm_s(const ClusterSpec& cluster, const ModelSpec& model, const JobSpec& job,
                 const ParallelConfig& c) {
  return estimate_cost(model, cluster, job, c).time.cp_comm_s;
}

// 16 H100s, tp 2 x cp 8: the ring's 8 ranks sit 4 to a node, so two of its
// hops (4 -> 8 and the wrap 14 -> 0) cross InfiniBand. At 4096 tokens a
// rank holds 512, whose attention block is a few microseconds: every hop
// is exposed. Halving the InfiniBand bandwidth adds, per layer, the extra
// time of the cross-node hop at each step: 7 forward steps of the K/V, and
// in the backward 2 of the K/V (or the dK/dV alone) and 6 of both.
TEST(MegatronCpRing, EachStepPaysTheCrossNodeHop) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec fast = load_cluster("dgx-h100");
  ClusterSpec slow = fast;
  ASSERT_GE(slow.tiers.size(), 2u);
  slow.tiers[1].bandwidth_bytes_per_s /= 2;
  JobSpec job;
  job.gpus = 16, job.gbs = 1, job.seq = 4096;
  apply_engine_recipe("megatron", job);
  ParallelConfig c;
  c.tp = 2, c.cp = 8, c.pp = 1, c.dp = 1, c.mbs = 1, c.gbs = 1, c.sp = true, c.zero = 1;
  const double kv_bytes = 2.0 * 2.0 * (4096.0 / c.cp) * model.kv_groups * model.head_dim / c.tp;
  const double extra_per_hop_s = kv_bytes / fast.tiers[1].effective_bytes_per_s();
  const double steps = (c.cp - 1) + 2 + 2.0 * (c.cp - 2);
  const double expected_s = model.layers * steps * extra_per_hop_s;
  const double added_s = cp_comm_s(slow, model, job, c) - cp_comm_s(fast, model, job, c);
  EXPECT_NEAR(added_s / expected_s, 1.0, 1e-9) << added_s << " s added, " << expected_s << " s expected";
}

// Inside one node (tp 1 x cp 8) the ring never touches InfiniBand.
TEST(MegatronCpRing, ARingInsideANodeIgnoresInfiniBand) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec fast = load_cluster("dgx-h100");
  ClusterSpec slow = fast;
  slow.tiers[1].bandwidth_bytes_per_s /= 2;
  JobSpec job;
  job.gpus = 8, job.gbs = 1, job.seq = 4096;
  apply_engine_recipe("megatron", job);
  ParallelConfig c;
  c.tp = 1, c.cp = 8, c.pp = 1, c.dp = 1, c.mbs = 1, c.gbs = 1, c.zero = 1;
  EXPECT_GT(cp_comm_s(fast, model, job, c), 0.0);
  EXPECT_EQ(cp_comm_s(slow, model, job, c), cp_comm_s(fast, model, job, c));
}

}  // namespace megatron_cp_ring_test
}  // namespace parplan
