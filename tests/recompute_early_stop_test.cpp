// Full recomputation under PyTorch's non-reentrant checkpoint stops before a
// layer's last linear (cost/recompute_replay.h): torchtitan's (and
// Composer's) full checkpointing replays the layer but the FFN's output
// projection and its output's tensor-parallel reduction; Megatron-LM's and
// DeepSpeed's checkpoints replay the whole layer.
#include <gtest/gtest.h>

#include "cost/compute_time.h"
#include "cost/recompute_replay.h"
#include "cost/step_cost.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/tune_support.h"

namespace parplan {
namespace recompute_early_stop_test {

TEST(RecomputeEarlyStop, OnlyThePyTorchCheckpointStopsEarly) {
  EXPECT_TRUE(test::recipe_job("torchtitan", 8, 8, 8192).checkpoint_early_stop);
  for (const char* engine : {"megatron", "deepspeed", "megatron-deepspeed"})
    EXPECT_FALSE(test::recipe_job(engine, 8, 8, 8192).checkpoint_early_stop) << engine;
}

TEST(RecomputeEarlyStop, EagerFp8LinearsComputeBeforeTheyStop) {
  JobSpec job = test::recipe_job("torchtitan", 8, 8, 8192);
  job.precision = Precision::kBf16;
  job.fused_elementwise = false;
  EXPECT_TRUE(recompute_skips_last_linear(job));
  // torchao's Float8Linear and Transformer Engine's Linear pack their saved
  // tensors after their forward returns.
  job.precision = Precision::kFp8;
  EXPECT_FALSE(recompute_skips_last_linear(job));
  // Compiled, the backward graph recomputes only what it reads.
  job.fused_elementwise = true;
  EXPECT_TRUE(recompute_skips_last_linear(job));
  job.checkpoint_early_stop = false;
  EXPECT_FALSE(recompute_skips_last_linear(job));
}

struct Replay {
  double compute_s = 0;
  double tp_s = 0;
  double hardware_flops = 0;
};

Replay replay(bool early_stop, Recompute recompute, int tp) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job = test::recipe_job("torchtitan", 8, 8 / tp, 8192);
  job.precision = Precision::kBf16;
  job.checkpoint_early_stop = early_stop;
  ParallelConfig c;
  c.tp = tp;
  c.sp = tp > 1;
  c.dp = 8 / tp;
  c.mbs = 1;
  c.gbs = 8 / tp;
  c.zero = 1;
  c.recompute = recompute;
  const CostReport r = estimate_cost(model, cluster, job, c);
  return {r.time.compute_s, r.time.tp_comm_s, r.hardware_flops};
}

TEST(RecomputeEarlyStop, TheReplayLeavesOutTheOutputProjectionOnly) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  // One micro-batch of 8192 tokens per rank: every layer's replay is one
  // output projection shorter, [8192 x ffn] x [ffn x h].
  const double projection_s = gemm_time_s(cluster.device, cluster.device.peak_flops_per_s(Precision::kBf16),
                                          8192, model.hidden, model.ffn_hidden);
  const Replay whole = replay(false, Recompute::kFull, 1);
  const Replay stopped = replay(true, Recompute::kFull, 1);
  EXPECT_NEAR(whole.compute_s - stopped.compute_s, model.layers * projection_s, 1e-9);
  // Hardware FLOPs count what runs: 2 m n k of it fewer per layer.
  EXPECT_NEAR(whole.hardware_flops - stopped.hardware_flops,
              model.layers * 2.0 * 8 * 8192 * model.hidden * static_cast<double>(model.ffn_hidden),
              1e-9 * whole.hardware_flops);
  // Nothing is replayed without recomputation, so nothing changes.
  EXPECT_DOUBLE_EQ(replay(false, Recompute::kNone, 1).compute_s, replay(true, Recompute::kNone, 1).compute_s);
}

TEST(RecomputeEarlyStop, TheProjectionsReductionIsNotReplayedEither) {
  const Replay whole = replay(false, Recompute::kFull, 8);
  const Replay stopped = replay(true, Recompute::kFull, 8);
  const Replay none = replay(true, Recompute::kNone, 8);
  EXPECT_LT(stopped.tp_s, whole.tp_s);
  // The rest of the forward's traffic is still replayed.
  EXPECT_GT(stopped.tp_s, none.tp_s);
}

}  // namespace recompute_early_stop_test
}  // namespace parplan
