// Held-out published runs that ran must fit (issue 12): torchtitan's runs
// used Grand Teton H100s with 96 GB HBM2e (pytorch/torchtitan
// benchmarks/llama3_h100_202412_torchtitan.md @ 31a17bf, "Hardware"), which a
// run names with `cluster: grand-teton-h100` (`hbm_gib` where only the HBM differs); FSDP in torchtitan
// shards over dp x cp, so the "FSDP 1, CP 8" rows shard their states over the 8 CP ranks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cost/memory.h"
#include "cost/step_cost.h"
#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/model_loader.h"
#include "src/io/run_file_reader.h"
#include "src/io/yaml_fields.h"
#include "tests/kernel_csv.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

using run_file_test::heldout_path;

std::string write_run(const std::string& fields) {
  return run_file_test::write_one_run(
      "heldout_hbm",
      "name: r, model: llama3-8b, gpus: 8, gbs: 8, seq: 32768, step_s: 8, "
      "engine: torchtitan, config: {tp: 1, pp: 1, mbs: 1, zero: 3, recompute: full}" +
          fields);
}

TEST(RunHbm, ReplacesTheCapacityByTheProfilesUsableFraction) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const FitRun plain = read_run_yaml(write_run(""), h100).front();
  const FitRun own = read_run_yaml(write_run(", hbm_gib: 96"), h100).front();
  EXPECT_DOUBLE_EQ(plain.hbm_bytes, 0.0);
  EXPECT_DOUBLE_EQ(own.hbm_bytes, 96.0 * kGib);
  EXPECT_DOUBLE_EQ(run_cluster(plain, h100).device.usable_hbm_bytes(), h100.device.usable_hbm_bytes());
  const ClusterSpec c = run_cluster(own, h100);
  EXPECT_DOUBLE_EQ(c.device.hbm_bytes, 96.0 * kGib);
  EXPECT_NEAR(c.device.usable_hbm_bytes() / c.device.hbm_bytes,
              h100.device.usable_hbm_bytes() / h100.device.hbm_bytes, 1e-12);
  // Only the memory check changes: the step time is the profile's.
  EXPECT_DOUBLE_EQ(predict_run(own, h100).step_s, predict_run(plain, h100).step_s);
  EXPECT_GE(predict_run(own, h100).fits, predict_run(plain, h100).fits);
}

TEST(RunHbm, OutOfRangeIsRefused) {
  EXPECT_ANY_THROW(read_run_yaml(write_run(", hbm_gib: 0"), load_cluster("dgx-h100")));
}

// The grand-teton-h100 profile carries the source's 96 GB and 2.4 TB/s; every
// torchtitan run (tagged h100-500w) names it as its hardware.
TEST(HeldoutHardware, TorchtitanRunsNameTheGrandTetonProfile) {
  const ClusterSpec gt = load_cluster("grand-teton-h100");
  EXPECT_DOUBLE_EQ(gt.device.hbm_bytes, 96.0 * kGib);
  EXPECT_DOUBLE_EQ(gt.device.hbm_bytes_per_s, 2.4e12);
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const auto runs = read_run_yaml(heldout_path(), h100);
  const YAML::Node nodes = load_yaml_file(heldout_path())["runs"];
  int tagged = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    bool grand_teton = false, h200 = false, frontier = false, a100 = false;
    for (const auto& tag : nodes[i]["category"]) {
      grand_teton = grand_teton || tag.as<std::string>() == "h100-500w";
      h200 = h200 || tag.as<std::string>() == "h200";
      frontier = frontier || tag.as<std::string>() == "frontier";
      a100 = a100 || tag.as<std::string>() == "a100";
    }
    EXPECT_DOUBLE_EQ(runs[i].hbm_bytes, 0.0) << runs[i].name;
    if (h200 || frontier || a100) {
      ASSERT_TRUE(runs[i].own_cluster.has_value()) << runs[i].name;
      EXPECT_EQ(runs[i].own_cluster->name, h200 ? "dgx-h200" : frontier ? "frontier" : "jean-zay-a100");
      continue;
    }
    if (!grand_teton) {
      EXPECT_FALSE(runs[i].own_cluster.has_value()) << runs[i].name;
      continue;
    }
    ++tagged;
    ASSERT_TRUE(runs[i].own_cluster.has_value()) << runs[i].name;
    EXPECT_EQ(runs[i].own_cluster->name, "grand-teton-h100");
    EXPECT_DOUBLE_EQ(run_cluster(runs[i], h100).device.hbm_bytes, gt.device.hbm_bytes) << runs[i].name;
  }
  EXPECT_EQ(tagged, 26);
}

// torchtitan's Table 2 runs read 83.9-84.5 GiB (the allocator's reserved
// peak): more than an 80 GB H100 can allocate, so the part that ran them
// had more HBM, and parplan must find them fitting there.
TEST(HeldoutHardware, TorchtitanLongSequenceRunsFitTheirOwnHbm) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  EXPECT_GT(83.9 * kGib, h100.device.usable_hbm_bytes());
  for (const auto& run : read_run_yaml(heldout_path(), h100)) {
    if (run.name.rfind("tt-", 0) != 0) continue;
    EXPECT_TRUE(predict_run(run, h100).fits) << run.name;
  }
}

// "FSDP 1, CP 8": torchtitan applies FSDP over the dp_shard x cp mesh
// (parallelize_llama: `dp_shard_enabled or cp_enabled`, dims "dp_shard_cp"),
// so the states are sharded over the 8 CP ranks: an eighth of the unsharded
// zero-0 states (states are 2 + 4 + 12 bytes per parameter, all sharded).
TEST(HeldoutHardware, FsdpOverContextParallelRanksShardsTheStates) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  for (const auto& run : read_run_yaml(heldout_path(), h100)) {
    if (run.name != "tt-llama3.1-8b-256k-cp8") continue;
    ASSERT_EQ(run.config.dp, 1);
    ASSERT_EQ(run.config.cp, 8);
    ASSERT_EQ(run.config.zero, 3);
    ParallelConfig unsharded = run.config;
    unsharded.zero = 0;
    const MemoryBreakdown sharded = estimate_memory(run.model, h100, run.job, run.config);
    const MemoryBreakdown whole = estimate_memory(run.model, h100, run.job, unsharded);
    // FSDP keeps the shards in fp32, the optimizer's master copy: the 16-bit
    // weights (2 bytes) and the master (4 of the optimizer's) become one
    // 4-byte shard (cost/memory.h keep_fsdp_fp32_shards).
    EXPECT_NEAR(sharded.params_bytes, 2.0 * whole.params_bytes / 8.0, 1e-9 * whole.params_bytes);
    EXPECT_NEAR(sharded.grads_bytes, whole.grads_bytes / 8.0, 1e-9 * whole.params_bytes);
    EXPECT_NEAR(sharded.optimizer_bytes, (whole.optimizer_bytes - 2.0 * whole.params_bytes) / 8.0,
                1e-9 * whole.params_bytes);
    return;
  }
  FAIL() << "tt-llama3.1-8b-256k-cp8 missing";
}

// Transformer Engine's Triton cross-entropy (triton/cross_entropy.py @
// 02965d2) writes the gradient into the 16-bit logits in place: 2 bytes per
// logit of the local vocabulary shard, half of the fp32 softmax a
// vocab-parallel kernel keeps (Korthikanti 2022 sec. 4.3: 4 s b V / t).
TEST(LossKernel, TeInPlaceKeepsOnlyTheSixteenBitLogits) {
  const ModelSpec model = load_model("llama3-8b");
  ActivationShape shape;
  shape.seq = 4096;
  shape.micro_batch = 2;
  shape.tp = 2;
  shape.cross_entropy = CrossEntropy::kTeInPlace;
  EXPECT_DOUBLE_EQ(logits_bytes(model, shape), 2.0 * 8192 * double(model.vocab) / 2);
  shape.cross_entropy = CrossEntropy::kFused;
  EXPECT_DOUBLE_EQ(logits_bytes(model, shape), 4.0 * 8192 * double(model.vocab) / 2);
  EXPECT_EQ(
      read_run_yaml(write_run(", cross_entropy: te"), load_cluster("dgx-h100")).front().job.cross_entropy,
      CrossEntropy::kTeInPlace);
}

// Issue 12: the Megatron-Bridge configurations that ran on DGX-H100 fit the
// dgx-h100 profile.
TEST(HeldoutHardware, MegatronBridgeRunsFitTheDgxH100) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  int count = 0;
  for (const auto& run : read_run_yaml(heldout_path(), h100)) {
    if (run.name.rfind("mb2", 0) != 0) continue;
    ++count;
    EXPECT_EQ(run.job.cross_entropy, CrossEntropy::kTeInPlace) << run.name;
    EXPECT_TRUE(predict_run(run, h100).fits) << run.name;
  }
  EXPECT_EQ(count, 15);
}

// torchao's Float8Linear (torchtitan's fp8) saves the 16-bit input and
// weight (torchao/float8/float8_linear.py @ 7ca1bfb), so fp8 keeps the bf16
// activations; Transformer Engine's fp8 saves the 1-byte casts. torchtitan's
// Table 1 reads 77.0 GiB compiled in bf16 and 76.8 GiB with Float8, the
// caching allocator's reserved peak: it bounds what the run allocated from
// above, and FSDP2 reserved at most 1.34x its allocated peak on an H100
// (calibration/h100-kernels/memory_fsdp.csv).
TEST(Fp8Saves, TorchaoKeepsTheSixteenBitInputs) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  for (const auto& run : read_run_yaml(heldout_path(), h100)) {
    if (run.name == "mb2511-llama3-8b-fsdp8") {
      EXPECT_TRUE(run.job.fp8_saves_cast);  // Megatron + TE
    }
    if (run.name != "tt-llama3.1-8b-fsdp8-fp8") continue;
    EXPECT_FALSE(run.job.fp8_saves_cast);
    JobSpec bf16 = run.job;
    bf16.precision = Precision::kBf16;
    const ParallelConfig& c = run.config;
    const MemoryBreakdown fp8 = estimate_memory(run.model, h100, run.job, c);
    EXPECT_DOUBLE_EQ(fp8.activations_bytes, estimate_memory(run.model, h100, bf16, c).activations_bytes);
    EXPECT_LE(fp8.peak_bytes - h100.device.reserved_bytes, 76.8 * kGib);
    EXPECT_GE(fp8.peak_bytes * test::most_reserved_over_allocated(), 76.8 * kGib);
    JobSpec cast = run.job;
    cast.fp8_saves_cast = true;
    EXPECT_LT(estimate_memory(run.model, h100, cast, c).activations_bytes, fp8.activations_bytes);
    return;
  }
  FAIL() << "tt-llama3.1-8b-fsdp8-fp8 missing";
}

}  // namespace
}  // namespace parplan
