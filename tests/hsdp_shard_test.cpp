// HSDP shard groups of any size (torchtitan's data_parallel_shard_degree
// beside data_parallel_replicate_degree): `--hsdp-shard N` and the job and
// run files' `hsdp_shard: N` cost every state sharded over N x cp ranks; the
// search tries groups of 2, 4, ... nodes for PyTorch-FSDP engines, where a
// node's group holds too much of a large model.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/emit/engine_capabilities.h"
#include "tests/cli_support.h"
#include "tests/model_on_cluster.h"

namespace parplan::hsdp_shard_test {
namespace {

const std::string kJob =
    "estimate --model llama3.1-70b --cluster dgx-h100 --gpus 128 --gbs 512 --seq 8192 --tp 2 --pp 1 --mbs 1 "
    "--sp --recompute full --format json";

// ZeRO-3 of Llama 3 70B over `shard` of 64 data-parallel ranks (tp 2).
CostReport hsdp_cost(int gpus, int shard) {
  test::ModelOnCluster k("llama3.1-70b", "dgx-h100", gpus, 512, 8192);
  apply_engine_recipe("torchtitan", k.job);
  k.config.tp = 2, k.config.sp = true, k.config.pp = k.config.cp = 1;
  k.config.dp = gpus / 2;
  k.config.mbs = 1, k.config.gbs = 512, k.config.zero = 3;
  k.config.recompute = Recompute::kFull;
  k.config.hpz_ranks = shard;
  return k.cost();
}

// A shard group of 4 nodes (16 ranks at tp 2) of 16 nodes holds exactly what
// plain FSDP over those 16 ranks (32 GPUs) holds.
TEST(HsdpShard, AMultiNodeGroupHoldsWhatFsdpOverItHolds) {
  const CostReport a = hsdp_cost(128, 16), b = hsdp_cost(32, 1);
  EXPECT_DOUBLE_EQ(a.memory.params_bytes, b.memory.params_bytes);
  EXPECT_DOUBLE_EQ(a.memory.grads_bytes, b.memory.grads_bytes);
  EXPECT_DOUBLE_EQ(a.memory.optimizer_bytes, b.memory.optimizer_bytes);
  // Doubling the group halves every state.
  const CostReport c = hsdp_cost(128, 32);
  EXPECT_NEAR(c.memory.optimizer_bytes, 0.5 * a.memory.optimizer_bytes, 1e-9 * a.memory.optimizer_bytes);
}

// Qwen3-30B-A3B with ep 8 on 128 ranks: HSDP over 16 of them holds 8x what
// plain FSDP holds, the routed experts included: torchtitan borrows the
// expert-parallel ranks from the shard group and shards the experts over the
// rest of it (16 / 8 = 2 ranks), not over all 16 expert-data-parallel ranks.
TEST(HsdpShard, ExpertsShardOverTheShardGroupLessExpertParallelism) {
  const auto states = [](int hpz_ranks) {
    test::ModelOnCluster k("qwen3-30b-a3b", "dgx-h100", 128, 512, 4096);
    apply_engine_recipe("torchtitan", k.job);
    k.config.tp = k.config.pp = k.config.cp = 1;
    k.config.dp = 128;
    k.config.ep = 8;
    k.config.mbs = 1, k.config.gbs = 512, k.config.zero = 3;
    k.config.hpz_ranks = hpz_ranks;
    const CostReport cost = k.cost();
    return cost.memory.params_bytes + cost.memory.grads_bytes + cost.memory.optimizer_bytes;
  };
  const double flat = states(1), hsdp = states(16);
  EXPECT_NEAR(hsdp, 8.0 * flat, 1e-9 * hsdp);
}

// The flag, the job file's key and torchtitan's own degrees name the same
// config; cp ranks are part of the group.
TEST(HsdpShard, FlagAndJobFileAgree) {
  const nlohmann::json flag = test::cli_json(kJob + " --engine torchtitan --hsdp-shard 16")["config"];
  EXPECT_EQ(flag["hpz_ranks"], 16);
  EXPECT_EQ(flag["zero"], 3);
  EXPECT_FALSE(flag["qwz"].get<bool>());
  const std::string file = test::write_temp(
      "hsdp_shard_job.yaml",
      "model: llama3.1-70b\ncluster: dgx-h100\ngpus: 128\ngbs: 512\nseq: 8192\nengine: torchtitan\n"
      "config: {tp: 2, pp: 1, mbs: 1, sp: true, recompute: full, hsdp_shard: 16}\n");
  EXPECT_EQ(test::cli_json("estimate --format json --job " + file)["config"], flag);
  std::string with_cp = kJob;
  with_cp.replace(with_cp.find("--pp 1"), 6, "--pp 1 --cp 2");
  EXPECT_EQ(test::cli_json(with_cp + " --engine torchtitan --hsdp-shard 8")["config"]["hpz_ranks"], 16);
}

TEST(HsdpShard, RefusesWhatTorchtitanCannotRun) {
  test::expect_cli_refusal(kJob + " --hsdp-shard 16", "--engine torchtitan");
  test::expect_cli_refusal(kJob + " --engine deepspeed --hsdp-shard 16", "--engine torchtitan");
  test::expect_cli_refusal(kJob + " --engine torchtitan --hsdp-shard 24", "must divide dp (64)");
  test::expect_cli_refusal(kJob + " --engine torchtitan --hsdp-shard 64", "plain FSDP");
  test::expect_cli_refusal(kJob + " --engine torchtitan --hsdp-shard 1", "--hsdp-shard");
  test::expect_cli_refusal(kJob + " --engine torchtitan --hsdp-shard 16 --hpz", "alternatives");
  test::expect_cli_refusal(kJob + " --engine torchtitan --hsdp-shard 16 --zero 2", "--zero 3");
  const std::string file = test::write_temp(
      "hsdp_shard_zero2.yaml",
      "model: llama3.1-70b\ncluster: dgx-h100\ngpus: 128\ngbs: 512\nseq: 8192\nengine: torchtitan\n"
      "config: {tp: 2, pp: 1, mbs: 1, sp: true, zero: 2, hsdp_shard: 16}\n");
  test::expect_cli_refusal("estimate --job " + file, "hsdp_shard");
}

// Llama 3 405B on 1024 H100s under torchtitan: a node's shard group (2
// ranks at tp 4) cannot hold its states, plain FSDP gathers over 256 ranks;
// the optimum at tp 4 without a pipeline shards over several nodes (the free
// optimum is tp 2 with FSDP over all 512 ranks; at tp 4, a 32-stage pipeline
// with an uneven split is faster still), and is exactly the config
// `estimate --hsdp-shard` costs, at the same step time.
TEST(HsdpShard, PlanFindsAMultiNodeShardGroupThatEstimateReproduces) {
  const std::string job =
      " --model llama3-405b --cluster dgx-h100 --gpus 1024 --gbs 1024 --seq 8192 --engine torchtitan "
      "--format json";
  const nlohmann::json plan = test::cli_json("plan" + job + " --tp 4 --pp 1");
  const nlohmann::json& c = plan["config"];
  const int node_ranks = 8 / c["tp"].get<int>();
  ASSERT_GT(c["hpz_ranks"].get<int>(), node_ranks) << c.dump();
  std::string flags = " --tp " + std::to_string(c["tp"].get<int>()) + " --pp " +
                      std::to_string(c["pp"].get<int>()) + " --cp " + std::to_string(c["cp"].get<int>()) +
                      " --mbs " + std::to_string(c["mbs"].get<int>()) + " --recompute " +
                      c["recompute"].get<std::string>() + " --hsdp-shard " +
                      std::to_string(c["hpz_ranks"].get<int>() / c["cp"].get<int>());
  if (c["sp"].get<bool>()) flags += " --sp";
  if (c["recompute_layers"].get<int>() > 0)
    flags += " --recompute-layers " + std::to_string(c["recompute_layers"].get<int>());
  const nlohmann::json own = test::cli_json("estimate" + job + flags);
  EXPECT_DOUBLE_EQ(own["time"]["step_s"].get<double>(), plan["time"]["step_s"].get<double>());
  // sweep names the variant as torchtitan runs it (Llama 3 8B on two
  // Frontier nodes: HSDP within the node is the optimum).
  const std::string small =
      " --cluster frontier --gpus 16 --gbs 64 --seq 4096 --engine torchtitan --format json";
  const nlohmann::json swept = test::cli_json("sweep --models llama3.1-8b" + small);
  const nlohmann::json& point = swept["points"][0];
  EXPECT_EQ(point["zero_variant"], "hsdp");
  EXPECT_EQ(point["hpz_ranks"], test::cli_json("plan --model llama3.1-8b" + small)["config"]["hpz_ranks"]);
}

// plan --hsdp-shard N pins the degree: every plan listed shards over N
// data-parallel ranks x cp under ZeRO-3, none faster than the free search.
TEST(HsdpShard, PlanPinKeepsEveryPlanOnTheShardDegree) {
  const std::string job =
      "plan --model llama3-405b --cluster dgx-h100 --gpus 1024 --gbs 1024 --seq 8192 --engine torchtitan "
      "--format json";
  const nlohmann::json free = test::cli_json(job);
  const nlohmann::json pinned = test::cli_json(job + " --hsdp-shard 16");
  std::vector<nlohmann::json> plans = {pinned};
  for (const auto& alt : pinned["alternatives"]) plans.push_back(alt);
  for (const nlohmann::json& p : plans) {
    EXPECT_EQ(p["config"]["zero"], 3);
    EXPECT_EQ(p["config"]["hpz_ranks"].get<int>(), 16 * p["config"]["cp"].get<int>()) << p["config"].dump();
    EXPECT_EQ(p["config"]["dp"].get<int>() % 16, 0);
    EXPECT_GE(p["config"]["dp"].get<int>(), 32);
  }
  EXPECT_GE(pinned["time"]["step_s"].get<double>(), free["time"]["step_s"].get<double>());
  test::expect_cli_refusal(job + " --hsdp-shard 1024", "at most 512");
  std::string deepspeed = job;
  deepspeed.replace(deepspeed.find("torchtitan"), 10, "deepspeed");
  test::expect_cli_refusal(deepspeed + " --hsdp-shard 16", "--engine torchtitan");
}

// The plan's "why" notes name HSDP as torchtitan runs it, and a ZeRO++ plan
// only the parts of ZeRO++ it uses (both once said "hpZ, qwZ, qgZ").
TEST(HsdpShard, TheWhyNotesNameWhatThePlanRuns) {
  const std::string job =
      "plan --model llama3.1-8b --cluster frontier --gpus 16 --gbs 64 --seq 4096 --format json";
  const nlohmann::json hsdp = test::cli_json(job + " --engine torchtitan --hsdp-shard 8");
  ASSERT_EQ(hsdp["config"]["hpz_ranks"], 8);
  bool named = false;
  for (const nlohmann::json& note : hsdp["notes"]) {
    const std::string text = note;
    named = named || text.rfind("HSDP (shard 8 x replicate 2): ", 0) == 0;
    EXPECT_EQ(text.find("ZeRO++"), std::string::npos) << text;
    EXPECT_EQ(text.find("qwZ"), std::string::npos) << text;
  }
  EXPECT_TRUE(named) << hsdp["notes"].dump();
  for (const char* lossy : {"", " --allow-lossy-comm"}) {
    const nlohmann::json zpp = test::cli_json(job + " --engine deepspeed --zeropp" + lossy);
    const nlohmann::json& c = zpp["config"];
    for (const nlohmann::json& note : zpp["notes"]) {
      const std::string text = note;
      if (text.rfind("ZeRO++ (hpZ", 0) != 0) continue;
      EXPECT_EQ(text.find("qwZ") != std::string::npos, c["qwz"].get<bool>()) << text;
      EXPECT_EQ(text.find("qgZ") != std::string::npos, c["qgz"].get<bool>()) << text;
    }
  }
}

}  // namespace
}  // namespace parplan::hsdp_shard_test
