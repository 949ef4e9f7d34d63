// Per-head RMSNorm on queries and keys (Qwen3's qk_norm): Megatron's
// q_layernorm and k_layernorm read and write q (heads x head_dim) and k
// (kv_groups x head_dim) per token, forward once and backward twice, like
// the layer's other element-wise passes.
#include <gtest/gtest.h>

#include "cost/compute_time.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

TEST(QkNorm, ReadsAndWritesQueriesAndKeysOnce) {
  ModelSpec m = load_model("llama3-8b");  // 32 heads, 8 kv groups of 128
  const DeviceSpec d = load_cluster("dgx-h100").device;
  LayerShape s;
  s.tokens = 4096;
  s.seq = 4096;
  const LayerComputeTimes plain = layer_compute_times(m, d, d.peak_bf16_flops_per_s, s);
  m.qk_norm = true;
  const LayerComputeTimes normed = layer_compute_times(m, d, d.peak_bf16_flops_per_s, s);
  const double bytes = 2.0 * 2.0 * 4096 * (32 * 128 + 8 * 128);
  const double rate = d.hbm_bytes_per_s * d.memory_bound_efficiency;
  EXPECT_NEAR(normed.forward_s - plain.forward_s, bytes / rate, 1e-12);
  EXPECT_NEAR(normed.backward_s - plain.backward_s, 2.0 * bytes / rate, 1e-12);
}

}  // namespace
}  // namespace parplan
