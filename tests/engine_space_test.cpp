// --engine: the search keeps to the engine's capability table, every plan
// passes that engine's own rules, and the default plans use exact
// collectives; --memory-headroom leaves what it asks free; the Llama 3 8B
// recipe of NVIDIA (tp 1, pp 1, cp 2, mbs 1, gbs 128, seq 8192) fits.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "src/emit/emit.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "src/plan/engine_plan.h"
#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::CliRun;
using test::run_cli;

// With twice NVLink's bandwidth on the Holmes Ethernet cluster every one of
// the union's 64 best plans for GPT 18.4B is torchtitan's, which builds only
// its registered flavors: the search goes deeper to Megatron's best (found
// by the monotonicity property test, where it used to report no plan).
TEST(EngineSpace, AnyEngineSearchesPastPlansTheirEngineRefuses) {
  const ModelSpec model = load_model("gpt-18.4b");
  ClusterSpec cluster = load_cluster("holmes-ethernet");
  cluster.tiers[0].bandwidth_bytes_per_s *= 2;
  JobSpec job;
  job.gpus = 64;
  job.gbs = 256;
  job.seq = 2048;
  PlannerOptions options;
  options.solver = "exhaustive";
  const EnginePlanResult any = plan_for_engines(model, cluster, job, options, 1);
  ASSERT_FALSE(any.planner.ranked.empty()) << any.engine_violation;
  options.engines = parse_engine_selection("megatron");
  const EnginePlanResult megatron = plan_for_engines(model, cluster, job, options, 1);
  ASSERT_FALSE(megatron.planner.ranked.empty());
  EXPECT_LE(any.planner.ranked.front().cost.time.step_s, megatron.planner.ranked.front().cost.time.step_s);
}

TEST(EngineSpace, EveryPlanRunsOnTheEngineAsked) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  for (Engine e : {Engine::kMegatron, Engine::kDeepSpeed, Engine::kMegatronDeepSpeed, Engine::kTorchtitan}) {
    for (int gpus : {8, 16, 32}) {
      JobSpec job;
      job.gpus = gpus;
      job.gbs = 64;
      job.seq = 4096;
      PlannerOptions options;
      options.engines = parse_engine_selection(engine_capabilities(e).name);
      const EnginePlanResult r = plan_for_engines(model, cluster, job, options, 5);
      for (const RankedConfig& ranked : r.planner.ranked) {
        EXPECT_EQ(ranked.engine, static_cast<int>(e));
        const Plan plan{model, cluster, job, ranked.config, ranked.cost};
        EXPECT_EQ(capability_problem(engine_capabilities(e), model, job, ranked.config), nullptr);
        EXPECT_TRUE(engine_rule_violations(plan, e).empty()) << engine_capabilities(e).name << " " << gpus;
        EXPECT_FALSE(ranked.config.qwz || ranked.config.qgz || ranked.config.hierarchical_partition);
      }
    }
  }
}

TEST(EngineSpace, AnyTagsEachPlanWithAnEngineThatRunsIt) {
  const CliRun run =
      run_cli("plan --model llama3-70b --cluster dgx-h100 --gpus 64 --gbs 512 --seq 8192 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_TRUE(j["engine"].is_string());
  EXPECT_FALSE(j["config"]["qwz"].get<bool>() || j["config"]["qgz"].get<bool>());
  EXPECT_FALSE(j["config"]["hierarchical_partition"].get<bool>());
  for (const auto& alt : j["alternatives"]) EXPECT_TRUE(alt["engine"].is_string());
}

TEST(EngineSpace, EstimateSaysWhetherTheEngineRunsTheConfig) {
  const std::string job =
      "estimate --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 128 --seq 8192 --tp 2 --pp 1";
  const CliRun ds = run_cli(job + " --engine deepspeed");
  ASSERT_EQ(ds.exit_code, 0) << ds.err;
  EXPECT_NE(ds.out.find("deepspeed cannot run this config"), std::string::npos) << ds.out;
  const CliRun mg = run_cli(job + " --engine megatron");
  EXPECT_NE(mg.out.find("runs on megatron"), std::string::npos) << mg.out;
  // Every rule the config breaks is named at once (torchtitan: ZeRO-1 and tp
  // without sp), not one per try.
  const CliRun tt = run_cli(job + " --zero 1 --mbs 1 --engine torchtitan");
  ASSERT_EQ(tt.exit_code, 0) << tt.err;
  EXPECT_NE(tt.out.find("ZeRO-1"), std::string::npos) << tt.out;
  EXPECT_NE(tt.out.find("set sp"), std::string::npos) << tt.out;
}

// NVIDIA's Llama 3 8B pre-training recipe (NeMo llama3_8b: tp 1, pp 1,
// cp 2, mbs 1, gbs 128, seq 8192, bf16) ran on one 8-GPU H100 node.
TEST(PublishedConfigs, Llama3_8bRecipeFitsWithTheDefaultHeadroom) {
  const CliRun run = run_cli(
      "estimate --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 128 --seq 8192 --tp 1 --pp 1 --cp 2 "
      "--mbs 1 "
      "--zero 1 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(nlohmann::json::parse(run.out)["memory"]["fits"].get<bool>()) << run.out;
}

TEST(MemoryHeadroom, TenPercentLeavesTenPercentFree) {
  const CliRun run = run_cli(
      "plan --model llama3-70b --cluster dgx-h100 --gpus 64 --gbs 512 --seq 8192 --memory-headroom 10% "
      "--format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  const ClusterSpec cluster = load_cluster("dgx-h100");
  EXPECT_LE(j["memory"]["peak_bytes"].get<double>(), 0.9 * cluster.device.usable_hbm_bytes())
      << j["memory"].dump();
  const CliRun bad = run_cli(
      "plan --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 128 --seq 8192 "
      "--memory-headroom lots");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--memory-headroom"), std::string::npos);
}

}  // namespace
}  // namespace parplan
