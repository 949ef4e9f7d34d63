// Two engine recipes that change what a device holds: Megatron-LM's
// precision-aware optimizer (2-byte master remainders) and DeepSpeed
// activation checkpointing's partition_activations (checkpoints split over
// tp), each costed, emitted and checked against the engine's rule.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "cost/step_cost.h"
#include "emit_fixtures/emit_test_util.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/model_on_cluster.h"

namespace parplan::emit_test {
namespace {

struct Job : test::ModelOnCluster {
  Job() : ModelOnCluster("llama3-70b", "dgx-h100", 64, 128, 8192) {
    config.tp = 8, config.pp = 4, config.dp = 2, config.mbs = 1, config.gbs = 128, config.zero = 1;
    config.sp = true, config.recompute = Recompute::kSelective;
  }
};

TEST(PrecisionAwareOptimizer, MasterRemaindersSaveTwoBytesPerShardedParameter) {
  Job j;
  const CostReport adam = j.cost();
  j.job.precision_aware_optimizer = true;
  const CostReport remainders = j.cost();
  // fp32 master (4) + m (4) + v (4) = 12 bytes, against 2 + 4 + 4 = 10
  // (megatron/core/optimizer/distrib_optimizer.py:735-740 at core_r0.13.0).
  EXPECT_NEAR(remainders.memory.optimizer_bytes / adam.memory.optimizer_bytes, 10.0 / 12.0, 1e-12);
  EXPECT_DOUBLE_EQ(remainders.memory.params_bytes, adam.memory.params_bytes);
  EXPECT_DOUBLE_EQ(remainders.time.step_s, adam.time.step_s);
  // fp16 keeps full fp32 masters; without the distributed optimizer the
  // engine refuses the flag, and so does every other engine.
  j.job.precision = Precision::kFp16;
  EXPECT_DOUBLE_EQ(j.cost().memory.optimizer_bytes, [&] {
    Job plain;
    plain.job.precision = Precision::kFp16;
    return plain.cost().memory.optimizer_bytes;
  }());
  j.job.precision = Precision::kBf16;
  const EngineCapabilities& megatron = engine_capabilities(Engine::kMegatron);
  EXPECT_EQ(capability_problem(megatron, j.model, j.job, j.config), nullptr);
  j.config.zero = 0;
  EXPECT_NE(capability_problem(megatron, j.model, j.job, j.config), nullptr);
  j.config.zero = 1;
  EXPECT_NE(capability_problem(engine_capabilities(Engine::kTorchtitan), j.model, j.job, j.config), nullptr);
}

TEST(PrecisionAwareOptimizer, ContradictoryRequestsExitTwo) {
  const std::string job = "plan --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 128 --seq 8192 ";
  for (const char* extra :
       {"--precision-aware-optimizer --engine torchtitan", "--precision-aware-optimizer --optimizer sgd",
        "--precision-aware-optimizer --precision fp16"}) {
    parplan::test::expect_refusal(parplan::test::run_cli(job + extra), "--precision-aware-optimizer", extra);
  }
  EXPECT_EQ(
      parplan::test::run_cli(job + "--precision-aware-optimizer --engine megatron --no-timings").exit_code,
      0);
}

TEST(PartitionActivations, CheckpointsSplitOverTensorParallelism) {
  Job j;
  j.config.sp = false;
  j.config.recompute = Recompute::kFull;
  const CostReport whole = j.cost();
  j.job.partition_activations = true;
  const CostReport split = j.cost();
  // Each kept layer input is 2 s b h bytes; split, 2 s b h / tp. The stage's
  // 20 layers are all checkpointed, pp = 4 micro-batches in flight on the
  // first stage (1F1B), transients scaled by the allocator allowance.
  const double input = 2.0 * 8192 * 1 * 8192;
  const double saved =
      4 * 20 * input * (1.0 - 1.0 / 8) * (1.0 + j.cluster.device.allocator_headroom_fraction);
  EXPECT_NEAR(whole.memory.peak_bytes - split.memory.peak_bytes, saved, 1e-6 * saved);
  // The gather before each recomputation costs time, never saves it.
  EXPECT_GT(split.time.step_s, whole.time.step_s);
  // Sequence parallelism splits the checkpoints already: nothing changes.
  j.config.sp = true;
  j.job.partition_activations = false;
  const CostReport sp = j.cost();
  j.job.partition_activations = true;
  EXPECT_DOUBLE_EQ(j.cost().memory.peak_bytes, sp.memory.peak_bytes);
  EXPECT_DOUBLE_EQ(j.cost().time.step_s, sp.time.step_s);
}

TEST(PartitionActivations, MegatronDeepSpeedWritesItWhereCosted) {
  Plan plan = gpt3_175b_on_1024_a100();
  plan.config.vp = 1;
  plan.config.sp = false;
  plan.config.recompute = Recompute::kFull;
  plan.job.partition_activations = true;
  for (const bool sp : {false, true}) {
    plan.config.sp = sp;
    TempDir dir;
    emit_launch_files(plan, {Engine::kMegatronDeepSpeed, Launcher::kTorchrun, dir.path / "out"});
    const std::string launch = read_text(dir.path / "out" / "launch.sh");
    const nlohmann::json cfg = nlohmann::json::parse(read_text(dir.path / "out" / "ds_config.json"));
    // megatron/initialize.py:186-189 hands args.partition_activations to
    // deepspeed.checkpointing.configure, overriding the file's key.
    EXPECT_EQ(launch.find("--partition-activations") != std::string::npos, !sp);
    EXPECT_EQ(cfg["activation_checkpointing"]["partition_activations"].get<bool>(), !sp);
  }
}

TEST(PartitionActivations, IsTheMegatronDeepSpeedRecipe) {
  EngineSelection mds = parse_engine_selection("megatron-deepspeed");
  EXPECT_TRUE(engine_recipe_defaults(mds).partition_activations);
  EXPECT_FALSE(engine_recipe_defaults(parse_engine_selection("megatron")).partition_activations);
  EXPECT_FALSE(engine_recipe_defaults(parse_engine_selection("any")).partition_activations);
}

}  // namespace
}  // namespace parplan::emit_test
