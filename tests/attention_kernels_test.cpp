// Attention efficiency per kernel and pass (FlashAttention-3 paper's H100
// figures) and the element-wise traffic of engines that do not fuse.
#include "cost/attention_kernels.h"

#include <gtest/gtest.h>

#include <cmath>

#include "cost/compute_time.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

// Shah et al. 2024 (arXiv 2407.08608), H100 SXM5, head dim 128: Figure 5
// causal forward, Figure 6 (non-causal) backward, Figure 5 non-causal forward.
TEST(AttentionKernels, PublishedForwardFiguresAtTheirSequenceLengths) {
  EXPECT_DOUBLE_EQ(published_attention_tflops(AttentionKernel::kFlash2, 2048, false), 298);
  EXPECT_DOUBLE_EQ(published_attention_tflops(AttentionKernel::kCudnn, 4096, false), 518);
  EXPECT_DOUBLE_EQ(published_attention_tflops(AttentionKernel::kFlash3, 16384, false), 616);
  // Between two lengths: linear in log2(seq); outside 512..16k: held flat.
  EXPECT_NEAR(published_attention_tflops(AttentionKernel::kFlash2, std::pow(2.0, 11.5), false),
              (298 + 319) / 2.0, 1e-9);
  EXPECT_DOUBLE_EQ(published_attention_tflops(AttentionKernel::kFlash3, 131072, false), 616);
  EXPECT_DOUBLE_EQ(published_attention_tflops(AttentionKernel::kFlash3, 128, false), 292);
  EXPECT_DOUBLE_EQ(published_attention_tflops(AttentionKernel::kProfile, 4096, false), 0);
}

// The same paper's head-dim-64 panels (Figure 5 (a) and (d), Figure 6 (a)):
// a kernel computing heads of 64 runs at those figures, of 96 halfway to
// the 128 ones, of 128 and wider at the 128 ones; narrower heads are never
// faster per FLOP.
TEST(AttentionKernels, NarrowHeadsRunAtTheHeadDim64Figures) {
  EXPECT_DOUBLE_EQ(published_attention_tflops(AttentionKernel::kCudnn, 4096, false, 64), 363);
  EXPECT_DOUBLE_EQ(published_attention_tflops(AttentionKernel::kFlash3, 16384, false, 64), 473);
  EXPECT_DOUBLE_EQ(published_noncausal_attention_tflops(AttentionKernel::kFlash2, 2048, true, 64), 264);
  EXPECT_DOUBLE_EQ(published_noncausal_attention_tflops(AttentionKernel::kCudnn, 1024, false, 64), 373);
  // The causal backward as at 128: the non-causal one times the forward's
  // causal share.
  EXPECT_NEAR(published_attention_tflops(AttentionKernel::kFlash3, 8192, true, 64), 472.0 * 460 / 496, 1e-9);
  EXPECT_NEAR(published_attention_tflops(AttentionKernel::kCudnn, 4096, false, 96), (363.0 + 518) / 2, 1e-9);
  for (AttentionKernel k : {AttentionKernel::kFlash2, AttentionKernel::kFlash3, AttentionKernel::kCudnn,
                            AttentionKernel::kTritonFlash, AttentionKernel::kFlex}) {
    for (double seq : {512.0, 4096.0, 65536.0}) {
      for (bool backward : {false, true}) {
        const double wide = published_attention_tflops(k, seq, backward, 128);
        EXPECT_DOUBLE_EQ(published_attention_tflops(k, seq, backward, 192), wide);
        EXPECT_LT(published_attention_tflops(k, seq, backward, 64),
                  published_attention_tflops(k, seq, backward, 96));
        EXPECT_LT(published_attention_tflops(k, seq, backward, 96), wide);
      }
    }
  }
}

// FlashAttention's Triton kernel (llm-foundry's attn_impl triton): on an
// H100 its speed over FlashAttention-2's follows the FlashAttention-2
// README's A100 benchmark over lengths (causal, head dim 128, forward +
// backward: Triton 50 ... 80 TFLOP/s, FlashAttention-2 99 ... 189 at 512 ...
// 16k; beyond 16k its 16k share), one factor for every length and both
// passes (fitted to calibration runs), and never passes FlashAttention-2.
TEST(AttentionKernels, TritonKernelFollowsItsPublishedShareOfFlashAttention2) {
  const double triton[] = {50, 61, 68, 74, 78, 80};
  const double flash2[] = {99, 133, 155, 173, 182, 189};
  const auto ratio = [](double seq, bool backward) {
    return published_attention_tflops(AttentionKernel::kTritonFlash, seq, backward) /
           published_attention_tflops(AttentionKernel::kFlash2, seq, backward);
  };
  const double factor = ratio(512, false) / (triton[0] / flash2[0]);
  EXPECT_GE(factor, 1.0);
  for (int i = 0; i < 6; ++i) {
    const double seq = 512.0 * (1 << i);
    for (bool backward : {false, true}) {
      EXPECT_NEAR(ratio(seq, backward), factor * triton[i] / flash2[i], 1e-12) << seq;
      EXPECT_LT(ratio(seq, backward), 1.0) << seq;
    }
  }
  EXPECT_NEAR(ratio(65536, false), factor * 80.0 / 189, 1e-12);
}

// Off the H100 (the A100 the benchmark ran on): the Triton kernel at the
// same share of the profile's FlashAttention-2-class efficiency.
TEST(AttentionKernels, TritonKernelOnAnA100RunsAtItsShareOfTheProfile) {
  const ClusterSpec a100 = load_cluster("dgx-a100");
  for (double seq : {512.0, 4096.0, 16384.0}) {
    const AttentionEfficiency flash2 = attention_efficiency(a100.device, AttentionKernel::kFlash2, seq);
    const AttentionEfficiency triton = attention_efficiency(a100.device, AttentionKernel::kTritonFlash, seq);
    const double share = seq == 512.0 ? 50.0 / 99 : seq == 4096.0 ? 74.0 / 173 : 80.0 / 189;
    EXPECT_NEAR(triton.forward / flash2.forward, share, 1e-12) << seq;
    EXPECT_NEAR(triton.backward / flash2.backward, share, 1e-12) << seq;
  }
}

TEST(AttentionKernels, CausalBackwardIsNonCausalBackwardTimesTheForwardMaskRatio) {
  EXPECT_NEAR(published_attention_tflops(AttentionKernel::kFlash2, 16384, true), 322.0 * 335 / 370, 1e-9);
  EXPECT_NEAR(published_attention_tflops(AttentionKernel::kFlash3, 8192, true), 559.0 * 602 / 646, 1e-9);
}

TEST(AttentionKernels, KernelFiguresApplyOnHopperSxmElseTheProfile) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const AttentionEfficiency cudnn = attention_efficiency(h100.device, AttentionKernel::kCudnn, 4096);
  EXPECT_NEAR(cudnn.forward, 518 / 989.4, 1e-12);
  EXPECT_NEAR(cudnn.backward, 499.0 * 518 / 609 / 989.4, 1e-12);
  const AttentionEfficiency profile = attention_efficiency(h100.device, AttentionKernel::kProfile, 4096);
  EXPECT_DOUBLE_EQ(profile.forward, profile.backward);
  // A100: no published kernel table here; the profile's efficiency.
  const ClusterSpec a100 = load_cluster("dgx-a100");
  const AttentionEfficiency fa2 = attention_efficiency(a100.device, AttentionKernel::kFlash2, 4096);
  EXPECT_DOUBLE_EQ(fa2.forward, attention_efficiency(a100.device, AttentionKernel::kProfile, 4096).forward);
}

TEST(AttentionKernels, LayerTimesTheKernelsForwardAndBackwardSeparately) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const ModelSpec model = load_model("llama3-8b");
  LayerShape shape;
  shape.tokens = 8192;
  shape.seq = 8192;
  shape.kernel = AttentionKernel::kFlash2;
  const double peak = h100.device.peak_bf16_flops_per_s;
  const auto t = layer_compute_times(model, h100.device, peak, shape);
  // Causal: half of 2 * tokens * seq * heads * 2 * head_dim FLOPs.
  const double flops = 0.5 * 2.0 * 8192 * 8192 * model.heads * 2.0 * model.head_dim;
  EXPECT_NEAR(t.attention_forward_s, flops / (333e12 * peak / 989.4e12), 1e-9 * t.attention_forward_s);
}

// Each kernel's compiled head widths, from its source: FlashAttention-2
// rounds to a multiple of 32, FlashAttention-3 to 64/96/128/192/256, the
// Triton kernels (flash_attn_triton.py, FlexAttention) to a power of two.
TEST(AttentionKernels, KernelsRunNarrowHeadsAtTheirCompiledWidth) {
  struct Case {
    AttentionKernel kernel;
    int head_dim, compiled;
  };
  using K = AttentionKernel;
  const Case cases[] = {{K::kFlash2, 128, 128}, {K::kFlash2, 112, 128},     {K::kFlash2, 80, 96},
                        {K::kFlash2, 192, 192}, {K::kFlash3, 80, 96},       {K::kFlash3, 160, 192},
                        {K::kFlash3, 40, 64},   {K::kTritonFlash, 80, 128}, {K::kTritonFlash, 8, 16},
                        {K::kFlex, 192, 256},   {K::kCudnn, 112, 112},      {K::kProfile, 80, 80}};
  for (const Case& c : cases)
    EXPECT_EQ(attention_kernel_head_dim(c.kernel, c.head_dim), c.compiled)
        << static_cast<int>(c.kernel) << " " << c.head_dim;
}

// Heads of 112 padded to 128 do the work of heads of 128: the attention
// kernel's time equals that of the same heads 128 wide, on every kernel
// that pads; cuDNN does 112/128 of the work at its narrower heads' speed.
TEST(AttentionKernels, PaddedHeadsCostTheirCompiledWidth) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  ModelSpec wide = load_model("llama3-8b");
  ModelSpec narrow = wide;
  narrow.head_dim = 112;
  narrow.v_head_dim = 112;
  LayerShape shape;
  shape.tokens = 8192;
  shape.seq = 8192;
  const double peak = h100.device.peak_bf16_flops_per_s;
  for (AttentionKernel k : {AttentionKernel::kFlash2, AttentionKernel::kFlash3, AttentionKernel::kTritonFlash,
                            AttentionKernel::kFlex, AttentionKernel::kCudnn}) {
    shape.kernel = k;
    const auto w = layer_compute_times(wide, h100.device, peak, shape);
    const auto n = layer_compute_times(narrow, h100.device, peak, shape);
    // cuDNN computes the 112 wide heads as they are: 112 / 128 of the work,
    // at its figures for that width (an eighth of the way to head dim 64's).
    for (bool backward : {false, true}) {
      const double slower = published_attention_tflops(k, 8192, backward, 128) /
                            published_attention_tflops(k, 8192, backward, 112);
      const double ratio = k == AttentionKernel::kCudnn ? 112.0 / 128.0 * slower : 1.0;
      const double wide_s = backward ? w.attention_backward_s : w.attention_forward_s;
      EXPECT_NEAR(backward ? n.attention_backward_s : n.attention_forward_s, ratio * wide_s, 1e-9 * wide_s);
    }
  }
}

TEST(ElementwiseFusion, EagerEnginesPayEveryOperatorsRoundTrip) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const DeviceSpec& d = h100.device;
  const ModelSpec model = load_model("llama3-8b");  // RMSNorm, SwiGLU, rope
  LayerShape shape;
  shape.tokens = 4096;
  shape.seq = 4096;
  const double peak = d.peak_bf16_flops_per_s;
  const auto fused = layer_compute_times(model, d, peak, shape);
  shape.fused_elementwise = false;
  shape.composed_rms_norm = true;
  const auto eager = layer_compute_times(model, d, peak, shape);
  // Per token, 16-bit elements: norms and residual adds 2 x 18 + 2 x 3 = 42
  // against 11; SwiGLU 5 against 3 per FFN element; rope 10 against 2 per
  // q/k element.
  const double h = model.hidden;
  const double q = model.heads * model.head_dim;
  const double kv = 2.0 * model.kv_groups * model.head_dim;
  const double extra = 4096 * ((42 - 11) * h + 2.0 * model.ffn_hidden + 8.0 * (q + kv / 2.0));
  const double extra_s = 2.0 * extra / (d.hbm_bytes_per_s * d.memory_bound_efficiency);
  EXPECT_NEAR(eager.forward_s - fused.forward_s, extra_s, 1e-9 * extra_s);
  // The backward also concatenates the q, k and v gradients of the fused
  // QKV projection (the split's backward): a read and a write of them.
  const double cat_s = 2.0 * 4096 * 2.0 * (q + kv) / (d.hbm_bytes_per_s * d.memory_bound_efficiency);
  EXPECT_NEAR(eager.backward_s - fused.backward_s, 2.0 * extra_s + cat_s, 1e-9 * extra_s);
  // nn.RMSNorm as one fused kernel: 3 per norm instead of 18.
  shape.composed_rms_norm = false;
  const auto native = layer_compute_times(model, d, peak, shape);
  const double norms_s = 2.0 * 4096 * 2.0 * (18 - 3) * h / (d.hbm_bytes_per_s * d.memory_bound_efficiency);
  EXPECT_NEAR(eager.forward_s - native.forward_s, norms_s, 1e-9 * norms_s);
}

// Eager PyTorch reduces each biased linear's output gradient over the
// tokens in a kernel of its own (one read of it); fused engines fold it
// into other kernels. MPT-like: every linear biased, GeLU FFN of 4 h.
TEST(ElementwiseFusion, EagerBiasGradientsReadEachOutputGradientOnce) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const DeviceSpec& d = h100.device;
  ModelSpec model = load_model("gpt3-175b");  // LayerNorm, GeLU, biases
  ASSERT_TRUE(model.linear_bias);
  LayerShape shape;
  shape.tokens = 8192;
  shape.seq = 2048;
  const double peak = d.peak_bf16_flops_per_s;
  shape.fused_elementwise = false;
  const auto biased = layer_compute_times(model, d, peak, shape);
  shape.fused_elementwise = true;
  const auto fused_biased = layer_compute_times(model, d, peak, shape);
  model.linear_bias = false;
  const auto fused_plain = layer_compute_times(model, d, peak, shape);
  shape.fused_elementwise = false;
  const auto plain = layer_compute_times(model, d, peak, shape);
  const double h = model.hidden;
  // QKV (3 h), attention output (h), FFN up (4 h) and down (h) projections.
  const double bytes = 2.0 * 8192 * (3 * h + h + model.ffn_hidden + h);
  EXPECT_NEAR(biased.backward_s - plain.backward_s, bytes / (d.hbm_bytes_per_s * d.memory_bound_efficiency),
              1e-9);
  EXPECT_DOUBLE_EQ(biased.forward_s, plain.forward_s);
  EXPECT_DOUBLE_EQ(fused_biased.backward_s, fused_plain.backward_s);
}

}  // namespace
}  // namespace parplan
