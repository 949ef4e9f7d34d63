// Run readers for parplan calibrate: a Megatron-LM log fixture in the real
// log-line format, run files, and bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/megatron_log_reader.h"
#include "src/io/profile_writer.h"
#include "src/io/run_sources.h"
#include "src/io/yaml_fields.h"
#include "tests/cli_support.h"

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

// A run's measured peak is reported beside the predicted one; a fit of a
// time constant alone leaves the memory error as it was.
TEST(CalibrateIo, MeasuredPeaksAreReportedBesideThePrediction) {
  const std::string path = write_temp("peaks.yaml", R"(runs:
  - {name: a, model: gpt-1.7b, gpus: 8, gbs: 64, seq: 2048, config: {tp: 1}, step_s: 2.4}
  - {name: b, model: gpt-1.7b, gpus: 8, gbs: 64, seq: 2048, config: {tp: 2}, step_s: 2.5, peak_memory_gib: 40}
)");
  const std::string args = "calibrate --cluster dgx-h100 --runs " + path + " --fit gemm_efficiency_max";
  const nlohmann::json j = test::cli_json(args + " --format json");
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_TRUE(j["runs"][0]["measured_peak_gib"].is_null());
  EXPECT_TRUE(j["runs"][0]["memory_error_before"].is_null());
  EXPECT_DOUBLE_EQ(j["runs"][1]["measured_peak_gib"].get<double>(), 40.0);
  const double before = j["runs"][1]["memory_error_before"].get<double>();
  EXPECT_GT(before, -1.0);
  EXPECT_DOUBLE_EQ(j["runs"][1]["memory_error_after"].get<double>(), before);
  const test::CliRun table = test::run_cli(args);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("peak_gib"), std::string::npos) << table.out;
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

// Megatron prints its integer arguments as Python ints and its figures as
// Python floats: the whole token is read, never a prefix ("4e3" was read as
// 4, "4096.9" and "4096abc" as 4096), and a refusal names the log, the line
// and the argument with what it holds.
std::string expect_log_refused(const std::string& text, const std::string& mention) {
  try {
    parse_megatron_log(text, "d.log", load_cluster("dgx-h100"));
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(mention), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "taken: " << mention;
  return "";
}

TEST(CalibrateIo, MegatronLogArgumentsAreReadWhole) {
  for (const char* bad : {"4e3", "4096.9", "4096abc", "0x1000", "+4096", "4096 4096"}) {
    const std::string what = expect_log_refused(fixture_with("hidden_size", bad), "argument 'hidden_size'");
    EXPECT_NE(what.find("d.log: line 20:"), std::string::npos) << what;
    EXPECT_NE(what.find(std::string("(got '") + bad + "')"), std::string::npos) << what;
  }
  // An optional integer is not quietly its default either.
  expect_log_refused(fixture_with("tensor_model_parallel_size", "2x"),
                     "argument 'tensor_model_parallel_size'");
  for (const char* bad : {"0x1p-3", "inf", "nan", "0.1.2", "1e999"})
    expect_log_refused(fixture_with("attention_dropout", bad), "argument 'attention_dropout'");
  EXPECT_DOUBLE_EQ(
      parse_megatron_log(fixture_with("attention_dropout", "1e-01"), "d.log", load_cluster("dgx-h100"))
          .model.dropout,
      0.1);
}

TEST(CalibrateIo, MegatronLogArgumentListedTwiceIsRefused) {
  const std::string text = fixture_with("num_layers", "24");
  const auto at = text.find("  num_layers ");
  ASSERT_NE(at, std::string::npos);
  const std::string twice = text.substr(0, at) + "  num_layers ...... 32\n" + text.substr(at);
  expect_log_refused(twice, "argument 'num_layers' is listed twice");
  // The same value twice says nothing new: read.
  const std::string same = text.substr(0, at) + "  num_layers ...... 24\n" + text.substr(at);
  EXPECT_EQ(parse_megatron_log(same, "d.log", load_cluster("dgx-h100")).model.layers, 24);
}

std::string with_elapsed(const std::string& ms) {
  std::string text = fixture_with("num_layers", "24");
  for (std::size_t at = text.find("(ms): "); at != std::string::npos; at = text.find("(ms): ", at + 1)) {
    const auto end = text.find(' ', at + 6);
    text.replace(at + 6, end - at - 6, ms);
  }
  return text;
}

TEST(CalibrateIo, MegatronLogStepTimeIsAWholePlausibleNumber) {
  expect_log_refused(with_elapsed("1500.4abc"), "elapsed time per iteration '1500.4abc'");
  expect_log_refused(with_elapsed("1e300"), "elapsed time per iteration 1e300 ms is outside");
  expect_log_refused(with_elapsed("1e-9"), "is outside 0.1 ms to 1e+10 ms");
  EXPECT_NEAR(parse_megatron_log(with_elapsed("1.5e3"), "d.log", load_cluster("dgx-h100")).measured_step_s,
              1.5, 1e-12);
}

std::string run_refusal(const std::string& name, const std::string& text) {
  try {
    load_runs({write_temp(name, text)}, load_cluster("dgx-h100"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "taken";
}

TEST(CalibrateIo, RunFileZeroStageIsWhole) {
  for (const char* zero : {"1.5", "1.9", "0.5"}) {
    const std::string yaml = run_refusal(
        "zero.yaml", std::string("runs:\n  - {name: a, model: gpt-1.7b, gpus: 8, gbs: 64, seq: 2048, config: "
                                 "{zero: ") +
                         zero + "}, step_s: 2}\n");
    EXPECT_NE(yaml.find("field 'config.zero' must be 0, 1, 2 or 3"), std::string::npos) << yaml;
    const std::string csv =
        run_refusal("zero.csv", std::string("name,model,gpus,gbs,seq,zero,step_s\na,gpt-1.7b,8,64,2048,") +
                                    zero + ",2\n");
    EXPECT_NE(csv.find("must be 0, 1, 2 or 3"), std::string::npos) << csv;
  }
}

// Each figure has a plausible range (docs/calibrate.md, "Measured figures").
TEST(CalibrateIo, MeasuredFiguresOutsideTheirRangeAreRefused) {
  const std::string run = "runs:\n  - {name: a, model: gpt-1.7b, gpus: 8, gbs: 64, seq: 2048, ";
  for (const char* step : {"1e-300", "1e30", "0"}) {
    const std::string what = run_refusal("step.yaml", run + "step_s: " + step + "}\n");
    EXPECT_NE(what.find("field 'step_s' must be between 0.0001 and 1e+07"), std::string::npos) << what;
  }
  const std::string tflops =
      run_refusal("tflops.yaml", run + "measured: {unit: tflops_per_gpu, value: 1e30, formula: megatron}}\n");
  EXPECT_NE(tflops.find("field 'measured.value' is above 100000 tflops_per_gpu"), std::string::npos)
      << tflops;
  const std::string tokens =
      run_refusal("tokens.yaml", run + "measured: {unit: tokens_per_s_per_gpu, value: 2e9}}\n");
  EXPECT_NE(tokens.find("field 'measured.value' is above 1e+09"), std::string::npos) << tokens;
  // A figure in range whose step is not: 1e-6 TFLOP/s would take years.
  const std::string slow =
      run_refusal("slow.yaml", run + "measured: {unit: tflops_per_gpu, value: 1e-9, formula: megatron}}\n");
  EXPECT_NE(slow.find("gives a step of"), std::string::npos) << slow;
}

TEST(CalibrateIo, RunFileGivenTwiceIsRefused) {
  const std::string path = write_temp("twice.yaml", R"(runs:
  - {name: a, model: gpt-1.7b, gpus: 8, gbs: 64, seq: 2048, step_s: 2}
)");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  EXPECT_EQ(load_runs({path}, cluster).size(), 1u);
  for (const std::string& again : {path, std::filesystem::path(path).parent_path().string() + "/./" +
                                             std::filesystem::path(path).filename().string()}) {
    try {
      load_runs({path, again}, cluster);
      ADD_FAILURE() << "fitted twice: " << again;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("give each run file once"), std::string::npos) << e.what();
    }
  }
}

// The written name is a double-quoted scalar: names that are YAML syntax
// when plain read back as written.
TEST(CalibrateIo, ProfileNameRoundTrips) {
  const std::string original = "name: dgx-h100\nsource: x\n";
  for (const std::string name :
       {"a: b", "#x", "[a", "- a", "say \"hi\" \\ bye", "{a}", "  lead", "*ref", "'q"}) {
    const std::string text = calibrated_profile_text(original, {}, CalibrationBlock{}, name);
    EXPECT_EQ(load_yaml_text(text, "written")["name"].as<std::string>(), name) << text;
  }
  CalibrationBlock block;
  block.sources = {"runs \"x\".yaml", "a: b"};
  const std::string text = calibrated_profile_text(original, {}, block, "n");
  EXPECT_EQ(load_yaml_text(text, "written")["calibration"]["sources"][0].as<std::string>(),
            "runs \"x\".yaml");
  EXPECT_EQ(load_yaml_text(text, "written")["calibration"]["sources"][1].as<std::string>(), "a: b");
}

const std::string kCalibrate = "calibrate --cluster dgx-h100 --no-cross-validate --no-timings --runs " +
                               std::string(PARPLAN_SOURCE_DIR) +
                               "/calibration/h100-megatron-lm.yaml --fit gemm_efficiency_max";

TEST(CalibrateIo, NameNeedsOutAndIsPrintable) {
  test::expect_cli_refusal(kCalibrate + " --name foo", "--name names the profile --out writes; give --out");
  const std::string out = ::testing::TempDir() + "parplan_named_" + std::to_string(::getpid()) + ".yaml";
  test::expect_cli_refusal(kCalibrate + " --out " + out + " --name \"$(printf 'a\\nb')\"",
                           "--name holds a control character");
  EXPECT_FALSE(std::filesystem::exists(out));
  const test::CliRun run = test::run_cli(kCalibrate + " --out " + out + " --name 'a: b #c'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(load_cluster(out).name, "a: b #c");
  std::filesystem::remove(out);
}

TEST(CalibrateIo, RunsGivenTwiceAreRefusedByTheCli) {
  const std::string runs = std::string(PARPLAN_SOURCE_DIR) + "/calibration/h100-megatron-lm.yaml";
  test::expect_cli_refusal("calibrate --cluster dgx-h100 --runs " + runs + " " + runs,
                           "give each run file once");
}

TEST(CalibrateIo, OutputsInsideARunsFolderAreRefused) {
  // Writing over a log of the folder, or a profile beside its logs, leaves a
  // folder the next calibrate cannot read.
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("parplan_runs_dir_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path log = dir / "run.log";
  std::filesystem::copy_file(data_dir() / kFixture, log, std::filesystem::copy_options::overwrite_existing);
  const std::string before = test::slurp(log.string());
  const std::string calibrate =
      "calibrate --cluster dgx-h100 --fit gemm_efficiency_max --runs " + dir.string();
  test::expect_cli_refusal(calibrate + " --out " + log.string(), "inside --runs");
  test::expect_cli_refusal(calibrate + " --svg " + log.string(), "inside --runs");
  test::expect_cli_refusal(calibrate + " --out " + (dir / "fitted.yaml").string(), "inside --runs");
  EXPECT_EQ(test::slurp(log.string()), before);
  EXPECT_FALSE(std::filesystem::exists(dir / "fitted.yaml"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace parplan
