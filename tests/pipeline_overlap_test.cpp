// Megatron's --overlap-p2p-communication: only the interleaved schedule hides
// its sends and receives behind the next chunk's compute.
#include <gtest/gtest.h>

#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

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
  // Interleaved: exposed traffic is what outlasts the chunk's compute, so it
  // shrinks but never below zero, and compute itself does not change.
  const CostReport hidden = cost_of(ethernet, 3, true);
  const CostReport exposed = cost_of(ethernet, 3, false);
  EXPECT_GT(exposed.time.pp_comm_s, 0.0);
  EXPECT_LT(hidden.time.pp_comm_s, exposed.time.pp_comm_s);
  EXPECT_GE(hidden.time.pp_comm_s, 0.0);
  EXPECT_DOUBLE_EQ(hidden.time.compute_s, exposed.time.compute_s);
  // The exposed part is what exceeds compute: exposed - compute per chunk.
  const int m = 256 / 16;
  const double per_chunk_p2p = exposed.time.pp_comm_s / (m * 3);
  const double per_chunk_compute = exposed.time.compute_s / (m * 3);
  EXPECT_NEAR(hidden.time.pp_comm_s, m * 3 * std::max(0.0, per_chunk_p2p - per_chunk_compute), 1e-9);
}

}  // namespace
}  // namespace parplan
