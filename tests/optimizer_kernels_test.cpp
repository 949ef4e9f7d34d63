// The optimizer step's memory passes (cost/compute_time.h optimizer_step_s):
// a fused AdamW reads and writes each fp32 state once (30 bytes per
// parameter with the 16-bit copy); Composer's DecoupledAdamW (llm-foundry)
// runs one PyTorch operator per update term, 88 bytes per parameter counted
// from composer/optim/decoupled_weight_decay.py @ v0.17.0, plus its gradient
// clipping's norm and scale passes, 12.
#include <gtest/gtest.h>

#include <string>

#include "cost/compute_time.h"
#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

TEST(OptimizerKernels, PerOperatorStepMovesTheTermsBytes) {
  const DeviceSpec device = load_cluster("dgx-h100").device;
  const double params = 1.6e9;
  EXPECT_DOUBLE_EQ(optimizer_step_s(device, params), memory_bound_s(device, 30.0 * params));
  EXPECT_DOUBLE_EQ(optimizer_step_s(device, params, OptimizerKernels::kPerOperator),
                   memory_bound_s(device, (8 + 8 + 12 + 8 + 12 + 8 + 8 + 8 + 16 + 12) * params));
}

TEST(OptimizerKernels, RunFileKey) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const auto run =
      run_file_test::run_with("optimizer_kernels",
                              "name: r, model: gpt-7.5b, gpus: 8, gbs: 16, seq: 2048, step_s: 1, "
                              "engine: torchtitan, fused_elementwise: false, "
                              "config: {tp: 1, zero: 3, mbs: 2}",
                              cluster);
  const FitRun fused = run("");
  const FitRun per_operator = run(", optimizer_kernels: per-operator");
  EXPECT_EQ(fused.job.optimizer_kernels, OptimizerKernels::kFused);
  EXPECT_EQ(run(", optimizer_kernels: fused").job.optimizer_kernels, OptimizerKernels::kFused);
  EXPECT_EQ(per_operator.job.optimizer_kernels, OptimizerKernels::kPerOperator);
  EXPECT_GT(predict_run(per_operator, cluster).step_s, predict_run(fused, cluster).step_s);
  run_file_test::expect_error_naming([&] { run(", optimizer_kernels: foreach"); }, "optimizer_kernels");
}

}  // namespace
}  // namespace parplan
