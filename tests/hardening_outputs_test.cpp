// Bad input found by probing the planning commands: each a CLI run that now
// gets one line on stderr and exit 2 (or exit 1 naming the binding
// constraint), where it used to crash, overwrite a file or lose its output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::expect_cli_refusal;
using test::run_cli;
using test::write_temp;

const std::string kExampleJob = std::string(PARPLAN_SOURCE_DIR) + "/examples/gpt3-175b-a100.yaml";

// A headroom of the whole HBM or more left a negative budget: an internal
// error (exit 3) in plan, check and sweep, "of -920.0 GiB" in estimate.
TEST(HardeningOutputs, HeadroomBeyondTheHbmIsRefused) {
  for (const std::string& cmd : std::vector<std::string>{
           "plan --job " + kExampleJob + " --memory-headroom 100",
           "plan --job " + kExampleJob + " --memory-headroom 80.5",
           "estimate --job " + kExampleJob + " --tp 8 --pp 8 --memory-headroom 1000",
           "check --job " + kExampleJob + " --tp 8 --pp 8 --memory-headroom 1000",
           "sweep --models gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048 "
           "--memory-headroom 1000"})
    expect_cli_refusal(cmd, "--memory-headroom");
  const std::string job = write_temp("headroom.yaml", test::slurp(kExampleJob) + "memory_headroom: 1000\n");
  expect_cli_refusal("plan --job " + job, "field 'memory_headroom'");
  // Below the HBM it is a budget as before.
  const auto below = run_cli("estimate --job " + kExampleJob + " --tp 8 --pp 8 --memory-headroom 70");
  EXPECT_EQ(below.exit_code, 0) << below.err;
  EXPECT_NE(below.out.find("of 10.0 GiB"), std::string::npos) << below.out;
}

// check reported the given config as the "optimum" when nothing fits.
TEST(HardeningOutputs, CheckWithNothingFeasibleHasNoOptimum) {
  const auto run =
      run_cli("check --model gpt-1t --cluster dgx-a100 --gpus 8 --gbs 8 --seq 2048 --tp 8 --pp 1");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("no other config fits either: memory"), std::string::npos) << run.err;
  EXPECT_EQ(test::line_count(run.err), 1) << run.err;
  EXPECT_NE(run.out.find("optimum  none"), std::string::npos) << run.out;
  const auto json = run_cli(
      "check --model gpt-1t --cluster dgx-a100 --gpus 8 --gbs 8 --seq 2048 --tp 8 --pp 1 --format json");
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_TRUE(j["optimum"].is_null());
  EXPECT_TRUE(j["optimum_step_s"].is_null());
  EXPECT_FALSE(j["pass"].get<bool>());
}

// Two outputs on one file, or an output on an input, lost one of them.
TEST(HardeningOutputs, OutputsNeverShareAFileOrReplaceAnInput) {
  const std::string dir = ::testing::TempDir() + "parplan_outputs_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string sweep = "sweep --models gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048";
  expect_cli_refusal(sweep + " --csv " + dir + "/s.csv --json " + dir + "/./s.csv", "both name");
  expect_cli_refusal(sweep + " --csv " + dir + "/s.csv --plot " + dir + "/../" +
                         std::filesystem::path(dir).filename().string() + "/s.csv",
                     "both name");
  const std::string victim = dir + "/victim.yaml";
  std::filesystem::copy_file(kExampleJob, victim, std::filesystem::copy_options::overwrite_existing);
  expect_cli_refusal("plan --job " + victim + " --timeline " + victim, "is the --job input");
  expect_cli_refusal("estimate --job " + victim + " --tp 8 --pp 8 --timeline " + victim,
                     "is the --job input");
  EXPECT_EQ(test::slurp(victim), test::slurp(kExampleJob));
  std::filesystem::create_directories(dir + "/run");
  expect_cli_refusal("plan --job " + kExampleJob + " --emit megatron --out " + dir + "/run --timeline " +
                         dir + "/run/launch.sh",
                     "inside --out");
  // Devices are not files: both outputs may go to /dev/null.
  EXPECT_EQ(run_cli(sweep + " --csv /dev/null --json /dev/null").exit_code, 0);
  // The other commands that write files: scatter, experts, calibrate.
  const std::string src = std::string(PARPLAN_SOURCE_DIR) + "/examples/";
  const std::string lengths = dir + "/lengths.txt", loads = dir + "/loads.json", runs = dir + "/runs.csv";
  std::filesystem::copy_file(src + "scatter/long-tail-steps.txt", lengths);
  std::filesystem::copy_file(src + "experts/mixtral-like.json", loads);
  std::filesystem::copy_file(src + "calibrate/narayanan-table1.csv", runs);
  expect_cli_refusal("scatter --lengths " + lengths + " --gpus 64 --coefficients " + src +
                         "scatter/flexsp-gpt-7b-64xa100.json --out " + lengths,
                     "is the --lengths input");
  expect_cli_refusal("scatter --lengths " + lengths + " --gpus 64 --coefficients " + src +
                         "scatter/flexsp-gpt-7b-64xa100.json --out " + dir + "/x --svg " + dir + "/x",
                     "both name");
  expect_cli_refusal("experts --loads " + loads + " --gpus 8 --out " + loads, "is the --loads input");
  expect_cli_refusal(
      "calibrate --cluster dgx-a100 --runs " + runs + " --fit gemm_efficiency_max --out " + runs,
      "is the --runs input");
  EXPECT_EQ(test::slurp(runs), test::slurp(src + "calibrate/narayanan-table1.csv"));
  std::filesystem::remove_all(dir);
}

// A full disk behind stdout lost the report and exited 0.
TEST(HardeningOutputs, AFailedReportWriteIsAnError) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  // A report, and the help text (CLI11 prints it) alike.
  for (const std::string& args :
       {" plan --job " + kExampleJob, std::string(" --help"), std::string(" plan --help")}) {
    const std::string cmd =
        std::string(PARPLAN_BINARY) + args + " >/dev/full 2>" + ::testing::TempDir() + "full.err";
    const int status = std::system(cmd.c_str());
    EXPECT_EQ(WEXITSTATUS(status), 2) << args;
    const std::string err = test::slurp(::testing::TempDir() + "full.err");
    EXPECT_NE(err.find("cannot write the report to standard output"), std::string::npos) << args << err;
    EXPECT_EQ(test::line_count(err), 1) << args << err;
  }
}

// The dgx-a100 profile without the block that opens with the line starting
// `opening`; the block goes on while `inside` holds for its lines.
std::string dgx_a100_without(const std::string& opening, bool (*inside)(const std::string&)) {
  std::istringstream lines(test::slurp(std::string(PARPLAN_SOURCE_DIR) + "/hardware-profiles/dgx-a100.yaml"));
  std::string text, line;
  bool skipping = false;
  while (std::getline(lines, line)) {
    skipping = line.rfind(opening, 0) == 0 || (skipping && inside(line));
    if (!skipping) text += line + "\n";
  }
  return text;
}

// A profile without tiers leaked yaml-cpp's "invalid node" text; a model
// file of hundreds of megabytes ran past any time limit.
TEST(HardeningOutputs, MissingTiersAndOversizedModelsAreNamed) {
  // The top-level tiers block: up to the next top-level key.
  const std::string profile = write_temp("notiers.yaml", dgx_a100_without("tiers:", [](const std::string& l) {
                                           return l.empty() || l[0] == ' ' || l[0] == '#';
                                         }));
  expect_cli_refusal(
      "estimate --cluster " + profile + " --model gpt3-175b --gpus 1024 --gbs 1536 --seq 2048 --tp 8 --pp 8",
      "field 'tiers' is missing");
  const std::string model =
      write_temp("huge-model.yaml", test::slurp(std::string(PARPLAN_SOURCE_DIR) + "/models/gpt3-175b.yaml") +
                                        std::string(2 << 20, '#') + "\n");
  expect_cli_refusal(
      "estimate --model " + model + " --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048 --tp 8 --pp 8",
      "a model file has at most");
  // One tier sized 8 ranks and a job of 1024: no tier priced the traffic
  // between the groups, which ran at NVLink speed.
  // The infiniband tier's entry: up to the next line not indented under it.
  const std::string single = write_temp(
      "one-tier.yaml",
      dgx_a100_without("  - name: infiniband", [](const std::string& l) { return l.rfind("    ", 0) == 0; }));
  expect_cli_refusal(
      "estimate --cluster " + single + " --model gpt3-175b --gpus 1024 --gbs 1536 --seq 2048 --tp 8 --pp 8",
      "outermost tier nvlink (8 ranks)");
  EXPECT_EQ(
      run_cli("estimate --cluster " + single + " --model gpt-1.7b --gpus 8 --gbs 64 --seq 2048 --tp 1 --pp 1")
          .exit_code,
      0);
}

// A job file's config is held to the flags' rules, and constraints and
// config may not disagree.
TEST(HardeningOutputs, JobConfigContradictionsAreRefused) {
  const std::string base = test::slurp(kExampleJob);
  expect_cli_refusal(
      "estimate --job " +
          write_temp("sel-layers.yaml",
                     base + "config: {tp: 8, pp: 8, recompute: selective, recompute_layers: 3}\n"),
      "applies only with --recompute full");
  expect_cli_refusal("estimate --job " + kExampleJob +
                         " --tp 8 --pp 8 --engine megatron --recompute full --recompute-modules mlp",
                     "applies only with --recompute selective");
  expect_cli_refusal(
      "plan --job " + write_temp("disagree.yaml", base + "constraints: {tp: 4}\nconfig: {tp: 8, pp: 8}\n"),
      "constraints.tp 4 and config.tp 8 disagree");
  // TP communication overlap without tp > 1 and sp has nothing to overlap.
  const std::string llama = "--model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 8192";
  expect_cli_refusal("estimate " + llama + " --engine megatron --tp 1 --pp 1 --tp-comm-overlap",
                     "needs tp > 1");
  expect_cli_refusal("estimate " + llama + " --engine megatron --tp 2 --pp 1 --tp-comm-overlap",
                     "needs tp > 1");
  expect_cli_refusal("plan " + llama + " --tp-comm-overlap --no-sp", "needs tp > 1");
}

}  // namespace
}  // namespace parplan
