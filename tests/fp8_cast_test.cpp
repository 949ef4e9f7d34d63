// Transformer Engine's fp8 cast kernels (cost/compute_time.h fp8_cast_times):
// one memory-bound pass per GEMM input and output gradient reading 2 bytes
// and writing the fp8 copy and its transpose (1 + 1).
#include <gtest/gtest.h>

#include "cost/compute_time.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

TEST(Fp8Casts, FourBytesPerGemmInputAndOutputGradientAtHbmSpeed) {
  const ModelSpec model = load_model("llama3-8b");
  const DeviceSpec device = load_cluster("dgx-h100").device;
  LayerShape shape;
  shape.tokens = 8192;
  shape.seq = 8192;
  shape.tp = 1;
  const double peak = device.peak_fp8_flops_per_s;
  const LayerComputeTimes bf16_casts_off = layer_compute_times(model, device, peak, shape);
  shape.fp8 = true;
  const LayerComputeTimes fp8 = layer_compute_times(model, device, peak, shape);
  const double m = shape.tokens, h = model.hidden, f = model.ffn_hidden;
  const double q = model.heads * static_cast<double>(model.head_dim);
  const double kv = 2.0 * model.kv_groups * static_cast<double>(model.head_dim);
  const double bytes_per_s = device.hbm_bytes_per_s * device.memory_bound_efficiency;
  // Inputs of QKV (h), output projection (q), FC1 (h), FC2 (f).
  const double forward_elements = m * (h + q + h + f);
  // Output gradients of QKV (q + kv), projection (h), gated FC1 (2 f), FC2 (h).
  const double backward_elements = m * (q + kv + h + 2.0 * f + h);
  EXPECT_NEAR(fp8.forward_s - bf16_casts_off.forward_s, 4.0 * forward_elements / bytes_per_s, 1e-12);
  EXPECT_NEAR(fp8.backward_s - bf16_casts_off.backward_s, 4.0 * backward_elements / bytes_per_s, 1e-12);
}

}  // namespace
}  // namespace parplan
