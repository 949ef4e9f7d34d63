// Transformer Engine's LayerNormLinear under fp8 (JobSpec::te_layernorm_linear,
// cost/compute_time.cpp): under delayed scaling the norm before the QKV and
// FC1 GEMMs writes their fp8 input itself (no cast kernel; one byte less
// written, an fp8 transpose of 1 + 1 bytes for the weight gradient); under
// current scaling every other GEMM input and every output gradient takes an
// amax pass (one 16-bit read) before its cast; and sequence parallelism
// gathers fp8. Byte counts from the layer's
// shapes: Llama 3 8B, h 4096, q 4096, kv 2 x 1024, FFN 14336 gated.
#include <gtest/gtest.h>

#include "cost/compute_time.h"
#include "cost/step_internal.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/tune_support.h"

namespace parplan {
namespace te_layernorm_linear_fp8_test {

constexpr double kTokens = 8192;
constexpr double kHidden = 4096, kQ = 4096, kKv = 2048, kFfn = 14336;

LayerComputeTimes times(bool te, bool current, bool fp8 = true, int tp = 1, bool is_moe = false) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  LayerShape shape;
  shape.tokens = kTokens;
  shape.seq = kTokens;
  shape.tp = tp;
  shape.sp = tp > 1;
  shape.fp8 = fp8;
  shape.te_layernorm_linear = te;
  shape.fp8_current_scaling = current;
  shape.is_moe = is_moe;
  const double peak = fp8 ? cluster.device.peak_fp8_flops_per_s : cluster.device.peak_bf16_flops_per_s;
  return layer_compute_times(model, cluster.device, peak, shape);
}

double seconds(double bytes) { return memory_bound_s(load_cluster("dgx-h100").device, bytes); }

TEST(TeLayerNormLinearFp8, OnlyMegatronBuildsLayerNormLinear) {
  EXPECT_TRUE(test::recipe_job("megatron", 8, 8, 8192).te_layernorm_linear);
  for (const char* engine : {"torchtitan", "deepspeed", "megatron-deepspeed"})
    EXPECT_FALSE(test::recipe_job(engine, 8, 8, 8192).te_layernorm_linear) << engine;
}

TEST(TeLayerNormLinearFp8, DelayedScalingDropsTheNormFedCasts) {
  const LayerComputeTimes plain = times(false, false), te = times(true, false);
  // Two norm-fed inputs of m x h: a cast of 4 bytes per element each gone,
  // the norm's output write 1 byte less, an fp8 transpose (2 bytes) added;
  // without sequence parallelism the transpose runs in the forward (TE 2.x).
  const double norm_fed = 2.0 * kTokens * kHidden;
  EXPECT_NEAR(plain.forward_s - te.forward_s, seconds((4.0 + 1.0 - 2.0) * norm_fed), 1e-12);
  EXPECT_NEAR(plain.backward_s, te.backward_s, 1e-12);
  // The GEMMs are the same.
  EXPECT_DOUBLE_EQ(plain.gemm_forward_s, te.gemm_forward_s);
}

TEST(TeLayerNormLinearFp8, SequenceParallelTransposesInTheBackward) {
  const LayerComputeTimes plain = times(false, false, true, 2), te = times(true, false, true, 2);
  // Under sp the norm runs on the rank's m / tp tokens, its gathered fp8
  // output (m tokens) is transposed in the backward; the row-parallel
  // output gradients (projection, FC2: m x h each) are cast on the shard
  // (3 bytes on m / tp tokens) and transposed gathered (2 bytes on m),
  // not cast-transposed whole (4 bytes on m).
  const double gathered = 2.0 * kTokens * kHidden;
  EXPECT_NEAR(plain.forward_s - te.forward_s, seconds(4.0 * gathered + 1.0 * gathered / 2.0), 1e-12);
  EXPECT_NEAR(te.backward_s - plain.backward_s, seconds(2.0 * gathered + (3.0 / 2.0 + 2.0 - 4.0) * gathered),
              1e-12);
}

TEST(TeLayerNormLinearFp8, CurrentScalingReadsEachOtherTensorForItsAmax) {
  const LayerComputeTimes plain = times(false, true), te = times(true, true);
  // Forward: the attention output projection's and FC2's inputs; the norm
  // computes the QKV and FC1 inputs' amax itself.
  EXPECT_NEAR(te.forward_s - plain.forward_s, seconds(2.0 * kTokens * (kQ + kFfn)), 1e-12);
  // Backward: every GEMM's output gradient (QKV, projection, FC1 gate and
  // up, FC2).
  EXPECT_NEAR(te.backward_s - plain.backward_s,
              seconds(2.0 * kTokens * (kQ + kKv + kHidden + 2.0 * kFfn + kHidden)), 1e-12);
}

TEST(TeLayerNormLinearFp8, MoeLayersFuseOnlyTheAttentionNorm) {
  // An MoE layer's FFN is the experts' (cost/moe.h): only the QKV input
  // comes out of a LayerNormLinear.
  const LayerComputeTimes plain = times(false, false, true, 1, true), te = times(true, false, true, 1, true);
  EXPECT_NEAR(plain.forward_s - te.forward_s, seconds(3.0 * kTokens * kHidden), 1e-12);
}

TEST(TeLayerNormLinearFp8, SixteenBitLayersAreUntouched) {
  for (bool current : {false, true}) {
    const LayerComputeTimes plain = times(false, current, false), te = times(true, current, false);
    EXPECT_DOUBLE_EQ(plain.forward_s, te.forward_s);
    EXPECT_DOUBLE_EQ(plain.backward_s, te.backward_s);
  }
}

// Under sequence parallelism Transformer Engine gathers fp8 (the norm's fp8
// output forward, the cast output gradient backward) and reduce-scatters 16
// bits; without it tp all-reduces 16 bits.
detail::LayerComm tp_comm(Precision precision, bool sp, bool fp8_gather) {
  const ModelSpec model = load_model("llama3-70b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job = test::recipe_job("megatron", 8, 8, 8192);
  job.precision = precision;
  job.fp8_tp_all_gather = fp8_gather;
  // Tensor parallelism over one node, one micro-batch (dp and mbs 1, the
  // defaults), distributed optimizer.
  ParallelConfig c;
  c.tp = 8;
  c.sp = sp;
  c.zero = 1;
  c.gbs = 8;
  return detail::per_layer_costs(model, cluster, job, c).comm;
}

TEST(TeLayerNormLinearFp8, SequenceParallelGathersMoveFp8) {
  EXPECT_TRUE(test::recipe_job("megatron", 8, 8, 8192).fp8_tp_all_gather);
  const detail::LayerComm fp8 = tp_comm(Precision::kFp8, true, true),
                          wide = tp_comm(Precision::kFp8, true, false);
  EXPECT_LT(fp8.tp_forward_s, wide.tp_forward_s);
  EXPECT_LT(fp8.tp_backward_s, wide.tp_backward_s);
  // The reduce-scatters keep their 16 bits: more than half the traffic's
  // time is left.
  EXPECT_GT(fp8.tp_forward_s, 0.5 * wide.tp_forward_s);
  // All-reduce without sequence parallelism, and 16-bit runs, are as before.
  const detail::LayerComm ar = tp_comm(Precision::kFp8, false, true),
                          ar_wide = tp_comm(Precision::kFp8, false, false);
  EXPECT_DOUBLE_EQ(ar.tp_forward_s, ar_wide.tp_forward_s);
  const detail::LayerComm bf16 = tp_comm(Precision::kBf16, true, true),
                          bf16_wide = tp_comm(Precision::kBf16, true, false);
  EXPECT_DOUBLE_EQ(bf16.tp_forward_s, bf16_wide.tp_forward_s);
}

}  // namespace te_layernorm_linear_fp8_test
}  // namespace parplan
