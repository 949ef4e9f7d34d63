// Megatron-LM under bf16 accumulates and reduces gradients in fp32
// (megatron/training/arguments.py: "bfloat16 requires gradient accumulation
// and all-reduce to be done in fp32", unless --grad-reduce-in-bf16); fp16
// keeps 16-bit gradients, as the ZeRO paper's 2 bytes per parameter assume.
#include <gtest/gtest.h>

#include "cost/memory.h"
#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/data_parallel_case.h"

namespace parplan {
namespace {

// Data-parallel bytes per step of job `a` over those of job `b`, both on
// config `c` of `model` and `cluster`.
double dp_bytes_ratio(const char* model_name, const char* cluster_name, const ParallelConfig& c,
                      const JobSpec& a, const JobSpec& b) {
  const ModelSpec model = load_model(model_name);
  const ClusterSpec cluster = load_cluster(cluster_name);
  double bytes[2] = {0, 0};
  for (int i = 0; i < 2; ++i)
    for (double tier : estimate_cost(model, cluster, i == 0 ? a : b, c).dp_traffic.bytes) bytes[i] += tier;
  EXPECT_GT(bytes[1], 0);
  return bytes[0] / bytes[1];
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
  const auto [bf16, c] = test::data_parallel_case(64, 128, 2048, 2, 1);
  JobSpec fp16 = bf16;
  fp16.precision = Precision::kFp16;
  // (4 + 2) / (2 + 2) bytes per parameter moved.
  EXPECT_NEAR(dp_bytes_ratio("gpt-7.5b", "dgx-a100", c, bf16, fp16), 1.5, 1e-9);
}

// ZeRO-3 (FSDP) moves per micro-batch the 16-bit weights twice (the forward
// and the backward gather) and the gradients once, in the reduce dtype:
// torchtitan's FSDP2 reduces in fp32 (mixed_precision_reduce "float32"), so
// its traffic is (2 + 2 + 4) / (2 + 2 + 2) of a bf16 reduction's.
TEST(GradientPrecision, ZeroThreeReduceScattersInTheReduceDtype) {
  const auto [job, c] = test::data_parallel_case(16, 32, 4096, 1, 3);
  JobSpec fp32 = job, bf16 = job;
  fp32.grad_reduce = GradReduceDtype::kFp32;
  bf16.grad_reduce = GradReduceDtype::kBf16;
  EXPECT_NEAR(dp_bytes_ratio("llama3-8b", "dgx-h100", c, fp32, bf16), 8.0 / 6.0, 1e-9);
}

}  // namespace
}  // namespace parplan
