// torchtitan's Async TP (PyTorch's micro-pipelined TP): each sequence-parallel
// collective is fused with the one matmul it feeds or comes from, hiding
// behind all but the local chunk's share of that matmul, plus the fused ops'
// own memory passes; the backward's two reduce-scatters (of summed
// input-gradients) stay exposed. The published speedups it must reproduce
// are torchtitan's June 2025 Async TP tables.
#include "cost/micro_pipeline_tp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "cost/overlap.h"
#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/run_file_reader.h"
#include "tests/cli_support.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

MicroPipelineTpInputs inputs() {
  MicroPipelineTpInputs in;
  in.tp = 8;
  in.all_gather_s = 3e-3;  // an fp8 gather: half a 16-bit scatter's bytes
  in.reduce_scatter_s = 5e-3;
  in.shard_copy_s = 0.3e-3;
  in.partial_reduce_s = 1.2e-3;
  in.compute_slowdown = 0.189;
  return in;
}

TpGemmWindows windows(double each_s) {
  TpGemmWindows w;
  w.attention_in_s = w.attention_out_s = w.ffn_in_s = w.ffn_out_s = each_s;
  w.attention_out_dgrad_s = w.ffn_out_dgrad_s = each_s;
  return w;
}

TEST(MicroPipelineTp, LongGemmsLeaveTheSlowdownThePassesAndTheBackwardScatters) {
  const MicroPipelineTpInputs in = inputs();
  const double slowed = in.compute_slowdown / (1.0 + in.compute_slowdown);
  const MicroPipelineTpSeconds t = micro_pipeline_tp_exposed_s(in, windows(1.0));
  EXPECT_NEAR(t.forward_gathers_s, 2.0 * (in.all_gather_s * slowed + in.shard_copy_s), 1e-15);
  EXPECT_NEAR(t.forward_s, t.forward_gathers_s + 2.0 * (in.reduce_scatter_s * slowed + in.partial_reduce_s),
              1e-15);
  EXPECT_NEAR(t.backward_s, 2.0 * (in.all_gather_s * slowed + in.shard_copy_s) + 2.0 * in.reduce_scatter_s,
              1e-15);
}

TEST(MicroPipelineTp, TheLocalChunkHidesNothing) {
  // A collective longer than its matmul sticks out by what the other tp - 1
  // chunks of it cannot cover.
  const MicroPipelineTpInputs in = inputs();
  const double window = 2e-3;
  const MicroPipelineTpSeconds t = micro_pipeline_tp_exposed_s(in, windows(window));
  EXPECT_NEAR(t.forward_gathers_s, 2.0 * (in.all_gather_s - window * 7.0 / 8.0 + in.shard_copy_s), 1e-15);
}

TEST(MicroPipelineTp, NoMatmulNoFusion) {
  const MicroPipelineTpInputs in = inputs();
  const MicroPipelineTpSeconds t = micro_pipeline_tp_exposed_s(in, TpGemmWindows{});
  EXPECT_DOUBLE_EQ(t.forward_s, 2.0 * (in.all_gather_s + in.reduce_scatter_s));
  EXPECT_DOUBLE_EQ(t.backward_s, 2.0 * (in.all_gather_s + in.reduce_scatter_s));
}

// [TT2506] (torchtitan benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md):
// Async TP over vanilla TP on Grand Teton H100s, 70B at FSDP 32 x TP 8 (full
// AC, local batch 16) 1.09 bf16 / 1.16 float8 tensorwise, 8B at FSDP 8 x
// TP 8 (per-op SAC, local batch 12) 1.10 / 1.10; [TT2412] Table 4, the same
// 70B float8 config on December 2024's PyTorch, 876 / 829 = 1.057. The two
// float8 70B figures differ by 0.10 between PyTorch versions, so no one
// prediction can be closer than 0.05 to both: each predicted ratio is
// within 0.09 of its published one.
TEST(MicroPipelineTp, PublishedAsyncTpSpeedups) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  std::map<std::string, double> step_s;
  for (const FitRun& run :
       read_run_yaml((data_dir() / "calibration/heldout-published-runs.yaml").string(), cluster))
    step_s[run.name] = predict_run(run, cluster).step_s;
  const std::map<std::string, double> published = {{"tt-llama3.1-70b-256-2d", 876.0 / 829.0},
                                                   {"tt2506-llama3.1-70b-256-2d-bf16", 1.09},
                                                   {"tt2506-llama3.1-70b-256-2d-fp8", 1.16},
                                                   {"tt2506-llama3.1-8b-64-2d-bf16", 1.10},
                                                   {"tt2506-llama3.1-8b-64-2d-fp8", 1.10}};
  for (const auto& [vanilla, speedup] : published) {
    ASSERT_TRUE(step_s.count(vanilla) && step_s.count(vanilla + "-asynctp")) << vanilla;
    EXPECT_NEAR(step_s[vanilla] / step_s[vanilla + "-asynctp"], speedup, 0.09) << vanilla;
  }
}

TEST(MicroPipelineTp, RunFilesNeedTheCompiledModel) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const std::string run =
      "name: r, model: llama3-70b, gpus: 64, gbs: 64, seq: 8192, step_s: 5, engine: torchtitan, "
      "tp_comm_overlap: true, config: {tp: 8, sp: true, zero: 3, mbs: 1}";
  const FitRun compiled = run_file_test::read_one_run("async_tp", run + ", fused_elementwise: true", cluster);
  EXPECT_EQ(compiled.job.tp_overlap_mechanism, TpOverlapMechanism::kMicroPipeline);
  run_file_test::expect_error_naming(
      [&] { run_file_test::read_one_run("async_tp", run + ", fused_elementwise: false", cluster); },
      "tp_comm_overlap");
}

TEST(MicroPipelineTp, TheFlagNeedsTorchCompileUnderTorchtitan) {
  const std::string job =
      "estimate --model llama3-70b --cluster dgx-h100 --gpus 64 --gbs 128 --seq 8192 --tp 8 --pp 1 --sp "
      "--zero 3 --engine torchtitan --tp-comm-overlap";
  const test::CliRun eager = test::run_cli(job + " --torch-compile off");
  EXPECT_EQ(eager.exit_code, 2) << eager.err;
  EXPECT_EQ(test::line_count(eager.err), 1) << eager.err;
  EXPECT_NE(eager.err.find("--torch-compile on"), std::string::npos) << eager.err;
  // torchtitan plans are timed compiled unless told otherwise.
  const test::CliRun compiled = test::run_cli(job);
  EXPECT_EQ(compiled.exit_code, 0) << compiled.err;
}

}  // namespace
}  // namespace parplan
