// The held-out published runs (calibration/heldout-published-runs.yaml) are
// all expressible and predicted on the shipped dgx-h100 profile, carry their
// source and category, are disjoint from the calibration runs, and the
// run-file keys they need (engine, ep, etp, ep_overlap, a2a_hierarchical, moe_imbalance) read as the
// engines define them. The errors themselves are reported by
// bench/heldout_bench, not asserted here.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/measured_figure.h"
#include "src/io/model_loader.h"
#include "src/io/run_file_reader.h"
#include "src/io/yaml_fields.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

using run_file_test::heldout_path;
// The runs the Triton attention kernel's H100 factor is fitted to
// (cost/attention_kernels.cpp): the same format, not held out.
std::string triton_fit_path() { return (data_dir() / "calibration/llm-foundry-triton-fit.yaml").string(); }

void expect_expressible_and_predicted(const std::string& path, std::size_t least_runs) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const auto runs = read_run_yaml(path, cluster);
  const YAML::Node nodes = load_yaml_file(path)["runs"];
  ASSERT_EQ(runs.size(), nodes.size());
  ASSERT_GE(runs.size(), least_runs);
  const std::set<std::string> known = {"h100-bf16", "h100-fp8", "fsdp",        "long-seq", "moe",
                                       "h100-500w", "h200",     "llm-foundry", "frontier", "a100"};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const FitRun& run = runs[i];
    EXPECT_FALSE(nodes[i]["source"].as<std::string>().empty()) << run.name;
    ASSERT_TRUE(nodes[i]["category"].IsSequence()) << run.name;
    for (const auto& tag : nodes[i]["category"]) EXPECT_TRUE(known.count(tag.as<std::string>())) << run.name;
    EXPECT_TRUE(std::isfinite(run.measured_step_s) && run.measured_step_s > 0) << run.name;
    const RunPrediction p = predict_run(run, cluster);
    EXPECT_TRUE(std::isfinite(p.step_s) && p.step_s > 0) << run.name;
  }
}

TEST(HeldoutRuns, EveryRunIsExpressibleAndPredicted) { expect_expressible_and_predicted(heldout_path(), 20); }

TEST(HeldoutRuns, EveryTritonFitRunIsExpressibleAndPredicted) {
  expect_expressible_and_predicted(triton_fit_path(), 10);
}

TEST(HeldoutRuns, NoRunIsACalibrationRun) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  std::set<std::string> calibration;
  for (const char* file : {"calibration/h100-megatron-lm.yaml", "calibration/llm-foundry-triton-fit.yaml"})
    for (const auto& run : read_run_yaml((data_dir() / file).string(), cluster)) calibration.insert(run.name);
  for (const auto& run : read_run_yaml(heldout_path(), cluster)) EXPECT_FALSE(calibration.count(run.name));
}

TEST(HeldoutRuns, TokensPerSecondBecomeTheStepTime) {
  // NeMo 24.07, Llama 2 7B on 8 H100: 16847 tokens/s/GPU at gbs 128 x 4096.
  const ClusterSpec cluster = load_cluster("dgx-h100");
  for (const auto& run : read_run_yaml(heldout_path(), cluster))
    if (run.name == "nemo2407-llama2-7b-8") {
      EXPECT_NEAR(run.measured_step_s, 128.0 * 4096 / (8 * 16847.0), 1e-9);
      return;
    }
  FAIL() << "nemo2407-llama2-7b-8 missing";
}

// Megatron-MoE-ModelZoo's long-context Qwen3-235B-A22B rows publish TFLOPS
// only; their step_s is the step that TFLOPS gives by Megatron-LM's causal
// count of the 94-layer model (the rows' own model adds 2 stand-in layers
// for the pipeline split, which the count does not hold).
TEST(HeldoutRuns, ModelZooLongContextStepsFollowFromTheirTflops) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const ModelSpec qwen = load_model("qwen3-235b-a22b");
  const struct {
    const char* name;
    double tflops_per_gpu;
  } published[] = {{"16k-cp1", 295},          {"32k-cp2", 335},          {"64k-cp4", 368},
                   {"128k-cp8", 389},         {"16k-cp1-dropless", 237}, {"32k-cp2-dropless", 277},
                   {"64k-cp4-dropless", 320}, {"128k-cp8-dropless", 357}};
  int rows = 0;
  for (const auto& run : read_run_yaml(heldout_path(), cluster))
    for (const auto& p : published)
      if (run.name == std::string("mzoo-qwen3-235b-a22b-bf16-256-") + p.name) {
        ++rows;
        const double flops = formula_step_flops(qwen, run.job.gbs, run.job.seq, FlopFormula::kMegatronCausal);
        EXPECT_NEAR(run.measured_step_s, flops / (p.tflops_per_gpu * 1e12 * run.job.gpus), 1e-3) << run.name;
      }
  EXPECT_EQ(rows, 8);
}

// torchtitan @ 9dec370 (the 2024-12 benchmark's version) left the pipeline
// at its defaults where the table publishes nothing:
// build_pipeline_schedule runs n_microbatches = the pp degree, and
// generate_split_points cuts a looped schedule (Interleaved1F1B) into 2
// stages per rank: 126 layers over 16 stages as 126 / 16 = 7 in the first,
// 7 + 1 in the 14 middle ones (the 126 % 16 = 14 left over), 7 in the last.
// The split128 stand-in (126 layers + embedding + loss) gives each virtual
// stage the middle stages' 8.
TEST(HeldoutRuns, TorchtitanPipelineRowsUseTheEngineDefaults) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  int rows = 0;
  for (const auto& run : read_run_yaml(heldout_path(), cluster)) {
    if (run.name.rfind("tt-llama3.1-405b", 0) != 0) continue;
    ++rows;
    const ParallelConfig& c = run.config;
    const int dp = run.job.gpus / (c.tp * c.cp * c.pp);
    EXPECT_EQ(run.job.gbs / (dp * c.mbs), c.pp) << run.name;
    const bool interleaved = run.name.find("interleaved") != std::string::npos;
    EXPECT_FALSE(run.best_vp) << run.name;
    EXPECT_EQ(c.vp, interleaved ? 2 : 1) << run.name;
    if (interleaved) {
      const int stages = c.pp * c.vp, layers = 126;
      const int middle = layers / stages + 1;
      EXPECT_EQ(layers % stages, stages - 2);
      EXPECT_EQ(2 * (layers / stages) + (stages - 2) * middle, layers);
      EXPECT_EQ(run.model.layers / stages, middle);
    }
  }
  EXPECT_EQ(rows, 6);
}

class RunKeys : public ::testing::Test {
 protected:
  std::string write(const std::string& run) {
    return run_file_test::write_one_run(
        "heldout_keys", "name: r, model: mixtral-8x7b, gpus: 16, gbs: 64, seq: 4096, step_s: 5, " + run);
  }
  ClusterSpec cluster = load_cluster("dgx-h100");
};

TEST_F(RunKeys, EngineSetsTheEngineRecipe) {
  // Megatron-Core on Hopper: cuDNN fused attention, gradients reduced with
  // the last micro-batch, Megatron FSDP shards per TransformerLayer.
  FitRun m = read_run_yaml(write("engine: megatron, config: {ep: 8}"), cluster).front();
  EXPECT_EQ(m.job.attention_kernel, AttentionKernel::kCudnn);
  EXPECT_EQ(m.job.grad_sync, GradSyncSchedule::kLastMicroBatch);
  EXPECT_EQ(m.job.shard_unit, ShardUnit::kLayer);
  // torchtitan: fp32 reduction, eager loss, all-gathered KV for CP; an
  // explicit attention_kernel overrides the engine's.
  FitRun t =
      read_run_yaml(write("engine: torchtitan, attention_kernel: fa2, config: {ep: 8}"), cluster).front();
  EXPECT_EQ(t.job.attention_kernel, AttentionKernel::kFlash2);
  EXPECT_EQ(t.job.grad_reduce, GradReduceDtype::kFp32);
  EXPECT_EQ(t.job.cross_entropy, CrossEntropy::kEager);
  EXPECT_EQ(t.job.cp_exchange, ContextParallelExchange::kAllGatherKv);
  // No engine: the defaults every calibration run was fitted with.
  FitRun d = read_run_yaml(write("config: {ep: 8}"), cluster).front();
  EXPECT_EQ(d.job.attention_kernel, AttentionKernel::kProfile);
  EXPECT_EQ(d.job.shard_unit, ShardUnit::kBuckets);
}

TEST_F(RunKeys, ExpertParallelAndImbalanceAreRead) {
  FitRun r = read_run_yaml(write("moe_imbalance: 1.0, config: {ep: 8, etp: 1}"), cluster).front();
  EXPECT_EQ(r.config.ep, 8);
  EXPECT_EQ(r.config.etp, 1);
  EXPECT_DOUBLE_EQ(r.job.moe_imbalance, 1.0);
  EXPECT_FALSE(r.config.ep_overlap);  // only where the recipe says so
}

// Megatron-Bridge's moe_a2a_overlap: the expert all-to-all runs beside the
// other micro-batch's compute, so the step is never longer than without.
TEST_F(RunKeys, ExpertAllToAllOverlapIsReadAndNeverSlower) {
  const std::string config = "moe_imbalance: 1.0, config: {pp: 2, vp: 2, ep: 8, mbs: 1";
  FitRun plain = read_run_yaml(write(config + "}"), cluster).front();
  FitRun overlapped = read_run_yaml(write(config + ", ep_overlap: true}"), cluster).front();
  EXPECT_TRUE(overlapped.config.ep_overlap);
  EXPECT_LE(predict_run(overlapped, cluster).step_s, predict_run(plain, cluster).step_s);
}

// DeepEP's / HybridEP's dispatch (a2a_hierarchical): across nodes one copy
// per destination node, so where the expert-parallel group spans two nodes
// (ep 16 on 16 GPUs, 256 experts, top 8) the step is shorter than with the
// flat all-to-all; inside one node (ep 8) it changes nothing.
TEST_F(RunKeys, HierarchicalAllToAllIsReadAndFasterAcrossNodes) {
  const auto run = [&](const std::string& config) {
    return run_file_test::read_one_run(
        "heldout_a2a",
        "name: r, model: deepseek-v3, gpus: 16, gbs: 16, seq: 4096, step_s: 5, "
        "moe_imbalance: 1.0, config: {mbs: 1, " +
            config + "}",
        cluster);
  };
  const FitRun flat = run("ep: 16");
  const FitRun hier = run("ep: 16, a2a_hierarchical: true");
  EXPECT_FALSE(flat.config.a2a_hierarchical);
  EXPECT_TRUE(hier.config.a2a_hierarchical);
  EXPECT_LT(predict_run(hier, cluster).step_s, predict_run(flat, cluster).step_s);
  EXPECT_DOUBLE_EQ(predict_run(run("ep: 8, a2a_hierarchical: true"), cluster).step_s,
                   predict_run(run("ep: 8"), cluster).step_s);
  run_file_test::expect_error_naming([&] { run("ep: 8, a2a_hierarchical: sometimes"); }, "a2a_hierarchical");
}

TEST_F(RunKeys, BadValuesNameTheField) {
  run_file_test::expect_error_naming([&] { read_run_yaml(write("engine: nemo"), cluster); }, "engine");
  run_file_test::expect_error_naming([&] { read_run_yaml(write("moe_imbalance: 0.5"), cluster); },
                                     "moe_imbalance");
}

}  // namespace
}  // namespace parplan
