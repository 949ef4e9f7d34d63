// What the recompute-split certificate takes one recomputed layer to free
// (StageCoefficients::recompute_saved_bytes) is what the memory model frees:
// across a stage's layers it adds up to the peak without recomputation less
// the peak with every layer recomputed, within 5 % (the full-recompute peak
// also holds the one layer being recomputed), for a dense model and for an
// MoE model, whose expert activations a dense layer's formula missed (the
// plan of Qwen3-235B-A22B on 256 H100 was certified infeasible before: half
// the saving counted).
#include <gtest/gtest.h>

#include <string>

#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

// One stage (pp 1) with sequence parallelism over tp.
void expect_saving_adds_up(const std::string& model_name, int tp, int dp, int zero, int ep) {
  ParallelConfig c;
  c.tp = tp;
  c.dp = dp;
  c.sp = true;
  c.zero = zero;
  c.ep = ep;
  c.mbs = 2;
  const int gpus = tp * dp;
  const ModelSpec model = load_model(model_name);
  const ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job;
  job.gpus = gpus;
  job.gbs = 256;
  job.seq = 4096;
  c.gbs = job.gbs;
  c.recompute = Recompute::kNone;
  const double none_bytes = estimate_cost(model, cluster, job, c).memory.peak_bytes;
  const StageCoefficients k = stage_coefficients(model, cluster, job, c, 0);
  ParallelConfig full = c;
  full.recompute = Recompute::kFull;
  full.recompute_layers = 0;  // every layer
  const double full_bytes = estimate_cost(model, cluster, job, full).memory.peak_bytes;
  const int layers = model.layers / c.pp;
  ASSERT_GT(none_bytes, full_bytes) << model_name;
  EXPECT_NEAR(layers * k.recompute_saved_bytes, none_bytes - full_bytes, 0.05 * (none_bytes - full_bytes))
      << model_name;
}

TEST(RecomputeSaving, AddsUpToTheMemoryModelsSaving) {
  expect_saving_adds_up("llama3-70b", 8, 8, 3, 1);
  expect_saving_adds_up("mixtral-8x7b", 2, 32, 1, 8);
}

}  // namespace
}  // namespace parplan
