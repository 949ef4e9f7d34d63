// PyTorch's FSDP2 (torchtitan) copies every all-gathered unit out of its
// gather buffer into the parameters on the compute stream: ZeRO-3 pays it
// per unshard, the forward's and the backward's, of every micro-batch; and
// copies each unit's gradients into the reduce-scatter input once.
#include <gtest/gtest.h>

#include <string>

#include "cost/compute_time.h"
#include "cost/parameters.h"
#include "cost/step_cost.h"
#include "llama3_8b_h100_case.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

struct Case : test::Llama3_8bZero3OnOneNode {
  double compute_s(bool copy_out) {
    job.fsdp_copy_out = copy_out;
    return estimate_cost(model, cluster, job, config).time.compute_s;
  }
};

// 16-bit parameters read from the gather buffer and written once per
// unshard: 4 bytes per parameter, twice per micro-batch, on every rank's
// whole model (tp 1, pp 1), at the profile's memory-bound rate.
TEST(FsdpCopyOut, ZeroThreePaysTwoCopiesOfTheModelPerMicroBatch) {
  Case k;
  const double micro_batches = 32.0 / (8 * 2);
  const double params = total_params(k.model, k.job.seq);
  // Plus foreach_reduce's copy of the 16-bit gradients into the
  // reduce-scatter input in the reduce dtype (here the model's: 2 + 2 bytes).
  const double expected = micro_batches * (2.0 * memory_bound_s(k.cluster.device, 4.0 * params) +
                                           memory_bound_s(k.cluster.device, (2.0 + 2.0) * params));
  const double added = k.compute_s(true) - k.compute_s(false);
  EXPECT_NEAR(added, expected, 1e-3 * expected);
}

// torchtitan reduces in fp32 (mixed_precision_reduce): the copy-in writes
// 4 bytes per parameter instead of 2.
TEST(FsdpCopyOut, Fp32ReduceWritesFourBytesPerParameter) {
  Case k;
  const double micro_batches = 32.0 / (8 * 2);
  const double params = total_params(k.model, k.job.seq);
  const double bf16 = k.compute_s(true);
  k.job.grad_reduce = GradReduceDtype::kFp32;
  const double fp32 = k.compute_s(true);
  const double expected = micro_batches * memory_bound_s(k.cluster.device, 2.0 * params);
  EXPECT_NEAR(fp32 - bf16, expected, 1e-3 * expected);
}

TEST(FsdpCopyOut, NothingToCopyWithoutShardedParameters) {
  Case k;
  k.config.zero = 1;
  EXPECT_DOUBLE_EQ(k.compute_s(true), k.compute_s(false));
  Case alone;
  alone.job.gpus = 1, alone.config.dp = 1, alone.job.gbs = alone.config.gbs = 4;
  EXPECT_DOUBLE_EQ(alone.compute_s(true), alone.compute_s(false));
}

// Only torchtitan's recipe runs FSDP2; DeepSpeed and Megatron FSDP gather
// into flat buffers the parameters are views of.
TEST(FsdpCopyOut, OnlyTorchtitansRecipe) {
  for (const std::string engine : {"torchtitan", "megatron", "deepspeed"}) {
    JobSpec job;
    apply_engine_recipe(engine, job);
    EXPECT_EQ(job.fsdp_copy_out, engine == "torchtitan") << engine;
  }
}

// A run of an FSDP1 engine (llm-foundry's Composer: flat parameters are
// views of the gather buffer) costed with torchtitan's recipe says
// `fsdp_copy_out: false`; without the key the engine's recipe holds.
TEST(FsdpCopyOut, RunFileKeyOverridesTheEnginesRecipe) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const std::string run = run_file_test::kTorchtitanLlamaRun;
  EXPECT_TRUE(run_file_test::read_one_run("copy_out", run, cluster).job.fsdp_copy_out);
  EXPECT_FALSE(
      run_file_test::read_one_run("copy_out", run + ", fsdp_copy_out: false", cluster).job.fsdp_copy_out);
  run_file_test::expect_error_naming(
      [&] { run_file_test::read_one_run("copy_out", run + ", fsdp_copy_out: sometimes", cluster); },
      "fsdp_copy_out");
}

}  // namespace
}  // namespace parplan
