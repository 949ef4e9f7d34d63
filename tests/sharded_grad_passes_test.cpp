// The passes FSDP1 and DeepSpeed ZeRO-3 run over each unit's gradient
// before its reduce-scatter, once per micro-batch (cost/sharded_grad_passes.h),
// and the recipes and run-file key that select them.
#include "cost/sharded_grad_passes.h"

#include <gtest/gtest.h>

#include <string>

#include "cost/compute_time.h"
#include "cost/parameters.h"
#include "cost/step_cost.h"
#include "llama3_8b_h100_case.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

struct GradPassCase : test::Llama3_8bZero3OnOneNode {
  double added_s(ShardedGradPasses passes) {
    job.sharded_grad_passes = ShardedGradPasses::kNone;
    const double without = estimate_cost(model, cluster, job, config).time.compute_s;
    job.sharded_grad_passes = passes;
    return estimate_cost(model, cluster, job, config).time.compute_s - without;
  }
  double per_micro_batch_s(double bytes_per_param) {
    const double micro_batches = 32.0 / (8 * 2);
    return micro_batches * memory_bound_s(cluster.device, bytes_per_param * total_params(model, job.seq));
  }
};

// FSDP1 casts each unit's 16-bit gradient to the fp32 reduce dtype (2 bytes
// read, 4 written per parameter), divides it in place by the pre-divide
// factor (4 + 4) and the reduce-scatter's shard by the post-divide factor
// (4 + 4 over 8 ranks).
TEST(ShardedGradPasses, Fsdp1CastsAndDivides) {
  GradPassCase k;
  k.job.grad_reduce = GradReduceDtype::kFp32;
  const double expected = k.per_micro_batch_s((2.0 + 4.0) + (4.0 + 4.0) + (4.0 + 4.0) / 8.0);
  EXPECT_NEAR(k.added_s(ShardedGradPasses::kFsdp1), expected, 1e-3 * expected);
}

// Reducing in the gradients' own 16-bit dtype needs no cast: the divisions
// alone, 2 + 2 bytes per parameter and per shard element.
TEST(ShardedGradPasses, Fsdp1NoCastInTheGradientsDtype) {
  GradPassCase k;
  k.job.grad_reduce = GradReduceDtype::kBf16;
  const double expected = k.per_micro_batch_s(4.0 + 4.0 / 8.0);
  EXPECT_NEAR(k.added_s(ShardedGradPasses::kFsdp1), expected, 1e-3 * expected);
}

// DeepSpeed ZeRO-3 in the model's 16-bit dtype: the copy into the
// contiguous bucket, reduce_scatter_coalesced's concatenation and its
// in-place pre-division, 2 + 2 bytes each.
TEST(ShardedGradPasses, DeepSpeedCopiesConcatenatesAndDivides) {
  GradPassCase k;
  const double expected = k.per_micro_batch_s(3.0 * (2.0 + 2.0));
  EXPECT_NEAR(k.added_s(ShardedGradPasses::kDeepSpeedZero3), expected, 1e-3 * expected);
  // communication_data_type fp32: a cast (2 + 4), concatenation and
  // division at 4 bytes.
  EXPECT_DOUBLE_EQ(sharded_grad_pass_bytes(ShardedGradPasses::kDeepSpeedZero3, 3, 4.0, 8),
                   4.0 + 6.0 + 8.0 + 8.0);
}

// Whole gradients (ZeRO-1), DeepSpeed's ZeRO-2 (its bucketed reduces are
// another path) and one rank have none.
TEST(ShardedGradPasses, NoneWithoutShardedReduceScatter) {
  EXPECT_EQ(sharded_grad_pass_bytes(ShardedGradPasses::kFsdp1, 1, 4.0, 8), 0.0);
  EXPECT_GT(sharded_grad_pass_bytes(ShardedGradPasses::kFsdp1, 2, 4.0, 8), 0.0);
  EXPECT_EQ(sharded_grad_pass_bytes(ShardedGradPasses::kDeepSpeedZero3, 2, 2.0, 8), 0.0);
  EXPECT_EQ(sharded_grad_pass_bytes(ShardedGradPasses::kDeepSpeedZero3, 3, 2.0, 1), 0.0);
  EXPECT_EQ(sharded_grad_pass_bytes(ShardedGradPasses::kNone, 3, 4.0, 8), 0.0);
  GradPassCase alone;
  alone.job.gpus = 1, alone.config.dp = 1, alone.job.gbs = alone.config.gbs = 4;
  EXPECT_DOUBLE_EQ(alone.added_s(ShardedGradPasses::kFsdp1), 0.0);
}

// DeepSpeed's and Megatron-DeepSpeed's recipes run DeepSpeed's ZeRO;
// torchtitan (FSDP2) and Megatron (its own optimizer) do not.
TEST(ShardedGradPasses, DeepSpeedRecipes) {
  for (const std::string engine : {"deepspeed", "megatron-deepspeed", "torchtitan", "megatron"}) {
    JobSpec job;
    apply_engine_recipe(engine, job);
    const bool deepspeed = engine == "deepspeed" || engine == "megatron-deepspeed";
    EXPECT_EQ(job.sharded_grad_passes,
              deepspeed ? ShardedGradPasses::kDeepSpeedZero3 : ShardedGradPasses::kNone)
        << engine;
  }
}

// `fsdp_version: 1` (llm-foundry's Composer) is FSDP1: no copy-out, the
// gradient passes; 2 is FSDP2. With fsdp_copy_out as well, or another
// version, the file is refused naming the field.
TEST(ShardedGradPasses, RunFileFsdpVersionKey) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const std::string run =
      "name: r, model: llama3-8b, gpus: 8, gbs: 32, seq: 8192, engine: torchtitan, step_s: 10, "
      "config: {tp: 1, pp: 1, mbs: 2, zero: 3, recompute: none}";
  const JobSpec v1 = run_file_test::read_one_run("fsdp1", run + ", fsdp_version: 1", cluster).job;
  EXPECT_FALSE(v1.fsdp_copy_out);
  EXPECT_EQ(v1.sharded_grad_passes, ShardedGradPasses::kFsdp1);
  const JobSpec v2 = run_file_test::read_one_run("fsdp2", run + ", fsdp_version: 2", cluster).job;
  EXPECT_TRUE(v2.fsdp_copy_out);
  EXPECT_EQ(v2.sharded_grad_passes, ShardedGradPasses::kNone);
  for (const char* bad :
       {", fsdp_version: 3", ", fsdp_version: 1.5", ", fsdp_version: 1, fsdp_copy_out: false"})
    run_file_test::expect_error_naming([&] { run_file_test::read_one_run("bad", run + bad, cluster); },
                                       "fsdp_version");
}

}  // namespace
}  // namespace parplan
