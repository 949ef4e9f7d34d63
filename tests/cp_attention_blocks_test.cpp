// Context parallelism runs attention as per-block kernels (Transformer
// Engine's ring and PyTorch's context_parallel, load-balanced layout): one
// causal block of s/cp tokens and cp - 1 non-causal blocks of
// s/cp x s/(2cp). Expected values from FlashAttention-3 paper figures
// (Shah et al. 2024, H100 SXM5, head dim 128): FlashAttention-3 causal
// forward 521 TFLOP/s at 2k, non-causal forward 565 at 1k and 625 at 2k,
// non-causal backward 424 at 1k and 501 at 2k; FlashAttention-2 causal
// forward 298 at 2k, non-causal forward 362 and backward 291 at 2k.
#include <gtest/gtest.h>

#include <cmath>

#include "cost/attention_kernels.h"
#include "src/io/cluster_loader.h"

namespace parplan {
namespace {

constexpr double kH100Peak = 989.4;

TEST(CpAttentionBlocks, FollowThePublishedKernelCurvesPerBlock) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const AttentionEfficiency e =
      context_parallel_attention_efficiency(h100.device, AttentionKernel::kFlash3, 8192, 4);
  // Non-causal blocks of 2048 x 1024 run as the square of side 2048/sqrt(2)
  // = 2^10.5: halfway (in log2) between the 1k and 2k figures.
  const double off_forward = (565.0 + 625.0) / 2;
  const double off_backward = (424.0 + 501.0) / 2;
  // The causal backward is the non-causal one times the causal/non-causal
  // forward ratio at 2k (the figures publish the non-causal backward only).
  const double diagonal_backward = 501.0 * 521.0 / 625.0;
  const double forward = 1.0 / (0.25 / 521.0 + 0.75 / off_forward);
  const double backward = 1.0 / (0.25 / diagonal_backward + 0.75 / off_backward);
  EXPECT_NEAR(e.forward * kH100Peak, forward, 1e-6 * forward);
  EXPECT_NEAR(e.backward * kH100Peak, backward, 1e-6 * backward);
}

// FlashAttention-2's off-diagonal blocks run at their measured figure (the
// s/cp x s/(2cp) block, calibration/h100-kernels/attention_noncausal.csv:
// 334.1 / 285.5 TFLOP/s at 8192 x 4096, held below), the diagonal block at
// the causal curve.
TEST(CpAttentionBlocks, FlashAttention2OffDiagonalBlocksRunAtTheirMeasuredFigure) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const AttentionEfficiency e =
      context_parallel_attention_efficiency(h100.device, AttentionKernel::kFlash2, 8192, 4);
  const double diagonal_backward = 291.0 * 298.0 / 362.0;
  const double forward = 1.0 / (0.25 / 298.0 + 0.75 / 334.1);
  const double backward = 1.0 / (0.25 / diagonal_backward + 0.75 / 285.5);
  EXPECT_NEAR(e.forward * kH100Peak, forward, 1e-6 * forward);
  EXPECT_NEAR(e.backward * kH100Peak, backward, 1e-6 * backward);
}

TEST(CpAttentionBlocks, OneRankIsTheWholeCausalKernel) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  for (AttentionKernel k : {AttentionKernel::kFlash2, AttentionKernel::kFlash3, AttentionKernel::kCudnn,
                            AttentionKernel::kProfile}) {
    const AttentionEfficiency one = context_parallel_attention_efficiency(h100.device, k, 8192, 1);
    const AttentionEfficiency plain = attention_efficiency(h100.device, k, 8192);
    EXPECT_DOUBLE_EQ(one.forward, plain.forward);
    EXPECT_DOUBLE_EQ(one.backward, plain.backward);
  }
}

// Without published figures (the profile's curve e * s / (s + half)), the
// blocks run at the curve's value at their own lengths.
TEST(CpAttentionBlocks, ProfileCurveAtTheBlockLengths) {
  ClusterSpec a100 = load_cluster("dgx-a100");
  a100.device.flash_attention_efficiency = 0.5;
  a100.device.attention_half_seq = 1024;
  const double s = 32768;
  const int cp = 8;
  const auto curve = [](double len) { return 0.5 * len / (len + 1024); };
  const double diagonal = curve(s / cp);
  const double off = curve(s / cp / std::sqrt(2.0));
  const double expected = 1.0 / ((1.0 / cp) / diagonal + (1.0 - 1.0 / cp) / off);
  const AttentionEfficiency e =
      context_parallel_attention_efficiency(a100.device, AttentionKernel::kProfile, s, cp);
  EXPECT_NEAR(e.forward, expected, 1e-12);
  EXPECT_NEAR(e.backward, expected, 1e-12);
}

}  // namespace
}  // namespace parplan
