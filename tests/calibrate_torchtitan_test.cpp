// The torchtitan log reader for parplan calibrate: a fixture in torchtitan's
// metrics-line format (torchtitan/components/metrics.py: step, loss,
// grad_norm, memory, tps, tflops, mfu, with and without colour codes) and its
// TOML job file; bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/run_sources.h"
#include "src/io/torchtitan_log_reader.h"

namespace parplan {
namespace {

const std::string kLog = "tests/calibrate_fixtures/torchtitan-llama3-8b-16gpu.log";
const std::string kToml = "tests/calibrate_fixtures/torchtitan-llama3-8b-16gpu.toml";

std::string slurp(const std::string& relative) {
  std::ifstream in((data_dir() / relative).string());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CalibrateTorchtitan, LogGivesMedianStepAfterWarmupAndTheJobFileTheConfig) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const FitRun run = read_torchtitan_log((data_dir() / kLog).string(), cluster);
  // Metrics at steps 1, 5, 10, ..., 30: the windows ending at 1 and 5 reach
  // into the 3 warm-up steps. Median tps of 3105, 3098, 3110, 3101, 3120 is
  // 3105; torchtitan's tps is tokens per device: step = gbs * seq / (world * tps).
  EXPECT_EQ(run.job.gpus, 16);  // the "device mesh with [...], [8, 2]" line
  EXPECT_EQ(run.job.gbs, 16);   // local_batch_size 2 x data-parallel 8
  EXPECT_EQ(run.job.seq, 8192);
  EXPECT_NEAR(run.measured_step_s, 16.0 * 8192 / (16.0 * 3105), 1e-9);
  EXPECT_NEAR(run.measured_peak_bytes, 53.12 * 1024 * 1024 * 1024, 1.0);
  EXPECT_EQ(run.config.tp, 2);
  EXPECT_TRUE(run.config.sp);
  EXPECT_EQ(run.config.dp, 8);
  EXPECT_EQ(run.config.zero, 3);  // FSDP, reshard after forward without a pipeline
  EXPECT_EQ(run.config.mbs, 2);
  EXPECT_EQ(run.config.recompute, Recompute::kSelective);
  EXPECT_EQ(run.job.precision, Precision::kBf16);
  EXPECT_EQ(run.job.attention_kernel, AttentionKernel::kFlash2);  // SDPA's flash path
  EXPECT_FALSE(run.job.fused_elementwise);                        // no [compile] enable
  // torchtitan's llama3 "8B" flavor.
  EXPECT_EQ(run.model.layers, 32);
  EXPECT_EQ(run.model.hidden, 4096);
  EXPECT_EQ(run.model.kv_groups, 8);
  EXPECT_EQ(run.model.ffn_hidden, 14336);
}

// HSDP (replicate 2 x shard 4 of the 8 data-parallel ranks at tp 2): the
// config shards every state over the 4-rank shard group, as plan writes it.
TEST(CalibrateTorchtitan, HsdpIsTheShardGroupOfTheRun) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const FitRun run = parse_torchtitan_log(
      slurp(kLog), slurp(kToml), "--parallelism.data_parallel_replicate_degree 2", "hsdp.log", cluster);
  EXPECT_EQ(run.config.dp, 8);
  EXPECT_EQ(run.config.zero, 3);
  EXPECT_EQ(run.config.hpz_ranks, 4);
  EXPECT_TRUE(run.job.pytorch_fsdp());
}

TEST(CalibrateTorchtitan, FlagsOverrideTheJobFileAndGiveTheWorldSize) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  std::string log = slurp(kLog);
  // Without the mesh line the world size comes from torchrun's flags.
  log.erase(log.find("Building 2-D"), log.find('\n', log.find("Building 2-D")) - log.find("Building 2-D"));
  const std::string flags =
      "torchrun --nnodes 4 --nproc_per_node=8 -m torchtitan.train --job.config_file x.toml \\\n"
      "  --parallelism.tensor_parallel_degree 4 --training.global_batch_size=64 --model.converters float8";
  const FitRun run = parse_torchtitan_log(log, slurp(kToml), flags, "run.log", cluster);
  EXPECT_EQ(run.job.gpus, 32);
  EXPECT_EQ(run.config.tp, 4);
  EXPECT_EQ(run.config.dp, 8);
  EXPECT_EQ(run.job.gbs, 64);
  EXPECT_EQ(run.job.precision, Precision::kFp8);
  EXPECT_NEAR(run.measured_step_s, 64.0 * 8192 / (32.0 * 3105), 1e-9);
}

// torch.compile from the job file: the loss is compiled only when
// compile.components lists it (torchtitan/components/loss.py).
TEST(CalibrateTorchtitan, CompileSectionSetsFusionAndTheLoss) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const std::string log = slurp(kLog);
  const FitRun model_only =
      parse_torchtitan_log(log, slurp(kToml) + "\n[compile]\nenable = true\n", "", "run.log", cluster);
  EXPECT_TRUE(model_only.job.fused_elementwise);
  EXPECT_EQ(model_only.job.cross_entropy, CrossEntropy::kEager);
  const FitRun with_loss = parse_torchtitan_log(
      log, slurp(kToml) + "\n[compile]\nenable = true\ncomponents = [\"model\", \"loss\"]\n", "", "run.log",
      cluster);
  EXPECT_EQ(with_loss.job.cross_entropy, CrossEntropy::kCompiled);
}

// Async TP, under each name torchtitan gave its switch; only compiled.
TEST(CalibrateTorchtitan, AsyncTensorParallelIsRead) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const std::string log = slurp(kLog);
  for (const char* section : {"experimental", "parallelism", "compile"}) {
    const std::string async = std::string("\n[") + section + "]\nenable_async_tensor_parallel = true\n";
    const std::string compile =
        std::string(section) == "compile" ? "enable = true\n" : "\n[compile]\nenable = true\n";
    const FitRun run = parse_torchtitan_log(log, slurp(kToml) + async + compile, "", "run.log", cluster);
    EXPECT_TRUE(run.job.tp_comm_overlap) << section;
    EXPECT_EQ(run.job.tp_overlap_mechanism, TpOverlapMechanism::kMicroPipeline) << section;
    EXPECT_THROW(parse_torchtitan_log(log, slurp(kToml) + async, "", "run.log", cluster), InputError)
        << section;
  }
}

TEST(CalibrateTorchtitan, DirectoryOfRunsReadsTheLog) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const auto dir =
      std::filesystem::temp_directory_path() / ("parplan_titan_runs_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(data_dir() / kLog, dir / "a.log");
  std::filesystem::copy_file(data_dir() / kToml, dir / "job.toml");  // the one .toml in the folder
  const auto runs = load_runs({dir.string()}, cluster);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_NEAR(runs[0].measured_step_s, 16.0 * 8192 / (16.0 * 3105), 1e-9);
  std::filesystem::remove_all(dir);
}

TEST(CalibrateTorchtitan, BadInputIsOneClearError) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const std::string log = slurp(kLog);
  const std::string toml = slurp(kToml);
  // Only warm-up windows.
  const std::string short_log = log.substr(
      0, log.find("step: 10") == std::string::npos ? log.size() : log.rfind('\n', log.find("step: 10")));
  EXPECT_THROW(parse_torchtitan_log(short_log, toml, "", "short.log", cluster), InputError);
  // HSDP that keeps the weights gathered after forward cannot be expressed.
  EXPECT_THROW(parse_torchtitan_log(log, toml,
                                    "--parallelism.data_parallel_replicate_degree 2 "
                                    "--parallelism.fsdp_reshard_after_forward never",
                                    "hsdp.log", cluster),
               InputError);
  // Degrees that do not multiply to the world.
  EXPECT_THROW(
      parse_torchtitan_log(log, toml, "--parallelism.data_parallel_shard_degree 3", "bad.log", cluster),
      InputError);
  // An unknown flavor.
  EXPECT_THROW(parse_torchtitan_log(log, toml, "--model.flavor 3B", "flavor.log", cluster), InputError);
  // No job file beside the log.
  const auto dir =
      std::filesystem::temp_directory_path() / ("parplan_titan_alone_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(data_dir() / kLog, dir / "a.log");
  EXPECT_THROW(read_torchtitan_log((dir / "a.log").string(), cluster), InputError);
  std::filesystem::remove_all(dir);
}

// torchtitan prints tps as an int with thousands commas: the whole token is
// read ("1e4" was read as 1), and the refusal names the log and the line.
TEST(CalibrateTorchtitan, MetricsAreReadWhole) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const std::string log = slurp(kLog);
  const std::string toml = slurp(kToml);
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = log;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  const auto refusal = [&](const std::string& text) {
    try {
      parse_torchtitan_log(text, toml, "", "t.log", cluster);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("taken");
  };
  for (const char* bad : {"tps: 1e4", "tps: 3,10", "tps: 3105.5", "tps: 3105abc", "tps: 0"}) {
    const std::string what = refusal(with("tps: 3,105", bad));
    EXPECT_NE(what.find("t.log: line 8: tps '"), std::string::npos) << bad << ": " << what;
  }
  const std::string fast = refusal(with("tps: 3,105", "tps: 9,000,000,000"));
  EXPECT_NE(fast.find("above 1e+09 tokens/s"), std::string::npos) << fast;
  const std::string memory =
      refusal(with("memory: 52.63GiB(66.49%)  \x1b[34mtps: 3,105", "memory: 5.2.6GiB  tps: 3,105"));
  EXPECT_NE(memory.find("t.log: line 8: memory '5.2.6GiB'"), std::string::npos) << memory;
  const std::string step = refusal(with("step: 15", "step: 99999999999999999999999"));
  EXPECT_EQ(step, "taken");  // a huge step number is past the warm-up, not a crash
  EXPECT_NEAR(
      parse_torchtitan_log(with("tps: 3,105", "tps: 3105"), toml, "", "t.log", cluster).measured_step_s,
      16.0 * 8192 / (16.0 * 3105), 1e-9);
}

}  // namespace
}  // namespace parplan
