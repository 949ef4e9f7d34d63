// A Megatron-format log is costed under the engine that wrote it: Megatron-LM
// (cuDNN attention unless --attention-backend flash, gradients with the last
// micro-batch) or Megatron-DeepSpeed (`deepspeed True`: its ZeRO stage and
// FlashAttention-2). A log written for a plan under either recipe reads back
// the step it was written with.
#include <gtest/gtest.h>

#include <string>

#include "cost/step_cost.h"
#include "solvers/fit_run.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/megatron_log_reader.h"
#include "src/io/model_loader.h"
#include "src/tune/simulated_log.h"

namespace parplan {
namespace {

struct DensePlan {
  ModelSpec model = load_model("llama3-8b");
  ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job;
  ParallelConfig config;
  explicit DensePlan(const char* engine, int zero) {
    job.gpus = 16, job.gbs = 128, job.seq = 4096;
    apply_engine_recipe(engine, job);
    config.tp = 2, config.pp = 1, config.cp = 1, config.dp = 8, config.mbs = 2, config.gbs = 128;
    config.zero = zero, config.sp = true;
  }
};

FitRun round_trip(const DensePlan& p, Engine engine, double& written_step_s) {
  written_step_s = estimate_cost(p.model, p.cluster, p.job, p.config).time.step_s;
  const std::string log = simulated_megatron_log(p.model, p.job, p.config, written_step_s, 50, 10, engine);
  return parse_megatron_log(log, "trial.log", p.cluster);
}

TEST(MegatronLogEngine, MegatronLogIsCostedWithMegatronsRecipe) {
  const DensePlan p("megatron", 1);
  double step_s = 0;
  const FitRun run = round_trip(p, Engine::kMegatron, step_s);
  EXPECT_EQ(run.job.attention_kernel, AttentionKernel::kCudnn);
  EXPECT_EQ(run.job.grad_sync, p.job.grad_sync);
  EXPECT_EQ(run.config.zero, 1);
  EXPECT_NEAR(predict_run(run, p.cluster).step_s / step_s, 1.0, 1e-9);
}

TEST(MegatronLogEngine, MegatronDeepSpeedLogIsCostedWithItsOwnRecipe) {
  const DensePlan p("megatron-deepspeed", 2);
  double step_s = 0;
  const FitRun run = round_trip(p, Engine::kMegatronDeepSpeed, step_s);
  EXPECT_EQ(run.job.attention_kernel, AttentionKernel::kFlash2);
  EXPECT_EQ(run.job.partition_activations, p.job.partition_activations);
  EXPECT_EQ(run.config.zero, 2);
  EXPECT_NEAR(predict_run(run, p.cluster).step_s / step_s, 1.0, 1e-9);
}

TEST(MegatronLogEngine, UnevenFirstAndLastStagesReadBack) {
  // Megatron's --decoder-first/last-pipeline-num-layers print as
  // decoder_first/last_pipeline_num_layers: 32 layers over pp 4 as 6 + 9 +
  // 9 + 8 (a plan's uneven split, as tune's trials run it).
  DensePlan p("megatron", 1);
  p.config.pp = 4, p.config.dp = 2, p.config.first_stage_layers = 6, p.config.last_stage_layers = 8;
  double step_s = 0;
  const FitRun run = round_trip(p, Engine::kMegatron, step_s);
  EXPECT_EQ(run.config.first_stage_layers, 6);
  EXPECT_EQ(run.config.last_stage_layers, 8);
  EXPECT_NEAR(predict_run(run, p.cluster).step_s / step_s, 1.0, 1e-9);
}

// BigScience's Megatron-DeepSpeed fork (BLOOM's training logs) prints the
// iteration time in seconds: "elapsed time per iteration (s): 104.70".
TEST(MegatronLogEngine, AnElapsedTimeInSecondsReadsAsTheSameStep) {
  const DensePlan p("megatron-deepspeed", 1);
  double step_s = 0;
  const FitRun ms_run = round_trip(p, Engine::kMegatronDeepSpeed, step_s);
  std::string log =
      simulated_megatron_log(p.model, p.job, p.config, step_s, 50, 10, Engine::kMegatronDeepSpeed);
  const std::string key = "elapsed time per iteration (ms): ";
  std::string seconds_log;
  std::size_t at = 0, lines = 0;
  for (std::size_t hit; (hit = log.find(key, at)) != std::string::npos;
       at = log.find_first_of(" |", hit + key.size())) {
    const std::size_t value_at = hit + key.size();
    const std::size_t value_end = log.find_first_of(" |", value_at);
    const double ms = std::stod(log.substr(value_at, value_end - value_at));
    seconds_log += log.substr(at, hit - at) + "elapsed time per iteration (s): " + std::to_string(ms / 1e3);
    ++lines;
  }
  seconds_log += log.substr(at);
  ASSERT_GT(lines, 0u);
  ASSERT_EQ(seconds_log.find(key), std::string::npos);
  const FitRun s_run = parse_megatron_log(seconds_log, "bloom-style.log", p.cluster);
  EXPECT_NEAR(s_run.measured_step_s / ms_run.measured_step_s, 1.0, 1e-5);
  EXPECT_NEAR(s_run.measured_step_s / step_s, 1.0, 1e-4);
}

// --attention-backend flash forces Transformer Engine's FlashAttention:
// costed as FlashAttention-2, and slower than cuDNN's on an H100.
TEST(MegatronLogEngine, FlashBackendReadsAsFlashAttention2) {
  DensePlan p("megatron", 1);
  p.job.attention_kernel = AttentionKernel::kFlash2;
  double step_s = 0;
  const FitRun run = round_trip(p, Engine::kMegatron, step_s);
  EXPECT_EQ(run.job.attention_kernel, AttentionKernel::kFlash2);
  EXPECT_NEAR(predict_run(run, p.cluster).step_s / step_s, 1.0, 1e-9);
  const DensePlan cudnn("megatron", 1);
  EXPECT_GT(step_s, estimate_cost(cudnn.model, cudnn.cluster, cudnn.job, cudnn.config).time.step_s);
}

// The gradient dtype is read back as validate_args printed it
// (accumulate_allreduce_grads_in_fp32): a bf16-reduced run costs 2 bytes per
// gradient, Megatron's default under --bf16 4, and the step is the one written.
TEST(MegatronLogEngine, GradientDtypeIsReadBack) {
  for (const GradReduceDtype reduce : {GradReduceDtype::kBf16, GradReduceDtype::kFp32}) {
    DensePlan p("megatron", 1);
    p.job.grad_reduce = reduce;
    double step_s = 0;
    const FitRun run = round_trip(p, Engine::kMegatron, step_s);
    EXPECT_EQ(run.job.grad_reduce, reduce);
    EXPECT_NEAR(predict_run(run, p.cluster).step_s / step_s, 1.0, 1e-9);
  }
  // Left at the engine's default under --bf16 with the distributed optimizer:
  // fp32 main grads, read as such.
  const DensePlan p("megatron", 1);
  double step_s = 0;
  EXPECT_EQ(round_trip(p, Engine::kMegatron, step_s).job.grad_reduce, GradReduceDtype::kFp32);
}

// A Megatron-DeepSpeed run with ZeRO++ prints it only in DeepSpeed's
// `zero_config` line (zero_hpz_partition_size, zero_quantized_*): read back,
// the run is costed with its secondary partition and quantized collectives,
// not as stock ZeRO-3 (which times it differently).
TEST(MegatronLogEngine, DeepSpeedZeroPlusPlusReadsBack) {
  DensePlan p("megatron-deepspeed", 3);
  p.config.tp = 1, p.config.sp = false, p.config.dp = 16, p.config.mbs = 1;
  for (const bool quantized : {false, true}) {
    p.config.hpz_ranks = 8, p.config.qwz = p.config.qgz = quantized;
    double step_s = 0;
    const FitRun run = round_trip(p, Engine::kMegatronDeepSpeed, step_s);
    EXPECT_EQ(run.config.hpz_ranks, 8);
    EXPECT_EQ(run.config.qwz, quantized);
    EXPECT_EQ(run.config.qgz, quantized);
    EXPECT_NEAR(predict_run(run, p.cluster).step_s / step_s, 1.0, 1e-9);
    ParallelConfig stock = p.config;
    stock.hpz_ranks = 1, stock.qwz = stock.qgz = false;
    EXPECT_NE(estimate_cost(p.model, p.cluster, p.job, stock).time.step_s, step_s);
  }
}

TEST(MegatronLogEngine, ZeroPlusPlusOnAStageBelowThreeIsRefused) {
  const DensePlan p("megatron-deepspeed", 2);
  const double step_s = estimate_cost(p.model, p.cluster, p.job, p.config).time.step_s;
  std::string log =
      simulated_megatron_log(p.model, p.job, p.config, step_s, 50, 10, Engine::kMegatronDeepSpeed);
  const std::string key = "zero_hpz_partition_size=1";
  const std::size_t at = log.find(key);
  ASSERT_NE(at, std::string::npos);
  log.replace(at, key.size(), "zero_hpz_partition_size=8");
  try {
    parse_megatron_log(log, "trial.log", p.cluster);
    FAIL() << "a ZeRO++ partition on ZeRO-2 was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("zero_stage is 2"), std::string::npos) << e.what();
  }
}
}  // namespace
}  // namespace parplan
