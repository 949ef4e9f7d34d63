// The CLI's contract: exit codes, one-line errors, the stable JSON keys.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::CliRun;
using test::run_cli;
using test::write_temp;

const std::string kJob = "--model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048";

TEST(Cli, EstimateJsonHasTheDocumentedKeys) {
  const CliRun run =
      run_cli("estimate " + kJob + " --tp 8 --pp 8 --vp 2 --sp --recompute selective --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  for (const char* key : {"tp", "pp", "vp", "dp", "cp", "ep", "sp", "zero", "mbs", "gbs", "recompute",
                          "recompute_layers", "attention"})
    EXPECT_TRUE(j["config"].contains(key)) << key;
  for (const char* key : {"params", "layers", "hidden"}) EXPECT_TRUE(j["model"].contains(key)) << key;
  for (const char* key :
       {"step_s", "compute_s", "bubble_s", "tp_comm_s", "pp_comm_s", "dp_comm_s", "exposed_comm_s"})
    EXPECT_TRUE(j["time"].contains(key)) << key;
  for (const char* key : {"tokens_per_s", "model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "hfu"})
    EXPECT_TRUE(j["throughput"].contains(key)) << key;
  for (const char* key : {"peak_bytes", "params_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes",
                          "activations_per_layer_bytes", "buffers_bytes", "capacity_bytes", "fits"})
    EXPECT_TRUE(j["memory"].contains(key)) << key;
  EXPECT_EQ(j["config"]["dp"], 16);  // 1024 / (8 * 8)
  // tokens/s is gbs * seq / step by definition.
  EXPECT_NEAR(j["throughput"]["tokens_per_s"].get<double>() * j["time"]["step_s"].get<double>(),
              1536.0 * 2048, 1.0);
}

TEST(Cli, EstimateOfAConfigThatDoesNotFitExitsZeroAndSaysSo) {
  // GPT-3 175B without model parallelism cannot hold its weights on 80 GB.
  const std::string job = "--model gpt3-175b --cluster dgx-a100 --gpus 512 --gbs 1536 --seq 2048";
  const CliRun run = run_cli("estimate " + job + " --tp 1 --pp 1 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_FALSE(nlohmann::json::parse(run.out)["memory"]["fits"].get<bool>());
  const CliRun table = run_cli("estimate " + job + " --tp 1 --pp 1");
  EXPECT_NE(table.out.find("DOES NOT FIT"), std::string::npos);
}

TEST(Cli, PlanJsonHasSearchAndAlternatives) {
  const CliRun run = run_cli("plan " + kJob + " --top 3 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  for (const char* key : {"candidates", "evaluated", "feasible", "time_s"})
    EXPECT_TRUE(j["search"].contains(key));
  EXPECT_EQ(j["alternatives"].size(), 2u);
  EXPECT_TRUE(j["memory"]["fits"].get<bool>());
  for (const auto& alt : j["alternatives"])
    EXPECT_GE(alt["time"]["step_s"].get<double>(), j["time"]["step_s"].get<double>());
}

TEST(Cli, PlanHonoursPinnedDimensions) {
  const CliRun run = run_cli("plan " + kJob + " --tp 4 --pp 16 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["config"]["tp"], 4);
  EXPECT_EQ(j["config"]["pp"], 16);
}

TEST(Cli, HelpOnEverySubcommandHasAnExample) {
  for (const char* sub : {"estimate", "plan", "check"}) {
    const CliRun run = run_cli(std::string(sub) + " --help");
    EXPECT_EQ(run.exit_code, 0) << sub;
    EXPECT_NE(run.out.find("Example"), std::string::npos) << sub;
  }
}

struct BadInput {
  const char* name;
  std::string args;
  const char* must_mention;
};

class CliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliBadInput, OneLineOnStderrAndExitTwo) {
  const BadInput& bad = GetParam();
  test::expect_refusal(run_cli(bad.args), bad.must_mention, bad.args);
}

std::vector<BadInput> bad_inputs() {
  const std::string bad_yaml = write_temp("bad_model.yaml", "layers: [1, 2\nhidden: 3\n");
  const std::string bad_json = write_temp("bad_config.json", "{\"num_hidden_layers\": 2,, }");
  const std::string bad_job = write_temp("bad_job.yaml", "model: gpt3-175b\ncluster: dgx-a100\ngpus: -4\n");
  const std::string base = "plan --model gpt3-175b --cluster dgx-a100 --gbs 1536 --seq 2048 ";
  return {
      {"MalformedYaml", "plan --model " + bad_yaml + " --cluster dgx-a100 --gpus 8 --gbs 8 --seq 2048",
       "bad_model.yaml"},
      {"MalformedJson", "plan --model " + bad_json + " --cluster dgx-a100 --gpus 8 --gbs 8 --seq 2048",
       "bad_config.json"},
      {"UnknownModel", "plan --model gpt-7 --cluster dgx-a100 --gpus 64 --gbs 64 --seq 2048", "gpt-7"},
      {"UnknownCluster", "plan --model gpt3-175b --cluster dgx-z9000 --gpus 64 --gbs 64 --seq 2048",
       "dgx-z9000"},
      {"ZeroGpus", base + "--gpus 0", "--gpus"},
      {"NegativeGbs", "plan --model gpt3-175b --cluster dgx-a100 --gpus 64 --gbs -8 --seq 2048", "--gbs"},
      {"PinnedTpNotDividingHeads", base + "--gpus 1024 --tp 7", "heads"},
      {"GbsNotDivisible",
       "plan --model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 7 --seq 2048 --tp 8 --pp 8 --cp 1",
       "gbs"},
      {"EstimateTpNotDividingHeads",
       "estimate " +
           std::string(
               "--model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048 --tp 5 --pp 1"),
       "tp"},
      {"NegativeNumberInJobFile", "plan --job " + bad_job, "gpus"},
      {"UnknownFormat", base + "--gpus 64 --format xml", "--format"},
      {"UnknownRecompute", base + "--gpus 64 --recompute some", "--recompute"},
      {"MissingModel", "plan --cluster dgx-a100 --gpus 64 --gbs 64 --seq 2048", "--model"},
      {"SeqBeyondLearnedPositions", "plan --model gpt3-175b --cluster dgx-a100 --gpus 64 --gbs 64 --seq 4096",
       "--seq"},
      {"UnknownSolver", base + "--gpus 64 --solver gurobi", "--solver"},
      // A mistyped option is named with the nearest one, not reported as the
      // required option it stands for missing.
      {"MistypedRequiredOption", "experts --load x.json --gpus 8",
       "unknown option --load (did you mean --loads?)"},
      {"MistypedOptionWithValue", base + "--gpus 64 --tpp 3", "unknown option --tpp (did you mean --tp?)"},
  };
}

INSTANTIATE_TEST_SUITE_P(Cli, CliBadInput, ::testing::ValuesIn(bad_inputs()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace parplan
