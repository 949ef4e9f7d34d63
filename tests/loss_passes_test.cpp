// The cross-entropy's time is the HBM bytes of its kernel's passes over the
// logits (cost/loss_passes.h), priced at the profile's memory-bound rate,
// and the LM head's GEMM stays at the 16-bit peak in fp8 runs.
#include "cost/loss_passes.h"

#include <gtest/gtest.h>

#include "cost/compute_time.h"
#include "cost/step_internal.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

double total(const LossPassBytes& b) { return b.forward + b.backward; }

// The kernel's bytes per logit, checked against the count worked out by hand.
LossPassBytes expect_pass_bytes(CrossEntropy kernel, int tp, double forward, double backward) {
  const LossPassBytes bytes = loss_pass_bytes(kernel, tp);
  EXPECT_DOUBLE_EQ(bytes.forward, forward);
  EXPECT_DOUBLE_EQ(bytes.backward, backward);
  return bytes;
}

TEST(LossPasses, BytesPerLogitFollowFromEachKernelsPassList) {
  // Transformer Engine's Triton kernels on 16-bit logits: forward reads
  // them for the online max/sum (2), reads them and writes the gradient in
  // place (2 + 2) = 6; backward scales it in place (2 + 2) = 4.
  const LossPassBytes te = expect_pass_bytes(CrossEntropy::kTeInPlace, 1, 6.0, 4.0);
  // Megatron's VocabParallelCrossEntropy, one kernel per step: upcast
  // (2 + 4), max (4), subtract (4 + 4), exp (4 + 4), sum (4), divide (4 + 4)
  // = 38; backward multiply (4 + 4) and downcast (4 + 2) = 14.
  const LossPassBytes megatron = expect_pass_bytes(CrossEntropy::kFused, 1, 38.0, 14.0);
  // PyTorch's eager cross_entropy after an upcast (2 + 4): log_softmax reads
  // the row three times and writes it once (16) = 22; backward zero-fill (4),
  // log_softmax backward (4 + 4 + 4 + 4), downcast (4 + 2) = 26.
  const LossPassBytes eager = expect_pass_bytes(CrossEntropy::kEager, 1, 22.0, 26.0);
  // loss_parallel's decomposition: upcast 6, amax 4, subtract 8, exp 8,
  // sum 4, subtract 8 = 38; zeros 4, exp 8, add 12, multiply 8, downcast 6 = 38.
  const LossPassBytes loss_parallel = expect_pass_bytes(CrossEntropy::kEager, 8, 38.0, 38.0);

  // The in-place 16-bit kernel moves the least; a kernel per operator the most.
  EXPECT_LT(total(te), total(eager));
  EXPECT_LT(total(te), total(megatron));
  EXPECT_LT(total(eager), total(loss_parallel));
  // Only the decomposition depends on tp; the kernels' passes do not.
  EXPECT_DOUBLE_EQ(total(loss_pass_bytes(CrossEntropy::kFused, 8)), total(megatron));
  EXPECT_DOUBLE_EQ(total(loss_pass_bytes(CrossEntropy::kTeInPlace, 8)), total(te));
}

// The loss is the only part of the head that depends on the kernel, so the
// difference between two kernels' head times is their byte difference over
// the local logits, tokens x vocab / tp, at the memory-bound rate.
double loss_gap_s(const ModelSpec& model, const DeviceSpec& device, double tokens, int tp) {
  const double peak = device.peak_bf16_flops_per_s;
  const EdgeComputeTimes megatron = edge_compute_times(model, device, peak, tokens, tp, CrossEntropy::kFused);
  const EdgeComputeTimes te = edge_compute_times(model, device, peak, tokens, tp, CrossEntropy::kTeInPlace);
  return (megatron.head_forward_s + megatron.head_backward_s) - (te.head_forward_s + te.head_backward_s);
}

TEST(LossPasses, LossTimeIsBytesTimesLocalLogitsAtHbmRate) {
  ModelSpec model = load_model("llama3-8b");
  const DeviceSpec device = load_cluster("dgx-h100").device;
  const double tokens = 8192;
  const double rate = device.hbm_bytes_per_s * device.memory_bound_efficiency;
  const double logits = tokens * static_cast<double>(model.vocab);
  EXPECT_NEAR(loss_gap_s(model, device, tokens, 1), (52.0 - 10.0) * logits / rate, 1e-12);
  // Scales with vocab / tp.
  EXPECT_NEAR(loss_gap_s(model, device, tokens, 4), loss_gap_s(model, device, tokens, 1) / 4.0, 1e-12);
  const double gap = loss_gap_s(model, device, tokens, 1);
  model.vocab *= 2;
  EXPECT_NEAR(loss_gap_s(model, device, tokens, 1), 2.0 * gap, 1e-12);
}

TEST(LossPasses, JobsCrossEntropyReachesTheLastStagesHead) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job;
  job.gpus = 8;
  job.gbs = 64;
  job.seq = 8192;
  ParallelConfig c;
  c.tp = 2;
  c.dp = 4;
  c.mbs = 1;
  job.cross_entropy = CrossEntropy::kFused;
  const double fused = detail::per_layer_costs(model, cluster, job, c).edges.head_backward_s;
  job.cross_entropy = CrossEntropy::kTeInPlace;
  const double te = detail::per_layer_costs(model, cluster, job, c).edges.head_backward_s;
  const double rate = cluster.device.hbm_bytes_per_s * cluster.device.memory_bound_efficiency;
  EXPECT_NEAR(fused - te, (14.0 - 4.0) * job.seq * model.vocab / c.tp / rate, 1e-12);
}

TEST(LossPasses, LmHeadGemmStaysAtTheSixteenBitPeakInFp8) {
  // Megatron's output layer is a plain ColumnParallelLinear and torchtitan's
  // float8 conversion skips `output`: the head's time does not change with
  // the fp8 peak the layers' GEMMs run at.
  const ModelSpec model = load_model("llama3-8b");
  const DeviceSpec device = load_cluster("dgx-h100").device;
  ASSERT_GT(device.peak_fp8_flops_per_s, device.peak_bf16_flops_per_s);
  const EdgeComputeTimes bf16 = edge_compute_times(model, device, device.peak_bf16_flops_per_s, 8192, 1);
  const EdgeComputeTimes fp8 = edge_compute_times(model, device, device.peak_fp8_flops_per_s, 8192, 1);
  EXPECT_DOUBLE_EQ(fp8.head_forward_s, bf16.head_forward_s);
  EXPECT_DOUBLE_EQ(fp8.head_backward_s, bf16.head_backward_s);
}

}  // namespace
}  // namespace parplan
