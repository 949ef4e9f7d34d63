// MoE plans end to end: the planner's best plans for Mixtral 8x7B on 64 H100
// and DeepSeek-V3 on 2048 H800 use expert parallelism, and their Megatron-LM
// launch files pass Megatron's argument checks (restated in emit_test_util.h).
#include "emit_fixtures/emit_test_util.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "src/plan/planner.h"

namespace parplan::emit_test {
namespace {

// The first acceptable plan for `engine` among the ranked ones, as
// `parplan plan --emit` picks it.
Plan best_accepted(const std::string& model, const std::string& cluster, int gpus, int gbs, int seq,
                   std::optional<int> ep_pin = std::nullopt) {
  Plan plan;
  plan.model = load_model(model);
  plan.cluster = load_cluster(cluster);
  plan.job.gpus = gpus;
  plan.job.gbs = gbs;
  plan.job.seq = seq;
  plan.job.pins.ep = ep_pin;
  PlannerOptions options;
  options.top_k = 64;
  const PlannerResult result = plan_job(plan.model, plan.cluster, plan.job, options);
  for (const auto& ranked : result.ranked) {
    Plan candidate = plan;
    candidate.config = ranked.config;
    candidate.cost = ranked.cost;
    if (engine_rule_violations(candidate, Engine::kMegatron).empty()) return candidate;
  }
  ADD_FAILURE() << "no plan Megatron accepts";
  return plan;
}

std::pair<ArgMap, std::map<std::string, std::string>> launch(const Plan& plan, const TempDir& dir) {
  return megatron_torchrun_launch(plan, dir);
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

TEST(MoePlanEmit, DeepSeekV3On2048H800UsesExpertParallelism) {
  TempDir dir;
  const Plan plan = best_accepted("deepseek-v3", "dgx-h800", 2048, 15360, 4096);
  EXPECT_GT(plan.config.ep, 1);
  EXPECT_EQ(plan.model.experts % plan.config.ep, 0);
  EXPECT_TRUE(plan.cost.memory.fits);
  const auto [args, env] = launch(plan, dir);
  EXPECT_EQ(joined(megatron_check(args, 2048, env)), "");
  EXPECT_TRUE(args.has("--multi-latent-attention"));
  EXPECT_EQ(args.value("--qk-head-dim"), "128");
  EXPECT_EQ(args.value("--qk-pos-emb-head-dim"), "64");
  EXPECT_EQ(args.value("--mtp-num-layers"), "1");
  EXPECT_EQ(args.value("--moe-router-score-function"), "sigmoid");
  EXPECT_EQ(args.value("--expert-model-parallel-size"), std::to_string(plan.config.ep));
  EXPECT_EQ(args.value("--moe-token-dispatcher-type"), plan.config.a2a_hierarchical ? "flex" : "alltoall");
}

// NVIDIA's Megatron-Core recipe for Mixtral 8x7B runs ep 8; with ep pinned
// the planner finds a feasible plan whose launch files Megatron accepts.
TEST(MoePlanEmit, Mixtral8x7bOn64H100WithEp8) {
  TempDir dir;
  const Plan plan = best_accepted("mixtral-8x7b", "dgx-h100", 64, 256, 4096, 8);
  EXPECT_EQ(plan.config.ep, 8);
  EXPECT_TRUE(plan.cost.memory.fits);
  const auto [args, env] = launch(plan, dir);
  EXPECT_EQ(joined(megatron_check(args, 64, env)), "");
  EXPECT_TRUE(args.has("--moe-grouped-gemm"));
  EXPECT_EQ(args.value("--moe-router-load-balancing-type"), "aux_loss");
  // The same command line at a world the expert grid does not tile fails.
  EXPECT_FALSE(megatron_check(args, 60, env).empty());
}

// Unpinned, the search weighs expert parallelism against tensor-parallel
// experts: ep > 1 configs are among those it ranks.
TEST(MoePlanEmit, Mixtral8x7bSearchRanksExpertParallelConfigs) {
  ModelSpec model = load_model("mixtral-8x7b");
  ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job;
  job.gpus = 64;
  job.gbs = 256;
  job.seq = 4096;
  PlannerOptions options;
  options.top_k = 256;
  const PlannerResult result = plan_job(model, cluster, job, options);
  bool expert_parallel = false;
  for (const auto& ranked : result.ranked) expert_parallel = expert_parallel || ranked.config.ep > 1;
  EXPECT_TRUE(expert_parallel);
}

}  // namespace
}  // namespace parplan::emit_test
