// Megatron-LM under bf16 accumulates and reduces gradients in fp32
// (megatron/training/arguments.py: "bfloat16 requires gradient accumulation
// and all-reduce to be done in fp32", unless --grad-reduce-in-bf16); fp16
// keeps 16-bit gradients, as the ZeRO paper's 2 bytes per parameter assume.
#include <gtest/gtest.h>

#include "cost/memory.h"
#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

double dp_bytes(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                const ParallelConfig& c) {
  double total = 0;
  for (double bytes : estimate_cost(model, cluster, job, c).dp_traffic.bytes) total += bytes;
  return total;
}

TEST(GradientPrecision, MegatronBf16KeepsFourByteGradients) {
  EXPECT_DOUBLE_EQ(gradient_bytes_per_param(Precision::kBf16, 0), 4.0);
  EXPECT_DOUBLE_EQ(gradient_bytes_per_param(Precision::kBf16, 1), 4.0);
  EXPECT_DOUBLE_EQ(gradient_bytes_per_param(Precision::kFp16, 1), 2.0);
  // DeepSpeed ZeRO-2/3 reduce in the model dtype.
  EXPECT_DOUBLE_EQ(gradient_bytes_per_param(Precision::kBf16, 3), 2.0);
  // ZeRO paper, 7.5B on 64 ranks, stage 1, with 4-byte gradients:
  // 2 + 4 + 12/64 bytes per parameter.
  const double psi = 7.5e9;
  EXPECT_NEAR(model_state_bytes(psi, 1, 64, 12, 4.0).total() / 1e9, 7.5 * (2 + 4 + 12.0 / 64), 1e-6);
}

// Pure data parallelism of a 7.5B GPT over 64 A100 with the distributed
// optimizer: the reduce-scatter moves fp32 gradients under bf16 and fp16
// gradients under fp16; the parameter all-gather moves 16-bit weights in both.
TEST(GradientPrecision, Bf16DataParallelTrafficCarriesFp32Gradients) {
  const ModelSpec model = load_model("gpt-7.5b");
  const ClusterSpec cluster = load_cluster("dgx-a100");
  JobSpec job;
  job.gpus = 64, job.gbs = 128, job.seq = 2048;
  ParallelConfig c;
  c.tp = 1, c.pp = 1, c.dp = 64, c.mbs = 2, c.gbs = 128, c.zero = 1;
  job.precision = Precision::kBf16;
  const double bf16 = dp_bytes(model, cluster, job, c);
  job.precision = Precision::kFp16;
  const double fp16 = dp_bytes(model, cluster, job, c);
  // (4 + 2) / (2 + 2) bytes per parameter moved.
  EXPECT_NEAR(bf16 / fp16, 1.5, 1e-9);
}

// ZeRO-3 (FSDP) moves per micro-batch the 16-bit weights twice (the forward
// and the backward gather) and the gradients once, in the reduce dtype:
// torchtitan's FSDP2 reduces in fp32 (mixed_precision_reduce "float32"), so
// its traffic is (2 + 2 + 4) / (2 + 2 + 2) of a bf16 reduction's.
TEST(GradientPrecision, ZeroThreeReduceScattersInTheReduceDtype) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job;
  job.gpus = 16, job.gbs = 32, job.seq = 4096;
  ParallelConfig c;
  c.tp = 1, c.pp = 1, c.dp = 16, c.mbs = 1, c.gbs = 32, c.zero = 3;
  job.grad_reduce = GradReduceDtype::kFp32;
  const double fp32 = dp_bytes(model, cluster, job, c);
  job.grad_reduce = GradReduceDtype::kBf16;
  const double bf16 = dp_bytes(model, cluster, job, c);
  ASSERT_GT(bf16, 0);
  EXPECT_NEAR(fp32 / bf16, 8.0 / 6.0, 1e-9);
}

}  // namespace
}  // namespace parplan
