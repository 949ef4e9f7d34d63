// What selective recomputation replays in the backward pass, per layer:
// Megatron's attention core, or under torchtitan's op-level policy every
// forward op whose output it does not save (the policy's save list: mm,
// SDPA, amax; every second mm not kept).
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace parplan
