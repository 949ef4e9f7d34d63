// Attention dropout's cost inside the fused kernels against the H100
// measurement it comes from (calibration/h100-kernels/attention_dropout.csv:
// one H100 SXM5, causal, 32 heads of 128, dropout 0.1 against 0).
#include "cost/attention_dropout.h"

#include <gtest/gtest.h>

#include <string>

#include "cost/compute_time.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/kernel_csv.h"

namespace parplan {
namespace {

struct Pass {
  double forward_ms = 0, backward_ms = 0;
};

AttentionKernel kernel_of(const std::string& label) {
  return label.rfind("flash", 0) == 0 ? AttentionKernel::kFlash2 : AttentionKernel::kCudnn;
}

TEST(AttentionDropout, FactorsAreTheMeasuredRatios) {
  const DeviceSpec h100 = load_cluster("dgx-h100").device;
  std::map<std::pair<std::string, double>, std::pair<Pass, Pass>> by_kernel_seq;  // without, with
  for (const test::CsvRow& r : test::read_kernel_csv("attention_dropout.csv")) {
    auto& pair = by_kernel_seq[{r.at("kernel"), test::csv_number(r, "seq")}];
    Pass& p = test::csv_number(r, "dropout") > 0 ? pair.second : pair.first;
    p = {test::csv_number(r, "fwd_ms"), test::csv_number(r, "bwd_ms")};
  }
  ASSERT_EQ(by_kernel_seq.size(), 8u);
  for (const auto& [key, pair] : by_kernel_seq) {
    const AttentionTimeFactor f = attention_dropout_time_factor(h100, kernel_of(key.first), key.second, 0.1);
    EXPECT_NEAR(f.forward, pair.second.forward_ms / pair.first.forward_ms, 1e-9)
        << key.first << " " << key.second;
    EXPECT_NEAR(f.backward, pair.second.backward_ms / pair.first.backward_ms, 1e-9)
        << key.first << " " << key.second;
    EXPECT_GT(f.forward, 1.0);
    EXPECT_GT(f.backward, 1.0);
  }
}

TEST(AttentionDropout, NoneWithoutDropoutOrAMeasurement) {
  const DeviceSpec h100 = load_cluster("dgx-h100").device;
  const DeviceSpec a100 = load_cluster("dgx-a100").device;
  for (const AttentionTimeFactor f :
       {attention_dropout_time_factor(h100, AttentionKernel::kFlash2, 4096, 0.0),
        attention_dropout_time_factor(h100, AttentionKernel::kFlash3, 4096, 0.1),
        attention_dropout_time_factor(h100, AttentionKernel::kTritonFlash, 4096, 0.1),
        attention_dropout_time_factor(a100, AttentionKernel::kFlash2, 4096, 0.1)}) {
    EXPECT_EQ(f.forward, 1.0);
    EXPECT_EQ(f.backward, 1.0);
  }
  // Flat outside the measured 2k..16k, and the mask's cost does not depend
  // on the probability.
  const auto at = [&](double seq, double p) {
    return attention_dropout_time_factor(h100, AttentionKernel::kFlash2, seq, p).forward;
  };
  EXPECT_EQ(at(512, 0.1), at(2048, 0.1));
  EXPECT_EQ(at(131072, 0.1), at(16384, 0.1));
  EXPECT_EQ(at(8192, 0.3), at(8192, 0.1));
}

TEST(AttentionDropout, ALayersAttentionTakesTheFactor) {
  const DeviceSpec h100 = load_cluster("dgx-h100").device;
  ModelSpec with = load_model("gpt3-175b");
  ModelSpec without = with;
  without.dropout = 0;
  LayerShape shape;
  shape.tokens = 2 * 2048, shape.seq = 2048, shape.tp = 8, shape.sp = true;
  shape.kernel = AttentionKernel::kFlash2;
  const double peak = h100.peak_bf16_flops_per_s;
  const LayerComputeTimes a = layer_compute_times(with, h100, peak, shape);
  const LayerComputeTimes b = layer_compute_times(without, h100, peak, shape);
  const AttentionTimeFactor f = attention_dropout_time_factor(h100, AttentionKernel::kFlash2, 2048, 0.1);
  EXPECT_NEAR(a.attention_forward_s, b.attention_forward_s * f.forward, 1e-12);
  EXPECT_NEAR(a.attention_backward_s, b.attention_backward_s * f.backward, 1e-12);
  EXPECT_GT(a.forward_s, b.forward_s);
  EXPECT_GT(a.backward_s, b.backward_s);
}

}  // namespace
}  // namespace parplan
