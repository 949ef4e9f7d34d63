// fp8 training keeps attention in bf16: the attention core is timed at the
// bf16 peak whatever the job's precision, the linear-layer GEMMs at the
// precision's own peak.
#include <gtest/gtest.h>

#include "cost/compute_time.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

DeviceSpec fp8_device() {
  DeviceSpec d;
  d.peak_bf16_flops_per_s = 1000e12;
  d.peak_fp16_flops_per_s = 1000e12;
  d.peak_fp8_flops_per_s = 2000e12;
  d.hbm_bytes_per_s = 3e12;
  d.flash_attention_efficiency = 0.5;
  d.attention_half_seq = 0;
  return d;
}

TEST(AttentionPrecision, Fp8JobTimesFlashAttentionAtTheBf16Peak) {
  const ModelSpec model = load_model("llama3-8b");
  const DeviceSpec device = fp8_device();
  LayerShape shape;
  shape.tokens = 8192;
  shape.seq = 8192;
  const auto fp8 = layer_compute_times(model, device, device.peak_flops_per_s(Precision::kFp8), shape);
  const auto bf16 = layer_compute_times(model, device, device.peak_flops_per_s(Precision::kBf16), shape);
  // Causal fused kernel: half of 2 * tokens * seq * heads * (d_qk + d_v)
  // FLOPs, at efficiency x the bf16 peak (FlashAttention-2 accounting).
  const double flops = 0.5 * 2.0 * 8192.0 * 8192.0 * model.heads * (2.0 * model.head_dim);
  const double expected_s = flops / (0.5 * 1000e12);
  EXPECT_NEAR(fp8.attention_forward_s, expected_s, 1e-12 * expected_s + 1e-15);
  EXPECT_DOUBLE_EQ(fp8.attention_forward_s, bf16.attention_forward_s);
  // The GEMMs still gain from fp8: the whole layer is faster, but by less
  // than the 2x of the peaks because attention does not.
  EXPECT_LT(fp8.forward_s, bf16.forward_s);
  EXPECT_GT(fp8.forward_s, 0.5 * bf16.forward_s);
}

TEST(AttentionPrecision, Bf16JobIsUnchanged) {
  const ModelSpec model = load_model("llama3-8b");
  DeviceSpec device = fp8_device();
  LayerShape shape;
  shape.tokens = 4096;
  shape.seq = 4096;
  const auto t = layer_compute_times(model, device, device.peak_bf16_flops_per_s, shape);
  const double flops = 0.5 * 2.0 * 4096.0 * 4096.0 * model.heads * (2.0 * model.head_dim);
  EXPECT_NEAR(t.attention_forward_s, flops / (0.5 * 1000e12), 1e-9 * t.attention_forward_s);
}

}  // namespace
}  // namespace parplan
