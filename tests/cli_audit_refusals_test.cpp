// Bad input found by an audit of every subcommand (2026-12-01): each case is
// one line on stderr naming the field, exit 2 (or 1 for a valid request with
// no answer), and nothing silently accepted or lost.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace {

const std::string kExamples = std::string(PARPLAN_SOURCE_DIR) + "/examples/";
const std::string kEstimate8b = "estimate --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 8 --seq 2048";

TEST(CliAuditRefusals, ANameTooLongForTheFilesystemIsNotInTheCatalog) {
  const std::string name(256, 'a');
  test::expect_cli_refusal(
      "estimate --model " + name + " --cluster dgx-h100 --gpus 8 --gbs 8 --seq 2048 --tp 1 --pp 1",
      "is not in the catalog");
  test::expect_cli_refusal("plan --model llama3-8b --cluster " + name + " --gpus 8 --gbs 64 --seq 4096",
                           "--cluster");
}

TEST(CliAuditRefusals, SequencesPastTheLearnedPositionsAreRefused) {
  // gpt-1.7b has a table of 2048 positions; the steps hold 8K-token sequences.
  test::expect_cli_refusal("scatter --lengths " + kExamples +
                               "scatter/small-steps.json --gpus 64 --model gpt-1.7b --cluster dgx-a100",
                           "learned positions");
  std::string problem = test::slurp(kExamples + "skip-paths/llama3-8b-cost-model.yaml");
  problem.replace(problem.find("model: llama3-8b"), 16, "model: gpt-1.7b");
  test::expect_cli_refusal("skip-paths --problem " + test::write_temp("learned_positions.yaml", problem),
                           "learned positions");
}

TEST(CliAuditRefusals, ANullMatrixEntryIsNamedAsNothing) {
  std::string problem = test::slurp(kExamples + "skip-paths/llama3-8b-cost-model.yaml");
  problem.replace(problem.find("[0, 1, 1, 60, 60, 60]"), 21, "[0, 1, ~, 60, 60, 60]");
  test::expect_cli_refusal("skip-paths --problem " + test::write_temp("null_entry.yaml", problem),
                           "must be a number (got nothing)");
}

TEST(CliAuditRefusals, StageLayersNeedAPipeline) {
  test::expect_cli_refusal(kEstimate8b + " --tp 1 --pp 1 --first-stage-layers 9", "--pp 2 or more");
}

TEST(CliAuditRefusals, AnOptionGivenTwiceIsNamed) {
  test::expect_cli_refusal(kEstimate8b + " --tp 8 --tp 4 --pp 1", "--tp is given 2 times; give it once");
}

TEST(CliAuditRefusals, ARefusedNumberStatesTheRealRange) {
  test::expect_cli_refusal(kEstimate8b + " --tp 1 --pp 1 --power-limit 0.5", "from 200 to 700");
  test::expect_cli_refusal(
      "estimate --model mixtral-8x7b --cluster dgx-h100 --gpus 64 --gbs 256 --seq 4096 --tp 1 --pp 1 --ep 8 "
      "--allow-lossy-comm --a2a-compression 1e400",
      "from 0 to 1");
}

TEST(CliAuditRefusals, AModelOverridesTheJobOfExperts) {
  const test::CliRun run = test::run_cli("experts --loads " + kExamples +
                                         "experts/mixtral-like.json --gpus 8 --redundant 8 --job " +
                                         kExamples + "mixtral-8x7b-h100.yaml --model mixtral-8x7b");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  test::expect_cli_refusal("experts --loads " + kExamples +
                               "experts/mixtral-like.json --gpus 8 --redundant 8 --model mixtral-8x7b",
                           "--model needs --cluster");
}

TEST(CliAuditRefusals, ARunWithoutGpusNamesTheField) {
  const std::string runs = test::write_temp(
      "no_gpus_runs.yaml",
      "runs:\n  - name: a\n    model: llama3-8b\n    gbs: 64\n    seq: 4096\n    precision: bf16\n"
      "    config: {tp: 1, pp: 1, vp: 1, mbs: 1, zero: 1, sp: false, recompute: none}\n    step_s: 5.3\n");
  test::expect_cli_refusal("calibrate --cluster dgx-h100 --fit gemm_efficiency_max --runs " + runs,
                           "gpus' is missing");
}

TEST(CliAuditRefusals, StandardOutputAsAnOutputKeepsTheReport) {
  // stdout is a regular file here: the CSV is written through the same
  // descriptor as the table, so neither replaces the other.
  const std::string sweep = "sweep --models llama3-8b --cluster dgx-h100 --seq 4096 --gpus 8,16 --gbs 64";
  const test::CliRun run = test::run_cli(sweep + " --csv /dev/stdout");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("model,params,gpus"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("2 points (2 with a plan)"), std::string::npos) << run.out;
  test::expect_cli_refusal(sweep + " --format json --json /dev/stdout", "is standard output");
}

// Beside --format json standard output holds one JSON document: any other
// output there is refused, as are two outputs both on it.
TEST(CliAuditRefusals, NoSecondOutputOnStandardOutputBesideJson) {
  const std::string sweep = "sweep --models llama3-8b --cluster dgx-h100 --seq 4096 --gpus 8,16 --gbs 64";
  test::expect_cli_refusal(sweep + " --format json --csv /dev/stdout",
                           "--csv /dev/stdout is standard output");
  test::expect_cli_refusal(sweep + " --format json --plot /dev/stdout",
                           "--plot /dev/stdout is standard output");
  test::expect_cli_refusal(sweep + " --csv /dev/stdout --plot /dev/stdout", "both write to standard output");
  const std::string job = " --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096";
  test::expect_cli_refusal("plan" + job + " --format json --timeline /dev/stdout", "--timeline");
  test::expect_cli_refusal("estimate" + job + " --tp 1 --pp 1 --format json --timeline /dev/stdout",
                           "--timeline");
  const std::string lengths = test::write_temp("stdout_lengths.txt", "8192 2048 1024 512\n");
  const std::string coefficients =
      std::string(PARPLAN_SOURCE_DIR) + "/examples/scatter/flexsp-gpt-7b-64xa100.json";
  test::expect_cli_refusal("scatter --lengths " + lengths + " --gpus 64 --coefficients " + coefficients +
                               " --format json --out /dev/stdout",
                           "--out /dev/stdout is standard output");
  // Without --format json one output may share stdout with the table.
  const test::CliRun table = test::run_cli("scatter --lengths " + lengths + " --gpus 64 --coefficients " +
                                           coefficients + " --out /dev/stdout");
  EXPECT_EQ(table.exit_code, 0) << table.err;
}

// A NUL byte the YAML parser quotes back is written as \x00: the error line
// is whole, not cut where the byte was.
TEST(CliAuditRefusals, ANulInAYamlEscapeKeepsTheLineWhole) {
  static const char kText[] = "name: \"a\\\0b\"\n";
  const std::string model = test::write_temp("nul_model.yaml", std::string(kText, sizeof kText - 1));
  test::expect_cli_refusal("estimate --model " + model + " --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096",
                           "\\x00); fix the syntax");
}

TEST(CliAuditRefusals, AnInfeasibleCheckIsOneLine) {
  const test::CliRun run = test::run_cli(
      "check --model llama3-405b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096 --tp 8 --pp 1 --max-gap 5");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(test::line_count(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("does not fit in memory"), std::string::npos) << run.err;
}

TEST(CliAuditRefusals, LayoutGroupsDoNotNest) {
  // Megatron-LM unrolls one level of '(...)*N' (pipeline_parallel_layer_layout.py).
  const std::string pp2 = kEstimate8b + " --tp 1 --pp 2 --pipeline-layout ";
  test::expect_cli_refusal(pp2 + "'E((tt)*2)*2t*24L'", "do not nest");
  test::expect_cli_refusal(pp2 + "'E(tt'", "without its group");
}

TEST(CliAuditRefusals, ADirectoryAsAClusterAsksForAProfile) {
  const test::CliRun run =
      test::run_cli("estimate --model llama3-8b --cluster /tmp --gpus 8 --gbs 8 --seq 2048 --tp 1 --pp 1");
  test::expect_refusal(run, "give a YAML file");
}

}  // namespace
}  // namespace parplan
