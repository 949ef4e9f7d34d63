// PyTorch FSDP's hybrid sharding (HSDP: FSDP2 over a 2-D mesh, torchtitan's
// data_parallel_shard_degree x data_parallel_replicate_degree), which a
// torchtitan ZeRO-3 plan with hpz_ranks > 1 runs: every model state sharded
// over the shard group and replicated across the others, each gradient shard
// all-reduced across the replicas. DeepSpeed's hpZ keeps its full partition
// and adds a secondary weight copy instead.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cost/memory.h"
#include "src/emit/engine_capabilities.h"
#include "tests/cli_support.h"
#include "tests/model_on_cluster.h"

namespace parplan::hsdp_test {
namespace {

// Llama 3 8B under ZeRO-3 on `gpus` H100s (8 per node), tp 1, pp 1.
struct Zero3 : test::ModelOnCluster {
  Zero3(const char* engine, int gpus, int hpz_ranks = 1)
      : ModelOnCluster("llama3-8b", "dgx-h100", gpus, 64, 8192) {
    apply_engine_recipe(engine, job);
    config.tp = config.pp = config.cp = 1;
    config.dp = gpus;
    config.mbs = 1;
    config.gbs = job.gbs;
    config.zero = 3;
    config.hpz_ranks = hpz_ranks;
  }
};

double state_bytes(const CostReport& cost) {
  return cost.memory.params_bytes + cost.memory.grads_bytes + cost.memory.optimizer_bytes;
}

double tier_bytes(const CostReport& cost, int tier) { return cost.dp_traffic.bytes[tier]; }

// HSDP over 8 of 16 ranks holds what plain FSDP over 8 ranks holds: the
// same shard of every model state, nothing more.
TEST(FsdpHybridShard, ShardsEveryModelStateOverTheShardGroup) {
  const CostReport a = Zero3("torchtitan", 16, 8).cost(), b = Zero3("torchtitan", 8).cost();
  EXPECT_DOUBLE_EQ(a.memory.params_bytes, b.memory.params_bytes);
  EXPECT_DOUBLE_EQ(a.memory.grads_bytes, b.memory.grads_bytes);
  EXPECT_DOUBLE_EQ(a.memory.optimizer_bytes, b.memory.optimizer_bytes);
  EXPECT_DOUBLE_EQ(a.memory.params_secondary_bytes, 0.0);
  // Twice the states of FSDP over all 16 ranks.
  EXPECT_NEAR(state_bytes(a), 2.0 * state_bytes(Zero3("torchtitan", 16).cost()), 1e-9 * state_bytes(a));
}

// Across nodes HSDP moves only the all-reduce of each rank's gradient
// shard between the 2 replicas, one rank per node: a reduce-scatter and an
// all-gather of the shard's gradient, each sending half of it across, every
// micro-batch. Its weight gathers and reduce-scatters stay inside the node,
// where plain FSDP's span both nodes: less time on the network.
TEST(FsdpHybridShard, CrossesNodesOnlyToAllReduceGradientShards) {
  const Zero3 hsdp("torchtitan", 16, 8);
  const CostReport a = hsdp.cost(), b = Zero3("torchtitan", 16).cost();
  const int node_tier = 1;  // dgx-h100: NVLink inside a node, then InfiniBand
  const double micro_batches = 64.0 / 16;
  const double local_params = a.memory.optimizer_bytes / 8.0;  // fp32 moments, the fp32 master kept as params
  const double shard_grad_bytes =
      gradient_bytes_per_param(hsdp.job.precision, 3, hsdp.job.grad_reduce) * local_params;
  const double expected = micro_batches * 2.0 * 0.5 * shard_grad_bytes;
  EXPECT_NEAR(tier_bytes(a, node_tier), expected, 1e-6 * expected);
  EXPECT_LT(a.dp_traffic.seconds[node_tier], b.dp_traffic.seconds[node_tier]);
  EXPECT_LE(tier_bytes(a, node_tier), tier_bytes(b, node_tier));
}

// DeepSpeed's hpZ (ZeRO++) keeps the full ZeRO-3 partition over all ranks
// and adds a secondary copy of the 16-bit weights over the node's ranks
// (Wang et al. 2023).
TEST(FsdpHybridShard, DeepSpeedHpzAddsASecondaryCopyInstead) {
  const CostReport a = Zero3("deepspeed", 16, 8).cost(), b = Zero3("deepspeed", 16).cost();
  EXPECT_DOUBLE_EQ(a.memory.optimizer_bytes, b.memory.optimizer_bytes);
  EXPECT_DOUBLE_EQ(a.memory.grads_bytes, b.memory.grads_bytes);
  EXPECT_GT(a.memory.params_secondary_bytes, 0.0);
  EXPECT_NEAR(a.memory.params_bytes - b.memory.params_bytes, a.memory.params_secondary_bytes,
              1e-9 * a.memory.params_bytes);
}

// A hpZ plan runs on the engine whose semantics it was costed under: HSDP
// on torchtitan, the secondary weight copy on DeepSpeed, never crossed.
TEST(FsdpHybridShard, EachEngineRunsTheHpzItWasCostedAs) {
  const Zero3 titan("torchtitan", 16, 8), deepspeed("deepspeed", 16, 8);
  const auto problem = [](Engine engine, const Zero3& k) {
    const char* p = capability_problem(engine_capabilities(engine), k.model, k.job, k.config);
    return std::string(p != nullptr ? p : "");
  };
  EXPECT_EQ(problem(Engine::kTorchtitan, titan), "");
  EXPECT_EQ(problem(Engine::kDeepSpeed, deepspeed), "");
  EXPECT_NE(problem(Engine::kTorchtitan, deepspeed).find("HSDP"), std::string::npos);
  EXPECT_NE(problem(Engine::kDeepSpeed, titan).find("HSDP"), std::string::npos);
}

// estimate --hpz, a job file's `hpz: true` and the ZeRO++ it is part of are
// laid on the cluster's nodes alike: hpz_ranks = the data-parallel ranks of
// one node (tp 2: 4), exact collectives for hpZ alone.
TEST(FsdpHybridShard, HpzFromFlagOrJobFileIsOneNode) {
  const std::string job =
      "--model llama3-70b --cluster dgx-h100 --gpus 128 --gbs 512 --seq 8192 --tp 2 --pp 1 --mbs 1 --sp "
      "--recompute selective --format json";
  const auto config_of = [](const std::string& args) { return test::cli_json(args)["config"]; };
  const nlohmann::json flag = config_of("estimate " + job + " --hpz");
  EXPECT_EQ(flag["hpz_ranks"], 4);
  EXPECT_FALSE(flag["qwz"].get<bool>());
  const std::string file_job = test::write_temp(
      "hsdp_job.yaml",
      "model: llama3-70b\ncluster: dgx-h100\ngpus: 128\ngbs: 512\nseq: 8192\n"
      "config: {tp: 2, pp: 1, mbs: 1, sp: true, recompute: selective, zero: 3, hpz: true}\n");
  EXPECT_EQ(config_of("estimate --format json --job " + file_job), flag);
  const std::string zeropp_job =
      test::write_temp("zeropp_job.yaml",
                       "model: llama3-70b\ncluster: dgx-h100\ngpus: 128\ngbs: 512\nseq: 8192\n"
                       "config: {tp: 2, pp: 1, mbs: 1, sp: true, recompute: selective, zeropp: true}\n");
  const nlohmann::json zeropp = config_of("estimate --format json --job " + zeropp_job);
  EXPECT_EQ(zeropp, config_of("estimate " + job + " --zeropp"));
  EXPECT_EQ(zeropp["hpz_ranks"], 4);
  EXPECT_TRUE(zeropp["qwz"].get<bool>());
  test::expect_cli_refusal("estimate " + job + " --hpz --zeropp", "--hpz");
  test::expect_cli_refusal("estimate " + job + " --hpz --zero 2", "--hpz");
  std::string pipelined = job;
  pipelined.replace(pipelined.find("--pp 1"), 6, "--pp 2");
  test::expect_cli_refusal("estimate " + pipelined + " --hpz", "--hpz");
}

}  // namespace
}  // namespace parplan::hsdp_test
