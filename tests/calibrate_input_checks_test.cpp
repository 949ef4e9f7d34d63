// calibrate and tune input checks: logs cut mid-line, repeated CSV columns
// and run names, peaks above the GPU's memory, memory constants without
// measured peaks, names that are not UTF-8, trials too short to time, and
// trials that ran out of memory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/megatron_log_reader.h"
#include "src/io/run_sources.h"
#include "tests/cli_support.h"

namespace parplan {
namespace calibrate_input_checks {

namespace fs = std::filesystem;

const std::string kFixture = "tests/calibrate_fixtures/megatron-gpt-1.7b-16gpu.log";

std::string fixture_text() { return test::slurp((data_dir() / kFixture).string()); }

// A log cut after "elapsed time per iteration (ms): 15" must not read 15 ms:
// the unterminated last line is left out and the median is the whole log's
// up to it.
TEST(CalibrateInputChecks, ALogCutMidLineIsReadUpToItsLastFullLine) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const std::string text = fixture_text();
  const FitRun whole = parse_megatron_log(text, "whole.log", cluster);
  const std::size_t last = text.rfind("elapsed time per iteration (ms):");
  ASSERT_NE(last, std::string::npos);
  const std::string cut = text.substr(0, last) + "elapsed time per iteration (ms): 15";
  // The cut log lost its last iteration line; the others are as written.
  std::string without_last = text.substr(0, text.rfind('\n', last) + 1);
  const FitRun expected = parse_megatron_log(without_last, "expected.log", cluster);
  const FitRun read = parse_megatron_log(cut, "cut.log", cluster);
  EXPECT_DOUBLE_EQ(read.measured_step_s, expected.measured_step_s);
  EXPECT_GT(read.measured_step_s, 1.0);  // not 15 ms
  EXPECT_GT(whole.measured_step_s, 1.0);
}

const std::string kRunCsvHeader = "name,model,gpus,gbs,seq,tp,pp,mbs,unit,value,formula\n";
const std::string kRunRow = "gpt-1.7b,32,512,2048,1,1,1,tflops_per_gpu,137,megatron\n";

TEST(CalibrateInputChecks, ARepeatedCsvColumnIsRefused) {
  const std::string path =
      test::write_temp("dupcol.csv",
                       "name,model,gpus,gbs,seq,tp,pp,mbs,unit,value,formula,formula\n"
                       "a,gpt-1.7b,32,512,2048,1,1,1,tflops_per_gpu,137,narayanan,megatron\n");
  test::expect_cli_refusal("calibrate --cluster dgx-a100 --runs " + path + " --fit gemm_efficiency_max",
                           "column 'formula' is given twice");
}

TEST(CalibrateInputChecks, TwoRunsOfOneNameInAFileAreRefused) {
  const std::string path =
      test::write_temp("dupname.csv", kRunCsvHeader + "a," + kRunRow + "b," + kRunRow + "a," + kRunRow);
  test::expect_cli_refusal("calibrate --cluster dgx-a100 --runs " + path + " --fit gemm_efficiency_max",
                           "'a' names an earlier run too");
}

TEST(CalibrateInputChecks, AQuotedCsvFieldKeepsItsDoubledQuote) {
  const std::string path =
      test::write_temp("quote.csv", kRunCsvHeader + "\"q\"\"uote\"," + kRunRow + "b," + kRunRow);
  const auto runs = load_runs({path}, load_cluster("dgx-a100"));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].name, "q\"uote");
}

// A run file of one run `{name: a, FIELDS}` that calibrate must refuse
// with a line holding `mention`.
void expect_run_refused(const std::string& file, const std::string& fields, const std::string& mention) {
  const std::string path = test::write_temp(file, "runs:\n  - {name: a, " + fields + "}\n");
  test::expect_cli_refusal("calibrate --cluster dgx-a100 --runs " + path + " --fit gemm_efficiency_max",
                           mention);
}

TEST(CalibrateInputChecks, APeakAboveTheGpusMemoryIsRefused) {
  expect_run_refused("peak.yaml",
                     "model: gpt-1.7b, gpus: 32, gbs: 512, seq: 2048, config: {tp: 1, pp: 1, mbs: 1}, "
                     "step_s: 2.0, peak_memory_gib: 5000",
                     "'peak_memory_gib' is above the GPU's 80.0 GiB");
}

TEST(CalibrateInputChecks, GpusBeyondTheLimitAreRefusedInRunFiles) {
  expect_run_refused(
      "gpus.yaml",
      "model: gpt-1.7b, gpus: 2000000, gbs: 4000000, seq: 2048, config: {tp: 1, pp: 1, mbs: 1}, "
      "step_s: 2.0",
      "'gpus'");
}

TEST(CalibrateInputChecks, AnUnknownModelInARunFileNamesTheRunsField) {
  expect_run_refused(
      "model.yaml",
      "model: gpt-nope, gpus: 32, gbs: 512, seq: 2048, config: {tp: 1, pp: 1, mbs: 1}, step_s: 2.0",
      "field 'model' 'gpt-nope' is not in the catalog");
}

TEST(CalibrateInputChecks, AMemoryConstantWithoutMeasuredPeaksIsRefused) {
  test::expect_cli_refusal("calibrate --cluster dgx-a100 --runs " +
                               (data_dir() / "examples/calibrate/narayanan-table1.csv").string() +
                               " --fit reserved_bytes,gemm_efficiency_max --no-cross-validate",
                           "only memory predictions depend on 'reserved_bytes'");
}

// JSON and SVG must stay valid whatever bytes a name holds: a run file's
// name that is not UTF-8 is refused at input, never an internal error.
TEST(CalibrateInputChecks, ANameThatIsNotUtf8IsRefusedAtInput) {
  const std::string path = test::write_temp("utf8.csv", kRunCsvHeader + "a\xff" + "b," + kRunRow);
  test::expect_cli_refusal("calibrate --cluster dgx-a100 --runs " + path +
                               " --fit gemm_efficiency_max --no-cross-validate --format json",
                           "not UTF-8");
  const std::string out = ::testing::TempDir() + "parplan_utf8_" + std::to_string(::getpid()) + ".yaml";
  test::expect_cli_refusal("calibrate --cluster dgx-a100 --runs " +
                               (data_dir() / "examples/calibrate/narayanan-table1.csv").string() +
                               " --fit gemm_efficiency_max --no-cross-validate --out " + out +
                               " --name \"$(printf '\\377\\376')\"",
                           "--name holds bytes that are not UTF-8");
}

// A model file's name holding a byte that is no UTF-8 (a Latin-1 file) is
// refused where it is read, not left to fail the JSON output.
TEST(CalibrateInputChecks, AModelNameThatIsNotUtf8IsRefused) {
  std::string model = test::slurp((data_dir() / "models/llama3-8b.yaml").string());
  const std::size_t name = model.find("name:");
  ASSERT_NE(name, std::string::npos);
  model = model.substr(0, name) +
          "name: ab\xff"
          "c" +
          model.substr(model.find('\n', name));
  const std::string path = test::write_temp("badname-model.yaml", model);
  test::expect_cli_refusal("estimate --model " + path +
                               " --cluster dgx-h100 --gpus 8 --gbs 8 --seq 4096 --tp 1 --pp 1 --format json",
                           "not UTF-8");
}

TEST(CalibrateInputChecks, TuneRefusesTrialsTooShortToTime) {
  const std::string out = ::testing::TempDir() + "parplan_short_" + std::to_string(::getpid());
  test::expect_cli_refusal("tune --job " + (data_dir() / "examples/calibrate/tune-job.yaml").string() +
                               " --trials 2 --train-iters 19 --out " + out,
                           "--train-iters must be an integer from 20");
  EXPECT_FALSE(fs::exists(out));
}

// A log that ends in PyTorch's out-of-memory error is left out of the fit
// with a line on stderr; calibrate goes on with the others.
TEST(CalibrateInputChecks, ARunThatRanOutOfMemoryIsLeftOutWithANote) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("parplan_oom_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.log") << fixture_text();
  std::ofstream(dir / "b.log")
      << fixture_text().substr(0, fixture_text().find("iteration")) +
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
  const test::CliRun run =
      test::run_cli("calibrate --cluster dgx-h100 --runs " + dir.string() + " --fit gemm_efficiency_max");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("b.log: the run ran out of GPU memory"), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("1 runs"), std::string::npos) << run.out;
  fs::remove_all(dir);
}

// A log's file name need not be UTF-8: the run is named with U+FFFD in
// place of such bytes and the JSON stays valid.
TEST(CalibrateInputChecks, ALogWhoseFileNameIsNotUtf8IsRead) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("parplan_latin1_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "run-\xff.log") << fixture_text();
  const test::CliRun run = test::run_cli("calibrate --cluster dgx-h100 --runs " + dir.string() +
                                         " --fit gemm_efficiency_max --no-cross-validate --format json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_NE(j.dump().find("run-\xEF\xBF\xBD.log"), std::string::npos) << j.dump();
  fs::remove_all(dir);
}

}  // namespace calibrate_input_checks
}  // namespace parplan
