// Launch files an engine runs as costed, checked against the engines' own
// sources (an audit of the emitters, 2026-12-01): Megatron's learning-rate
// warm-up stays below the run's iterations, an MoE model with tp trains
// only with sequence parallelism, DeepSeek-V3's routed output scale is
// written, torchtitan's llama3 flavors are Llama 3.1 (RoPE scaled), and
// DeepSpeed's ZeRO++ groups are global ranks.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;

std::string out_dir(const std::string& name) {
  const std::string dir =
      ::testing::TempDir() + "parplan_faithful_" + name + "_" + std::to_string(::getpid());
  fs::remove_all(dir);
  return dir;
}

// The value bash gives `var` after the script's variable lines (VAR="${VAR:-...}").
std::string script_value(const std::string& script, const std::string& var, const std::string& env = "") {
  const std::string cmd = "bash -c '" + env + " eval \"$(grep -E \"^(TRAIN_ITERS|" + var + ")=\" " + script +
                          ")\"; echo $" + var + "'";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[128];
  while (pipe != nullptr && std::fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  if (pipe != nullptr) ::pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// No plan the engine runs: exit 1, the broken rule named on stderr.
void expect_no_plan(const std::string& args, const std::string& rule) {
  const test::CliRun run = test::run_cli(args);
  EXPECT_EQ(run.exit_code, 1) << args << "\n" << run.err;
  EXPECT_NE(run.err.find(rule), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
}

TEST(EmitEngineFaithful, WarmUpStaysBelowTheRunsIterations) {
  // Megatron asserts lr_warmup_steps < lr_decay_steps, the decay defaulting
  // to train_iters (optimizer_param_scheduler.py, core_r0.13.0).
  const std::string dir = out_dir("warmup");
  const test::CliRun run = test::run_cli(
      "plan --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096 --emit megatron --train-iters "
      "50 "
      "--out " +
      dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string script = dir + "/launch.sh";
  for (const char* iters : {"30", "50", "5000"}) {
    const int warmup =
        std::stoi(script_value(script, "LR_WARMUP_ITERS", std::string("TRAIN_ITERS=") + iters));
    EXPECT_LT(warmup, std::stoi(iters)) << iters;
    EXPECT_GE(warmup, 0);
  }
  fs::remove_all(dir);
}

TEST(EmitEngineFaithful, MegatronMoeWithTensorParallelismNeedsSequenceParallelism) {
  // MoELayer.forward raises in training with tp > 1 and no sp (moe_layer.py, core_r0.13.0).
  expect_no_plan(
      "plan --model mixtral-8x7b --cluster dgx-h100 --gpus 64 --gbs 256 --seq 4096 --tp 2 --ep 1 --no-sp "
      "--engine megatron",
      "sequence parallelism in Megatron-LM (MoELayer)");
}

TEST(EmitEngineFaithful, DeepSeekV3ScalesItsRoutedOutput) {
  // config.json routed_scaling_factor 2.5; Megatron's default leaves it unscaled.
  const std::string dir = out_dir("dsv3");
  const test::CliRun run = test::run_cli(
      "plan --model deepseek-v3 --cluster dgx-h800 --gpus 2048 --gbs 15360 --seq 4096 --emit megatron "
      "--out " +
      dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(test::slurp(dir + "/launch.sh").find("--moe-router-topk-scaling-factor 2.5"), std::string::npos);
  fs::remove_all(dir);
}

TEST(EmitEngineFaithful, TorchtitansLlama3FlavorsAreLlama31) {
  // model_registry("8B") builds ComplexRoPE with scaling="llama" (factor 8).
  test::expect_cli_refusal(
      "plan --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096 --emit torchtitan "
      "--out " +
          out_dir("tt_llama3"),
      "no RoPE scaling");
  const std::string dir = out_dir("tt_llama31");
  const test::CliRun run = test::run_cli(
      "plan --model llama3.1-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096 --emit torchtitan --out " +
      dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // The recipe's profiler (llama3 recipes trace every 100 steps) is off, as costed.
  EXPECT_NE(test::slurp(dir + "/parplan_torchtitan.py").find("config.profiler.enable_profiling = False"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(EmitEngineFaithful, DeepSpeedZeroPlusPlusRunsWithoutTensorParallelism) {
  // hpZ's groups are contiguous global ranks (deepspeed/utils/groups.py, v0.17.0).
  expect_no_plan(
      "plan --model llama3-70b --cluster dgx-h100 --gpus 64 --gbs 128 --seq 8192 --tp 4 "
      "--zero 3 --zeropp --engine megatron-deepspeed",
      "would mix tensor-parallel shards");
}

// GPTModelPipe asserts an MoE pipe with tp > 1 partitions nothing between
// stages (megatron/model/gpt_model.py:375-384, Megatron-DeepSpeed 4efb479),
// and DeepSpeed's engine partitions unless ds_config says otherwise.
TEST(EmitEngineFaithful, MegatronDeepSpeedMoePipeIsNotPartitioned) {
  const std::string dir = out_dir("moe_pipe");
  const test::CliRun run = test::run_cli(
      "plan --model mixtral-8x7b --cluster dgx-h100 --gpus 64 --gbs 256 --seq 4096 --tp 2 --pp 4 "
      "--emit megatron-deepspeed --out " +
      dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json config = nlohmann::json::parse(test::slurp(dir + "/ds_config.json"));
  ASSERT_TRUE(config.contains("pipeline")) << config.dump();
  EXPECT_FALSE(config["pipeline"]["pipe_partitioned"].get<bool>());
  EXPECT_FALSE(config["pipeline"]["grad_partitioned"].get<bool>());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace parplan
