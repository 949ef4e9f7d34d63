// What selective recomputation replays in the backward pass, per layer:
// Megatron's attention core, or under torchtitan's op-level policy every
// forward op whose output it does not save (the policy's save list: mm,
// SDPA, amax; every second mm not kept).
#include <gtest/gtest.h>

#include "cost/spec/parallel_config.h"
#include "cost/step_internal.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

using detail::selective_recompute_s;

LayerComputeTimes llama3_8b_layer(bool fused_elementwise) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  LayerShape shape;
  shape.tokens = 16384;
  shape.seq = 8192;
  shape.kernel = AttentionKernel::kFlash2;
  shape.fused_elementwise = fused_elementwise;
  return layer_compute_times(load_model("llama3-8b"), h100.device, h100.device.peak_bf16_flops_per_s, shape);
}

TEST(SelectiveRecomputeTime, MegatronRepeatsTheAttentionCore) {
  const ModelSpec model = load_model("llama3-8b");
  JobSpec job;
  job.selective_checkpoint = SelectiveCheckpoint::kAttentionCore;
  const LayerComputeTimes t = llama3_8b_layer(true);
  EXPECT_DOUBLE_EQ(selective_recompute_s(model, job, t, false), t.attention_forward_s);
}

// wk, wo and w3 (the 2nd, 4th and 6th mm of a Llama block) are recomputed:
// h kv + q h + h f of the block's h q + 2 h kv + q h + 3 h f weights.
TEST(SelectiveRecomputeTime, TorchtitanOpPolicyReplaysAllButTheKeptMatmulsAndAttention) {
  const ModelSpec model = load_model("llama3-8b");
  JobSpec job;
  job.selective_checkpoint = SelectiveCheckpoint::kTorchtitanOps;
  const LayerComputeTimes t = llama3_8b_layer(true);
  const double h = 4096, q = 4096, kv = 1024, f = 14336;
  const double kept = (h * q + h * kv + 2 * h * f) / (h * q + 2 * h * kv + q * h + 3 * h * f);
  EXPECT_NEAR(selective_recompute_s(model, job, t, false),
              t.forward_s - t.attention_forward_s - kept * t.gemm_forward_s, 1e-12);
}

// The element-wise kernels' outputs are not on the save list: an eager
// engine replays every one of them, so the recomputation grows by the whole
// forward difference between eager and fused element-wise kernels.
TEST(SelectiveRecomputeTime, TorchtitanOpPolicyReplaysEveryElementwiseKernel) {
  const ModelSpec model = load_model("llama3-8b");
  JobSpec job;
  job.selective_checkpoint = SelectiveCheckpoint::kTorchtitanOps;
  const LayerComputeTimes fused = llama3_8b_layer(true), eager = llama3_8b_layer(false);
  ASSERT_GT(eager.forward_s, fused.forward_s);
  EXPECT_NEAR(
      selective_recompute_s(model, job, eager, false) - selective_recompute_s(model, job, fused, false),
      eager.forward_s - fused.forward_s, 1e-12);
}

// The policy saves the reduce-scatters' outputs but not the sequence-
// parallel all-gathers': the backward gathers the attention's and the
// FFN's inputs again, half the forward's TP traffic per layer. Megatron's
// selective recomputation (the attention core) and full recomputation
// (the whole forward, its four collectives) are priced as before.
TEST(SelectiveRecomputeTime, TorchtitanOpPolicyGathersTheSequenceParallelInputsAgain) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec h100 = load_cluster("dgx-h100");
  ParallelConfig c;
  c.tp = 8;
  c.sp = true;
  c.dp = 1;
  c.mbs = 2;
  c.gbs = 2;
  c.recompute = Recompute::kSelective;
  JobSpec job;
  job.seq = 8192;
  job.selective_checkpoint = SelectiveCheckpoint::kTorchtitanOps;
  const detail::StageLoad load = detail::stage_load(model, job, c, 0);
  const detail::PerLayerCosts ops = detail::per_layer_costs(model, h100, job, c, 0);
  ASSERT_GT(ops.comm.tp_forward_s, 0.0);
  EXPECT_DOUBLE_EQ(ops.selective_tp_s, ops.comm.tp_forward_s / 2.0);
  job.selective_checkpoint = SelectiveCheckpoint::kAttentionCore;
  const detail::PerLayerCosts core = detail::per_layer_costs(model, h100, job, c, 0);
  EXPECT_EQ(core.selective_tp_s, 0.0);
  EXPECT_NEAR(detail::stage_time(c, ops, load).tp_s - detail::stage_time(c, core, load).tp_s,
              load.layers * ops.comm.tp_forward_s / 2.0, 1e-12);
  // Without sequence parallelism there is no all-gather to replay.
  c.sp = false;
  job.selective_checkpoint = SelectiveCheckpoint::kTorchtitanOps;
  EXPECT_EQ(detail::per_layer_costs(model, h100, job, c, 0).selective_tp_s, 0.0);
}

}  // namespace
}  // namespace parplan
