// Run readers for parplan calibrate: a Megatron-LM log fixture in the real
// log-line format, run files, and bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/megatron_log_reader.h"
#include "src/io/run_sources.h"

namespace parplan {
namespace {

const std::string kFixture = "tests/calibrate_fixtures/megatron-gpt-1.7b-16gpu.log";

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path =
      std::filesystem::temp_directory_path() / ("parplan_calib_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path) << text;
  return path.string();
}

TEST(CalibrateIo, MegatronLogGivesMedianStepAfterWarmupAndTheConfig) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const FitRun run = read_megatron_log((data_dir() / kFixture).string(), cluster);
  // Iteration lines at 10..50 (log interval 10): the first window holds the
  // warm-up; the median of 1502.1, 1498.7, 1500.4, 1510.0 ms.
  EXPECT_NEAR(run.measured_step_s, (1500.4 + 1502.1) / 2 / 1000.0, 1e-9);
  EXPECT_EQ(run.job.gpus, 16);
  EXPECT_EQ(run.job.gbs, 256);
  EXPECT_EQ(run.job.seq, 4096);
  EXPECT_EQ(run.config.tp, 2);
  EXPECT_EQ(run.config.pp, 2);
  EXPECT_EQ(run.config.dp, 4);
  EXPECT_EQ(run.config.mbs, 2);
  EXPECT_TRUE(run.config.sp);
  EXPECT_EQ(run.config.zero, 1);
  EXPECT_EQ(run.model.layers, 24);
  EXPECT_EQ(run.model.hidden, 2048);
  EXPECT_EQ(run.model.vocab, 131072);
  EXPECT_FALSE(run.model.tied_embeddings);
}

// The fixture's attention_dropout is the model's dropout (costed inside the
// attention kernel); one outside [0, 1] is refused naming the argument.
std::string fixture_with(const std::string& key, const std::string& value) {
  std::ifstream in((data_dir() / kFixture).string());
  std::string text, line;
  while (std::getline(in, line)) {
    if (line.rfind("  " + key + " ", 0) == 0) line = line.substr(0, line.rfind(' ') + 1) + value;
    text += line + "\n";
  }
  return text;
}

TEST(CalibrateIo, MegatronLogCarriesTheAttentionDropout) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  EXPECT_DOUBLE_EQ(read_megatron_log((data_dir() / kFixture).string(), cluster).model.dropout, 0.1);
  EXPECT_DOUBLE_EQ(
      parse_megatron_log(fixture_with("attention_dropout", "0.0"), "d.log", cluster).model.dropout, 0.0);
  try {
    parse_megatron_log(fixture_with("attention_dropout", "1.5"), "d.log", cluster);
    FAIL() << "a dropout of 1.5 was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'attention_dropout'"), std::string::npos) << e.what();
  }
}

TEST(CalibrateIo, LogWithoutIterationTimesIsBadInput) {
  std::ifstream in((data_dir() / kFixture).string());
  std::string text, line;
  while (std::getline(in, line))
    if (line.find("elapsed time per iteration") == std::string::npos) text += line + "\n";
  const ClusterSpec cluster = load_cluster("dgx-h100");
  EXPECT_THROW(parse_megatron_log(text, "no-iterations.log", cluster), InputError);
}

TEST(CalibrateIo, RunFileFiguresConvertToStepSeconds) {
  // gpt-1.7b-like run: tokens/s per GPU -> step = gbs * seq / (tps * gpus).
  const std::string path = write_temp("runs.yaml", R"(runs:
  - {name: a, model: gpt-1.7b, gpus: 8, gbs: 64, seq: 2048, config: {tp: 1}, measured: {unit: tokens_per_s_per_gpu, value: 16384}}
  - {name: b, model: gpt-1.7b, gpus: 8, gbs: 64, seq: 2048, config: {tp: 1}, step_s: 2.5, peak_memory_gib: 40}
)");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const auto runs = load_runs({path}, cluster);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_NEAR(runs[0].measured_step_s, 64.0 * 2048 / (16384.0 * 8), 1e-12);
  EXPECT_EQ(runs[1].measured_step_s, 2.5);
  EXPECT_NEAR(runs[1].measured_peak_bytes, 40.0 * 1024 * 1024 * 1024, 1);
}

TEST(CalibrateIo, ConfigTheModelCannotExpressIsBadInput) {
  const std::string path = write_temp("bad.yaml", R"(runs:
  - {name: a, model: gpt-1.7b, gpus: 8, gbs: 64, seq: 2048, config: {tp: 3}, step_s: 1}
)");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  EXPECT_THROW(load_runs({path}, cluster), InputError);
  const std::string tflops = write_temp("noformula.yaml", R"(runs:
  - {name: a, model: gpt-1.7b, gpus: 8, gbs: 64, seq: 2048, measured: {unit: tflops_per_gpu, value: 400}}
)");
  EXPECT_THROW(load_runs({tflops}, cluster), InputError);
}

}  // namespace
}  // namespace parplan
