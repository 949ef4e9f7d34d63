// Recipe inputs of the memory model, each against its formula: the
// gradient-reduction dtype, Transformer Engine's fp8 GEMM inputs, the loss
// kernel, and ZeRO-2 beside a pipeline (an engine question, not a rule).
#include <gtest/gtest.h>

#include "cost/config_rules.h"
#include "cost/memory.h"
#include "cost/step_cost.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

ParallelConfig cp2_recipe() {
  ParallelConfig c;
  c.tp = 1, c.pp = 1, c.cp = 2, c.dp = 4, c.mbs = 1, c.gbs = 128, c.zero = 1;
  return c;
}

JobSpec job_8x8192() {
  JobSpec job;
  job.gpus = 8, job.gbs = 128, job.seq = 8192;
  return job;
}

TEST(GradReduceDtype, Bf16HalvesTheGradientBytesPerParameter) {
  for (int zero = 0; zero <= 3; ++zero) {
    EXPECT_DOUBLE_EQ(gradient_bytes_per_param(Precision::kBf16, zero, GradReduceDtype::kFp32), 4.0);
    EXPECT_DOUBLE_EQ(gradient_bytes_per_param(Precision::kBf16, zero, GradReduceDtype::kBf16), 2.0);
  }
  // The engine default is unchanged: Megatron's fp32 main grads under bf16.
  EXPECT_DOUBLE_EQ(gradient_bytes_per_param(Precision::kBf16, 1), 4.0);
}

TEST(GradReduceDtype, Bf16HalvesGradientMemoryAndDataParallelTraffic) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec fp32 = job_8x8192(), bf16 = job_8x8192();
  fp32.grad_reduce = GradReduceDtype::kFp32;
  bf16.grad_reduce = GradReduceDtype::kBf16;
  ParallelConfig c = cp2_recipe();
  const MemoryBreakdown m32 = estimate_memory(model, cluster, fp32, c);
  const MemoryBreakdown m16 = estimate_memory(model, cluster, bf16, c);
  EXPECT_DOUBLE_EQ(m16.grads_bytes, 0.5 * m32.grads_bytes);
  EXPECT_DOUBLE_EQ(m32.peak_bytes - m16.peak_bytes, m16.grads_bytes);
  // Plain data parallelism moves only gradients: the all-reduce halves.
  c.zero = 0;
  const CostReport t32 = estimate_cost(model, cluster, fp32, c);
  const CostReport t16 = estimate_cost(model, cluster, bf16, c);
  double bytes32 = 0, bytes16 = 0;
  for (int i = 0; i < TierTraffic::kMaxTiers; ++i) {
    bytes32 += t32.dp_traffic.bytes[static_cast<std::size_t>(i)];
    bytes16 += t16.dp_traffic.bytes[static_cast<std::size_t>(i)];
  }
  ASSERT_GT(bytes32, 0);
  EXPECT_NEAR(bytes16 / bytes32, 0.5, 1e-12);
}

TEST(Fp8Activations, GemmInputsAreKeptAsTheirFp8Cast) {
  const ModelSpec model = load_model("llama3-8b");
  ActivationShape bf16;
  bf16.seq = 4096, bf16.micro_batch = 1;
  ActivationShape fp8 = bf16;
  fp8.fp8 = true;
  const double tokens = 4096;
  const double h = model.hidden, f = model.ffn_hidden, q = double(model.heads) * model.head_dim;
  // QKV and FC1 inputs 2 -> 1 byte (h each), FC2 input 2 -> 1 (f), and one
  // more byte for the attention output's fp8 cast (q).
  EXPECT_NEAR(layer_activation_bytes(model, bf16) - layer_activation_bytes(model, fp8),
              tokens * (2 * h + f - q), 1e-6);
}

TEST(LossKernel, EagerFp32UpcastHoldsThreeTimesTheFusedLogits) {
  const ModelSpec model = load_model("llama3-8b");
  ActivationShape fused;
  fused.seq = 8192, fused.micro_batch = 1, fused.tp = 2;
  ActivationShape eager = fused;
  eager.cross_entropy = CrossEntropy::kEager;
  EXPECT_DOUBLE_EQ(logits_bytes(model, fused), 4.0 * 8192 * model.vocab / 2);
  EXPECT_DOUBLE_EQ(logits_bytes(model, eager), 12.0 * 8192 * model.vocab / 2);
}

TEST(ZeroWithPipeline, TheEngineTableDecides) {
  const ModelSpec model = load_model("llama3-8b");
  JobSpec job = job_8x8192();
  ParallelConfig c;
  c.tp = 1, c.pp = 2, c.dp = 4, c.mbs = 1, c.gbs = 128, c.zero = 2;
  EXPECT_FALSE(validate_config(model, job, c)) << describe(validate_config(model, job, c));
  EXPECT_NE(capability_problem(engine_capabilities(Engine::kMegatron), model, job, c), nullptr);
  EXPECT_NE(capability_problem(engine_capabilities(Engine::kDeepSpeed), model, job, c), nullptr);
  EXPECT_EQ(capability_problem(engine_capabilities(Engine::kTorchtitan), model, job, c), nullptr);
}

TEST(ZeroWithPipeline, Zero2ShardsGradientsAndReducesEveryMicroBatch) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job = job_8x8192();
  job.gpus = 16;
  job.grad_reduce = GradReduceDtype::kBf16;
  // DeepSpeed's ZeRO-2 rule (cost/grad_sync_schedule.h); with a pipeline and
  // no engine named the schedule is torchtitan's, once per step.
  JobSpec deepspeed_z2 = job;
  deepspeed_z2.grad_sync = GradSyncSchedule::kEveryMicroBatch;
  ParallelConfig z1;
  z1.tp = 1, z1.pp = 2, z1.dp = 8, z1.mbs = 1, z1.gbs = 128, z1.zero = 1;
  ParallelConfig z2 = z1;
  z2.zero = 2;
  const CostReport c1 = estimate_cost(model, cluster, job, z1);
  const CostReport c2 = estimate_cost(model, cluster, deepspeed_z2, z2);
  // Gradients sharded over dp = 8.
  EXPECT_NEAR(c2.memory.grads_bytes, c1.memory.grads_bytes / 8, 1e-6 * c1.memory.grads_bytes);
  // Traffic: ZeRO-1 reduce-scatters once and gathers once per step (2
  // units); ZeRO-2 reduce-scatters each of the m micro-batches (m + 1).
  double b1 = 0, b2 = 0;
  for (int i = 0; i < TierTraffic::kMaxTiers; ++i) {
    b1 += c1.dp_traffic.bytes[static_cast<std::size_t>(i)];
    b2 += c2.dp_traffic.bytes[static_cast<std::size_t>(i)];
  }
  const int m = z1.micro_batches();
  ASSERT_GT(b1, 0);
  EXPECT_NEAR(b2 / b1, (m + 1) / 2.0, 1e-9);
  // Reduced once per step, ZeRO-2 moves what ZeRO-1 does.
  const CostReport once = estimate_cost(model, cluster, job, z2);
  double b_once = 0;
  for (int i = 0; i < TierTraffic::kMaxTiers; ++i)
    b_once += once.dp_traffic.bytes[static_cast<std::size_t>(i)];
  EXPECT_NEAR(b_once / b1, 1.0, 1e-9);
}

TEST(UnevenStages, TorchtitanTakesLayersAwayFromTheEdgeStagesOnly) {
  const ModelSpec model = load_model("llama3-405b");
  JobSpec job;
  job.gpus = 8192, job.gbs = 2048, job.seq = 8192;
  ParallelConfig c;
  c.tp = 8, c.sp = true, c.pp = 16, c.dp = 64, c.mbs = 1, c.gbs = 2048, c.zero = 2;
  c.first_stage_layers = 7, c.last_stage_layers = 7;
  const EngineCapabilities& titan = engine_capabilities(Engine::kTorchtitan);
  EXPECT_EQ(capability_problem(titan, model, job, c), nullptr);
  c.first_stage_layers = 14, c.last_stage_layers = 0;  // 112 / 14 middle stages = 8 < 14
  c.last_stage_layers = 0;
  EXPECT_NE(capability_problem(titan, model, job, c), nullptr);
}

}  // namespace
}  // namespace parplan
