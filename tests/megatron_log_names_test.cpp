// Logs read back as the engines print them. Megatron-LM's full recomputation
// of every layer is --recompute-method uniform --recompute-num-layers 1 (as
// the launch files write it): the 1 is the group size, not "one layer".
// Megatron-DeepSpeed prints its own names (--num-experts as a list, --topk,
// --moe-expert-parallel-size, --enable-expert-tensor-parallelism,
// --checkpoint-activations, rmsnorm): a simulated log in its format reads
// back the run it was written for, and the same run with Megatron-LM's
// names for the recomputation is read alike.
#include <gtest/gtest.h>

#include <string>

#include "cost/step_cost.h"
#include "solvers/fit_run.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/megatron_log_reader.h"
#include "src/io/model_loader.h"
#include "src/tune/simulated_log.h"

namespace parplan {
namespace megatron_log_names_test {

struct LoggedRun {
  ModelSpec model;
  ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job;
  ParallelConfig config;
  LoggedRun(const char* model_name, const char* engine, int ep, int etp) : model(load_model(model_name)) {
    job.gpus = 32, job.gbs = 256, job.seq = 4096;
    apply_engine_recipe(engine, job);
    config.tp = 2, config.pp = 2, config.cp = 1, config.dp = 8, config.mbs = 1, config.gbs = 256;
    config.zero = 1, config.sp = true, config.ep = ep, config.etp = etp;
    config.recompute = Recompute::kFull;
  }
};

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

void expect_reads_back(const LoggedRun& r, Engine engine) {
  const double step_s = estimate_cost(r.model, r.cluster, r.job, r.config).time.step_s;
  const std::string log = simulated_megatron_log(r.model, r.job, r.config, step_s, 50, 10, engine);
  const FitRun run = parse_megatron_log(log, "trial.log", r.cluster);
  EXPECT_EQ(run.config.recompute, Recompute::kFull);
  EXPECT_EQ(run.config.recompute_layers, 0);
  EXPECT_EQ(run.model.experts, r.model.experts);
  EXPECT_EQ(run.model.top_k, r.model.top_k);
  EXPECT_EQ(run.model.norm, r.model.norm);
  EXPECT_EQ(run.config.ep, r.config.ep);
  EXPECT_EQ(run.config.etp, r.config.etp);
  EXPECT_NEAR(predict_run(run, r.cluster).step_s / step_s, 1.0, 1e-9);
}

TEST(MegatronLogNames, UniformRecomputationIsEveryLayer) {
  const LoggedRun r("llama3-8b", "megatron", 1, 1);
  const double step_s = estimate_cost(r.model, r.cluster, r.job, r.config).time.step_s;
  const std::string log = simulated_megatron_log(r.model, r.job, r.config, step_s, 50, 10, Engine::kMegatron);
  EXPECT_NE(log.find("recompute_method"), std::string::npos);
  const FitRun uniform = parse_megatron_log(log, "uniform.log", r.cluster);
  EXPECT_EQ(uniform.config.recompute_layers, 0);
  EXPECT_NEAR(predict_run(uniform, r.cluster).step_s / step_s, 1.0, 1e-9);
  // block with 1: the first layer of each chunk only.
  const std::string block = replaced(log, "uniform", "block");
  EXPECT_EQ(parse_megatron_log(block, "block.log", r.cluster).config.recompute_layers, 1);
}

TEST(MegatronLogNames, MegatronDeepSpeedMoeLogReadsBack) {
  expect_reads_back(LoggedRun("mixtral-8x7b", "megatron-deepspeed", 4, 2), Engine::kMegatronDeepSpeed);
  expect_reads_back(LoggedRun("mixtral-8x7b", "megatron-deepspeed", 8, 1), Engine::kMegatronDeepSpeed);
  expect_reads_back(LoggedRun("llama3-8b", "megatron-deepspeed", 1, 1), Engine::kMegatronDeepSpeed);
}

TEST(MegatronLogNames, MegatronDeepSpeedPrintsItsOwnNames) {
  const LoggedRun r("mixtral-8x7b", "megatron-deepspeed", 4, 2);
  const std::string log =
      simulated_megatron_log(r.model, r.job, r.config, 10.0, 50, 10, Engine::kMegatronDeepSpeed);
  for (const char* name :
       {"num_experts ", "topk ", "moe_expert_parallel_size ", "enable_expert_tensor_parallelism ",
        "checkpoint_activations ", "expert_interval "})
    EXPECT_NE(log.find(name), std::string::npos) << name;
  for (const char* name : {"moe_router_topk", "expert_model_parallel_size", "expert_tensor_parallel_size"})
    EXPECT_EQ(log.find(name), std::string::npos) << name;
  EXPECT_NE(log.find("[8]"), std::string::npos);
}

}  // namespace megatron_log_names_test
}  // namespace parplan
