// Megatron-LM's --tp-comm-overlap (Transformer Engine userbuffers): with
// sequence parallelism each tp all-gather / reduce-scatter is pipelined with
// its linear layer's GEMM, so per layer it costs what cost/overlap.h's
// formula (Lee et al. 2025's published overlap slowdown) leaves exposed
// beside the forward GEMMs, and beside twice that work in backward.
#include <gtest/gtest.h>

#include "cost/overlap.h"
#include "cost/step_internal.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/cli_support.h"
#include "tests/model_on_cluster.h"

namespace parplan {
namespace {

struct OverlapCase : test::ModelOnCluster {
  OverlapCase() : ModelOnCluster("llama3-70b", "dgx-h100", 64, 128, 8192) {
    config.tp = 8;
    config.pp = 4;
    config.dp = 2;
    config.sp = true;
    config.zero = 1;
    config.mbs = 1;
  }
};

TEST(TpCommOverlap, ExposesOnlyWhatOutlastsTheGemms) {
  OverlapCase s;
  const detail::PerLayerCosts plain = detail::per_layer_costs(s.model, s.cluster, s.job, s.config);
  s.job.tp_comm_overlap = true;
  const detail::PerLayerCosts overlapped = detail::per_layer_costs(s.model, s.cluster, s.job, s.config);
  const double slowdown = s.cluster.device.overlap_compute_slowdown;
  const double gemm = plain.dense.gemm_forward_s;
  ASSERT_GT(gemm, 0);
  ASSERT_GT(plain.comm.tp_forward_s, 0);
  EXPECT_DOUBLE_EQ(overlapped.comm.tp_forward_s,
                   exposed_after_overlap_s(plain.comm.tp_forward_s, gemm, slowdown));
  EXPECT_DOUBLE_EQ(overlapped.comm.tp_backward_s,
                   exposed_after_overlap_s(plain.comm.tp_backward_s, 2.0 * gemm, slowdown));
  EXPECT_LT(overlapped.comm.tp_forward_s, plain.comm.tp_forward_s);
  // Compute is untouched.
  EXPECT_DOUBLE_EQ(overlapped.dense.forward_s, plain.dense.forward_s);
}

TEST(TpCommOverlap, NeedsSequenceParallelism) {
  OverlapCase s;
  s.config.sp = false;
  const detail::PerLayerCosts plain = detail::per_layer_costs(s.model, s.cluster, s.job, s.config);
  s.job.tp_comm_overlap = true;
  const detail::PerLayerCosts asked = detail::per_layer_costs(s.model, s.cluster, s.job, s.config);
  EXPECT_DOUBLE_EQ(asked.comm.tp_forward_s, plain.comm.tp_forward_s);
  EXPECT_DOUBLE_EQ(asked.comm.tp_backward_s, plain.comm.tp_backward_s);
}

TEST(TpCommOverlap, IsMegatronOrTorchtitan) {
  const std::string job =
      "estimate --model llama3-70b --cluster dgx-h100 --gpus 64 --gbs 128 --seq 8192 --tp 8 "
      "--pp 4 --sp --zero 1 --tp-comm-overlap";
  const test::CliRun megatron = test::run_cli(job + " --engine megatron");
  EXPECT_EQ(megatron.exit_code, 0) << megatron.err;
  const test::CliRun deepspeed = test::run_cli(job + " --engine deepspeed");
  EXPECT_EQ(deepspeed.exit_code, 2) << deepspeed.err;
  EXPECT_EQ(test::line_count(deepspeed.err), 1) << deepspeed.err;
  EXPECT_NE(deepspeed.err.find("--tp-comm-overlap"), std::string::npos) << deepspeed.err;
}

}  // namespace
}  // namespace parplan
