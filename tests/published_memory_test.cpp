// Published configurations that ran must fit with the default headroom, and
// a published memory measurement must not be under-predicted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cost/memory.h"
#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/cli_support.h"
#include "tests/data_parallel_case.h"
#include "tests/kernel_csv.h"

namespace parplan {
namespace {

using test::CliRun;
using test::run_cli;

constexpr double kDefaultHeadroom = 0.02;  // --memory-headroom's default (docs/cost-model-engines.md)

void expect_fits_with_default_headroom(const std::string& args) {
  const CliRun run = run_cli(args + " --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  const ClusterSpec cluster = load_cluster("dgx-h100");
  EXPECT_TRUE(j["memory"]["fits"].get<bool>()) << j["memory"].dump();
  EXPECT_LE(j["memory"]["peak_bytes"].get<double>(),
            (1.0 - kDefaultHeadroom) * cluster.device.usable_hbm_bytes())
      << j["memory"].dump();
}

// NVIDIA's Llama 3 8B recipe (NeMo llama3_8b: tp 1, pp 1, cp 2, mbs 1,
// gbs 128, seq 8192, bf16) reduces gradients in bf16
// (NeMo-Framework-Launcher examples/training/llama/h100/llama3_8b_bf16.sh:
// optim.grad_sync_dtype=bf16); it ran on one 8-GPU H100 node.
TEST(PublishedConfigs, Llama3_8bRecipeWithBf16ReductionFits) {
  expect_fits_with_default_headroom(
      "estimate --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 128 --seq 8192 --tp 1 --pp 1 --cp 2 "
      "--mbs 1 --zero 1 --grad-reduce-dtype bf16");
}

// Llama 3 405B as Meta trained it (Dubey et al. 2024, sec. 3.3.2 and
// Table 4): 8192 H100, tp 8, pp 16, dp 64, seq 8192, 16M-token batches
// (gbs 2048), 126 layers with one layer fewer on the first and the last
// stage (7 + 14 x 8 + 7), FSDP sharding optimizer states and gradients
// (ZeRO-2) beside the pipeline; "FP32 gradient accumulation ... and
// reduce-scatter gradients in FP32 across data parallel workers in FSDP"
// (sec. 3.3.2, numerical stability).
// Llama 3 405B as Meta ran it (Dubey et al. 2024, sec. 3.3.2 and Table 4:
// 8192 H100 80 GB, tp 8, pp 16 with one layer fewer on the first and last
// stages, dp 64, seq 8192, no activation checkpointing, FSDP sharding
// optimizer states and gradients, "FP32 gradient accumulation during
// backward computation over multiple micro-batches", synchronised once per
// step). The run fitted; parplan predicts 3.5 % over the usable HBM: a known
// miss (docs/cost-model-engines.md, "Llama 3 405B as Meta ran it"), bounded here so
// that it cannot grow unnoticed.
TEST(PublishedConfigs, Llama3_405bAsMetaRanItIsAKnownSmallMiss) {
  const CliRun run = run_cli(
      "estimate --model llama3-405b --cluster dgx-h100 --nodes 1024 --gbs 2048 --seq 8192 --tp 8 --sp --pp "
      "16 "
      "--first-stage-layers 7 --last-stage-layers 7 --zero 2 --grad-reduce-dtype fp32 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto memory = nlohmann::json::parse(run.out)["memory"];
  const double usable = load_cluster("dgx-h100").device.usable_hbm_bytes();
  EXPECT_LT(memory["peak_bytes"].get<double>(), 1.05 * usable) << memory.dump();
  // Once-per-step reduction keeps the stage's gradients unsharded in fp32
  // during accumulation, beside ZeRO-2's fp32 shard: 4 P (1 + 1/dp).
  const double stage_params = memory["params_bytes"].get<double>() / 2.0;
  EXPECT_NEAR(memory["grads_bytes"].get<double>(), 4.0 * stage_params * (1.0 + 1.0 / 64),
              1e-6 * stage_params);
}

// Reduced every micro-batch (DeepSpeed's ZeRO-2), only the shard is kept.
TEST(PublishedConfigs, ZeroTwoReducedEveryMicroBatchKeepsOnlyTheShard) {
  const CliRun run = run_cli(
      "estimate --model llama3-405b --cluster dgx-h100 --nodes 1024 --gbs 2048 --seq 8192 --tp 8 --sp --pp "
      "16 "
      "--first-stage-layers 7 --last-stage-layers 7 --zero 2 --grad-reduce-dtype fp32 "
      "--grad-sync every-micro-batch --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto memory = nlohmann::json::parse(run.out)["memory"];
  const double stage_params = memory["params_bytes"].get<double>() / 2.0;
  EXPECT_NEAR(memory["grads_bytes"].get<double>(), 4.0 * stage_params / 64, 1e-6 * stage_params);
}

TEST(PublishedConfigs, FirstAndLastStageLayersNeedAPipelineToPin) {
  const CliRun run = run_cli(
      "plan --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 128 --seq 8192 --first-stage-layers 3");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--first-stage-layers"), std::string::npos) << run.err;
  const CliRun bad = run_cli(
      "estimate --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 128 --seq 8192 --tp 1 --pp 1 "
      "--grad-reduce-dtype fp64");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--grad-reduce-dtype"), std::string::npos) << bad.err;
}

TEST(MemoryHeadroom, TenPercentOnThe8bRecipeLeavesTenPercentFree) {
  const CliRun run = run_cli(
      "plan --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 128 --seq 8192 --memory-headroom 10% "
      "--format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  const double usable = load_cluster("dgx-h100").device.usable_hbm_bytes();
  EXPECT_LE(j["memory"]["peak_bytes"].get<double>(), 0.9 * usable) << j["memory"].dump();
  EXPECT_LE(j["recommended"]["memory"]["peak_bytes"].get<double>(), 0.9 * usable);
}

// TorchTitan (Liang et al. 2024, arXiv:2410.06511, Table 1): Llama 3.1 8B,
// FSDP on 8 H100 (the 96 GB part), local batch 2, seq 8192, selective op
// activation checkpointing, no torch.compile: 82.4 GiB, the allocator's
// reserved peak (torchtitan logs max_reserved). The cost model predicts the
// allocated peak and the runtime beside it (the profile's reserved_gib);
// the reserved peak bounds the allocated one from above, and FSDP2 reserved
// at most 1.34x its allocated peak on an H100 with memory to spare
// (calibration/h100-kernels/memory_fsdp.csv), less when HBM is nearly full.
TEST(PublishedMeasurements, TorchtitanLlama31_8bFsdpWithinItsReservedPeak) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  auto [job, c] = test::data_parallel_case(8, 16, 8192, 2, 3);
  job.grad_reduce = GradReduceDtype::kFp32;
  job.cross_entropy = CrossEntropy::kEager;
  job.selective_checkpoint = SelectiveCheckpoint::kTorchtitanOps;
  c.recompute = Recompute::kSelective;
  const MemoryBreakdown m = estimate_memory(model, cluster, job, c);
  const double measured_bytes = 82.4 * 1073741824.0;
  EXPECT_LE(m.peak_bytes - cluster.device.reserved_bytes, measured_bytes);
  EXPECT_GE(m.peak_bytes * test::most_reserved_over_allocated(), measured_bytes);
  // Megatron's selective recomputation keeps about twice as much: costing
  // torchtitan's run with it over-predicts by more than a quarter.
  job.selective_checkpoint = SelectiveCheckpoint::kAttentionCore;
  EXPECT_GT(estimate_memory(model, cluster, job, c).peak_bytes, 1.25 * measured_bytes);
}

// torchtitan's op-level policy (_apply_op_sac) keeps, per token of a Llama
// block with tp 1: the block input (h), the outputs of wq (q), wv (kv), the
// attention kernel (q, plus fp32 log-sum-exp per head), w1 (f) and w2 (h).
TEST(SelectiveCheckpoint, TorchtitanOpPolicyKeepsEveryOtherMatmul) {
  const ModelSpec model = load_model("llama3-8b");
  ActivationShape shape;
  shape.seq = 8192;
  shape.micro_batch = 1;
  shape.recompute = Recompute::kSelective;
  shape.selective_checkpoint = SelectiveCheckpoint::kTorchtitanOps;
  const double h = 4096, q = 4096, kv = 1024, f = 14336, heads = 32;
  const double by_hand = 2.0 * (h + q + kv + q + f + h) + 4.0 * heads;
  EXPECT_DOUBLE_EQ(torchtitan_op_checkpoint_bytes_per_token(model, shape), by_hand);
  EXPECT_DOUBLE_EQ(layer_activation_bytes(model, shape), 8192.0 * by_hand);
}

}  // namespace
}  // namespace parplan
