// DeepSpeed's ZeRO-0/1 gradient handling as its code runs it (cost/
// grad_accumulation.h, cost/grad_sync_schedule.h): the passes that sum
// micro-batch gradients outside the GEMM, the BF16_Optimizer's ZeRO-1-like
// partition under bf16 without ZeRO, the pipeline engine's reduction after
// the last backward, and the tied embedding's all-reduce between the first
// and the last pipeline stage.
#include <gtest/gtest.h>

#include <vector>

#include "cost/collectives.h"
#include "cost/grad_accumulation.h"
#include "cost/grad_sync_schedule.h"
#include "cost/memory.h"
#include "cost/step_cost.h"
#include "cost/step_internal.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/tune_support.h"

namespace parplan {
namespace deepspeed_grad_passes_test {

TEST(GradAccumulationBytes, FollowDeepSpeedsOptimizers) {
  const auto bytes = [](GradAccumulation a, Precision p, int zero, int m) {
    return grad_accumulation_bytes_per_param(a, p, zero, m);
  };
  for (int zero : {0, 1, 2, 3})
    for (int m : {1, 8}) EXPECT_EQ(bytes(GradAccumulation::kFused, Precision::kBf16, zero, m), 0.0);
  // BF16_Optimizer.update_hp_grads: lp.grad.to(float32) reads 2 bytes and
  // writes 4, hp_grad.add_ reads 4 + 4 and writes 4, after every backward.
  EXPECT_EQ(bytes(GradAccumulation::kDeepSpeed, Precision::kBf16, 0, 1), 18.0);
  EXPECT_EQ(bytes(GradAccumulation::kDeepSpeed, Precision::kBf16, 0, 8), 18.0);
  // Autograd's in-place 16-bit add (2 + 2 read, 2 written) on m - 1 of m.
  EXPECT_EQ(bytes(GradAccumulation::kDeepSpeed, Precision::kFp16, 0, 4), 6.0 * 3 / 4);
  EXPECT_EQ(bytes(GradAccumulation::kDeepSpeed, Precision::kBf16, 1, 8), 6.0 * 7 / 8);
  EXPECT_EQ(bytes(GradAccumulation::kDeepSpeed, Precision::kFp16, 1, 1), 0.0);
  // ZeRO-2/3 reduce every micro-batch into their partitions.
  EXPECT_EQ(bytes(GradAccumulation::kDeepSpeed, Precision::kBf16, 2, 8), 0.0);
  EXPECT_EQ(bytes(GradAccumulation::kDeepSpeed, Precision::kBf16, 3, 8), 0.0);
}

TEST(DeepSpeedGradDtype, ZeroOneReducesInBf16AndTheBf16OptimizerInFp32) {
  JobSpec job;
  job.grad_accumulation = GradAccumulation::kDeepSpeed;
  EXPECT_EQ(job.grad_reduce_for(1), GradReduceDtype::kBf16);
  EXPECT_EQ(job.grad_reduce_for(0), GradReduceDtype::kEngineDefault);
  EXPECT_EQ(gradient_bytes_per_param(Precision::kBf16, 0, job.grad_reduce_for(0)), 4.0);
  EXPECT_EQ(gradient_bytes_per_param(Precision::kBf16, 1, job.grad_reduce_for(1)), 2.0);
  // A dtype the user gives stands.
  job.grad_reduce = GradReduceDtype::kFp32;
  EXPECT_EQ(job.grad_reduce_for(1), GradReduceDtype::kFp32);
  // Megatron-LM's main_grad stays fp32 under bf16.
  JobSpec megatron;
  EXPECT_EQ(gradient_bytes_per_param(Precision::kBf16, 1, megatron.grad_reduce_for(1)), 4.0);
}

TEST(DeepSpeedGradSync, ZeroZeroAndThePipelineEngineReduceAfterTheLastBackward) {
  const auto plan = [](int zero, int pp) {
    return grad_sync_plan(GradSyncSchedule::kDeepSpeed, zero, pp, 8);
  };
  for (int pp : {1, 4}) {
    EXPECT_EQ(plan(0, pp).reductions, 1);
    EXPECT_EQ(plan(0, pp).window, GradSyncWindow::kNone);
  }
  EXPECT_EQ(plan(1, 4).window, GradSyncWindow::kNone);
  EXPECT_EQ(plan(1, 1).reductions, 1);
  EXPECT_EQ(plan(1, 1).window, GradSyncWindow::kOwnBackward);
  EXPECT_EQ(plan(2, 1).reductions, 8);
  EXPECT_EQ(plan(2, 1).window, GradSyncWindow::kOwnBackward);
}

JobSpec deepspeed_job(const char* engine, Precision precision) {
  JobSpec job = test::recipe_job(engine, 64, 256, 2048);
  job.precision = precision;
  return job;
}

ParallelConfig pipelined(int zero) {
  ParallelConfig c;
  c.tp = 4;
  c.pp = 4;
  c.dp = 4;
  c.mbs = 1;
  c.gbs = 256;
  c.zero = zero;
  c.recompute = Recompute::kFull;
  return c;
}

TEST(DeepSpeedBf16Optimizer, PartitionsOptimizerStatesAsZeroOneDoes) {
  EXPECT_EQ(deepspeed_job("megatron-deepspeed", Precision::kBf16).optimizer_shard_stage(0), 1);
  EXPECT_EQ(deepspeed_job("deepspeed", Precision::kBf16).optimizer_shard_stage(0), 1);
  EXPECT_EQ(deepspeed_job("megatron-deepspeed", Precision::kFp16).optimizer_shard_stage(0), 0);
  EXPECT_EQ(deepspeed_job("megatron", Precision::kBf16).optimizer_shard_stage(0), 0);
  const ModelSpec model = load_model("gpt3-175b");
  const ClusterSpec cluster = load_cluster("dgx-a100");
  const JobSpec job = deepspeed_job("megatron-deepspeed", Precision::kBf16);
  const MemoryBreakdown z0 = estimate_cost(model, cluster, job, pipelined(0)).memory;
  const MemoryBreakdown z1 = estimate_cost(model, cluster, job, pipelined(1)).memory;
  EXPECT_DOUBLE_EQ(z0.optimizer_bytes, z1.optimizer_bytes);
  // Unpartitioned gradients: the BF16_Optimizer's fp32 ones, ZeRO-1's bf16.
  EXPECT_DOUBLE_EQ(z0.grads_bytes, 2 * z0.params_bytes);
  EXPECT_DOUBLE_EQ(z1.grads_bytes, z1.params_bytes);
  const MemoryBreakdown megatron_z0 =
      estimate_cost(model, cluster, deepspeed_job("megatron", Precision::kBf16), pipelined(0)).memory;
  EXPECT_NEAR(megatron_z0.optimizer_bytes, 4 * z0.optimizer_bytes, 1e-6 * megatron_z0.optimizer_bytes);
}

// Summing gradients in passes of their own, and reducing them where nothing
// hides the exchange, never shortens a step.
TEST(DeepSpeedGradPasses, NeverShortenAStep) {
  const ModelSpec model = load_model("gpt3-175b");
  const ClusterSpec cluster = load_cluster("dgx-a100");
  for (Precision precision : {Precision::kBf16, Precision::kFp16}) {
    const JobSpec deepspeed = deepspeed_job("megatron-deepspeed", precision);
    for (int zero : {0, 1}) {
      for (int gbs : {16, 256}) {
        ParallelConfig c = pipelined(zero);
        c.gbs = gbs;
        JobSpec fused = deepspeed;
        fused.grad_accumulation = GradAccumulation::kFused;
        fused.grad_sync = GradSyncSchedule::kLastMicroBatch;
        JobSpec passes = fused;
        passes.grad_accumulation = GradAccumulation::kDeepSpeed;
        const double t_fused = estimate_cost(model, cluster, fused, c).time.step_s;
        const double t_passes = estimate_cost(model, cluster, passes, c).time.step_s;
        const double t_deepspeed = estimate_cost(model, cluster, deepspeed, c).time.step_s;
        if (zero == 0 && precision == Precision::kBf16) {
          EXPECT_GT(t_passes, t_fused) << gbs;
        } else {
          EXPECT_GE(t_passes, t_fused) << gbs;
        }
        EXPECT_GE(t_deepspeed, t_passes * (1 - 1e-12)) << gbs;
      }
    }
  }
}

TEST(TiedEmbeddingReduce, OnlyATiedHeadSplitOverStagesPaysIt) {
  const ClusterSpec cluster = load_cluster("dgx-a100");
  const JobSpec job = deepspeed_job("megatron", Precision::kBf16);
  const ModelSpec gpt = load_model("gpt3-175b");
  ParallelConfig c = pipelined(1);
  const double tied = detail::tied_embedding_reduce_s(gpt, cluster, job, c);
  // The first and the last stage's ranks are in different nodes: the
  // embedding's fp32 gradient (Megatron's main_grad under bf16) crosses
  // InfiniBand once as a two-rank ring all-reduce.
  const double bytes = double(gpt.vocab) * gpt.hidden / c.tp * 4.0;
  EXPECT_DOUBLE_EQ(tied, all_reduce_s(cluster, group_span(cluster, 2, (c.pp - 1) * c.tp * c.dp), bytes));
  EXPECT_GT(tied, bytes / (cluster.tiers[1].bandwidth_bytes_per_s));
  ParallelConfig one_stage = c;
  one_stage.pp = 1;
  one_stage.dp = 16;
  EXPECT_EQ(detail::tied_embedding_reduce_s(gpt, cluster, job, one_stage), 0.0);
  EXPECT_EQ(detail::tied_embedding_reduce_s(load_model("llama3-70b"), cluster, job, c), 0.0);
  // Inside one node (pp 2 of tp 4: both stages on 8 GPUs) it is NVLink's.
  ParallelConfig in_node = c;
  in_node.pp = 2;
  in_node.dp = 1;
  in_node.gbs = 64;
  const double nvlink = detail::tied_embedding_reduce_s(gpt, cluster, job, in_node);
  EXPECT_GT(nvlink, 0.0);
  EXPECT_LT(nvlink, tied / 4);
}

}  // namespace deepspeed_grad_passes_test
}  // namespace parplan
