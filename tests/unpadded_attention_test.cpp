// llm-foundry's flash path (attn_impl: flash, llmfoundry/models/layers/
// attention.py flash_attn_fn @ 5e85bd6) unpads q, k and v with flash-attn's
// bert_padding.unpad_input and pads the output with pad_input around
// flash_attn_varlen_func, even when no token is padding. Counted from
// bert_padding's autograd functions: forward, IndexFirstAxis (torch.gather:
// read and write) per input and IndexPutFirstAxis (zeros, then index_put:
// write, read, write) for the output; backward, the output gradient indexed
// (read, write) and each input's gradient scattered into zeros (write, read,
// write).
#include <gtest/gtest.h>

#include <string>

#include "cost/compute_time.h"
#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

LayerComputeTimes times(const ModelSpec& model, const DeviceSpec& device, int tp, bool unpadded) {
  LayerShape shape;
  shape.tokens = 6 * 2048.0;
  shape.seq = 2048;
  shape.tp = tp;
  shape.sp = tp > 1;
  shape.fused_elementwise = false;
  shape.kernel = AttentionKernel::kFlash2;
  shape.unpadded_attention = unpadded;
  return layer_compute_times(model, device, device.peak_bf16_flops_per_s, shape);
}

// Multi-head attention (k and v as wide as q): 9 activation passes of q's
// width forward (3 gathers of 2, the output's 3) and 11 backward (the
// output gradient's 2, three scatters of 3), 2 bytes each, at the profile's
// memory-bound rate.
TEST(UnpaddedAttention, AddsTheCopiesOfBertPadding) {
  const ModelSpec model = load_model("gpt-7.5b");
  ASSERT_EQ(model.kv_groups, model.heads);
  const DeviceSpec device = load_cluster("dgx-h100").device;
  for (int tp : {1, 2}) {
    const LayerComputeTimes plain = times(model, device, tp, false);
    const LayerComputeTimes unpadded = times(model, device, tp, true);
    const double width_bytes = 2.0 * 6 * 2048.0 * model.heads * model.head_dim / tp;
    EXPECT_NEAR(unpadded.forward_s - plain.forward_s, memory_bound_s(device, 9.0 * width_bytes), 1e-12) << tp;
    EXPECT_NEAR(unpadded.backward_s - plain.backward_s, memory_bound_s(device, 11.0 * width_bytes), 1e-12)
        << tp;
    EXPECT_DOUBLE_EQ(unpadded.attention_forward_s, plain.attention_forward_s);
  }
}

// Run files name it; a value other than a boolean names the field.
TEST(UnpaddedAttention, RunFileKey) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const auto run =
      run_file_test::run_with("unpadded_attention",
                              "name: r, model: gpt-7.5b, gpus: 8, gbs: 48, seq: 2048, step_s: 3, "
                              "engine: torchtitan, attention_kernel: fa2, fused_elementwise: false, "
                              "config: {tp: 1, zero: 3, mbs: 6}",
                              cluster);
  const FitRun padded = run("");
  const FitRun unpadded = run(", unpadded_attention: true");
  EXPECT_FALSE(padded.job.unpadded_attention);
  EXPECT_TRUE(unpadded.job.unpadded_attention);
  EXPECT_GT(predict_run(unpadded, cluster).step_s, predict_run(padded, cluster).step_s);
  run_file_test::expect_error_naming([&] { run(", unpadded_attention: 2"); }, "unpadded_attention");
}

}  // namespace
}  // namespace parplan
