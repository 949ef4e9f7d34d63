// A tensor-parallel size that does not divide a node (tp 5 on 8-GPU nodes)
// leaves some groups across two nodes (ranks 5..9): a ring all-gather runs
// at the pace of its slowest link, so every group is costed on the network
// once any straddles; one that never straddles (the whole job inside one
// node, or groups that tile it) stays on NVLink.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cost/collectives.h"
#include "src/io/cluster_loader.h"
#include "tests/cli_support.h"

namespace parplan {
namespace straddling_groups_test {

TEST(StraddlingGroups, ANonTilingGroupCountsOnlyWhatEveryNodeHolds) {
  const ClusterSpec a100 = load_cluster("dgx-a100");    // 8 GPUs per node
  EXPECT_EQ(group_span(a100, 5, 1, 5).members[0], 5);   // one node holds the job
  EXPECT_EQ(group_span(a100, 5, 1, 10).members[0], 1);  // ranks 5..9 straddle
  EXPECT_EQ(group_span(a100, 5, 1, 40).members[0], 1);
  EXPECT_EQ(group_span(a100, 4, 1, 64).members[0], 4);   // tiles a node
  EXPECT_EQ(group_span(a100, 16, 1, 64).members[0], 8);  // whole nodes
  EXPECT_EQ(group_span(a100, 6, 1, 48).members[0], 2);   // 6 and 8 share 2
}

TEST(StraddlingGroups, TensorParallelTrafficAcrossNodesIsCostedOnTheNetwork) {
  const auto tp_comm_per_replica = [](int gpus) {
    const nlohmann::json j =
        test::cli_json("estimate --model gpt-1t --cluster dgx-a100 --gpus " + std::to_string(gpus) +
                       " --gbs " + std::to_string(8 * gpus / 5) +
                       " --seq 2048 --tp 5 --pp 1 --sp --zero 0 --recompute full --mbs 1 "
                       "--format json");
    return j.empty() ? 0.0 : j["time"]["tp_comm_s"].get<double>();
  };
  // The same micro-batches per replica: inside one node, then across two.
  const double inside = tp_comm_per_replica(5), across = tp_comm_per_replica(10);
  ASSERT_GT(inside, 0);
  // InfiniBand (25 GB/s per GPU) against NVLink (300 GB/s): several times slower.
  EXPECT_GT(across, 3 * inside);
}

// The plan such a cluster gets (gpt-1t on 4480 A100s: tp 5 and
// Megatron-DeepSpeed's own uniform layer partition, middle stages of 5 and 4
// layers) carries no stage-split certificate: the split is the engine's,
// and the MILP of equal middle stages read "infeasible" and warned.
TEST(StraddlingGroups, AnEnginesOwnPartitionIsNotCertifiedAsASplit) {
  const test::CliRun run =
      test::run_cli("plan --model gpt-1t --cluster dgx-a100 --gpus 4480 --gbs 1536 --seq 2048 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err.find("not certified"), std::string::npos) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  for (const auto& certificate : j["solver"]) EXPECT_NE(certificate["status"], "infeasible") << certificate;
}

}  // namespace straddling_groups_test
}  // namespace parplan
