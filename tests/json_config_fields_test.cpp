// Fields docs/json-schema.md and docs/experts.md promise in every output
// that carries them: each config object's per-rank layers, and an EPLB file
// whose arguments EPLB's rebalance_experts accepts.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace {

const std::string kExamples = std::string(PARPLAN_SOURCE_DIR) + "/examples/";

TEST(JsonConfigFields, EveryConfigObjectListsEachRanksLayers) {
  // llama3-8b's 32 layers over pp 2, laid out 8 + 24.
  const std::string layout = " --pipeline-layout 'Etttttttt|ttttttttttttttttttttttttL'";
  const std::string job = "--model llama3-8b --cluster dgx-h100 --gpus 16 --gbs 64 --seq 4096 --tp 1 --pp 2";
  const nlohmann::json estimate = test::cli_json("estimate " + job + layout + " --format json");
  EXPECT_EQ(estimate["config"]["stage_layers"], nlohmann::json::parse("[8, 24]"));
  // The laid-out config does not fit (exit 1): its object is printed all the same.
  const test::CliRun checked = test::run_cli("check " + job + layout + " --engine megatron --format json");
  ASSERT_NE(checked.exit_code, 2) << checked.err;
  const nlohmann::json check = nlohmann::json::parse(checked.out);
  EXPECT_EQ(check["config"]["stage_layers"], nlohmann::json::parse("[8, 24]"));
  if (!check["optimum"].is_null()) {
    const nlohmann::json& optimum = check["optimum"]["config"];
    int total = 0;
    for (const auto& layers : optimum["stage_layers"]) total += layers.get<int>();
    EXPECT_EQ(total, 32);
    EXPECT_EQ(optimum["stage_layers"].size(), optimum["pp"].get<std::size_t>());
  }
}

TEST(JsonConfigFields, AnEplbFileWithoutGroupsAsksForTheGlobalPolicy) {
  // EPLB's rebalance_experts runs its global policy for num_groups 1; 0
  // would divide by zero in its hierarchical branch.
  const std::string out = ::testing::TempDir() + "parplan_eplb_" + std::to_string(::getpid()) + ".json";
  const test::CliRun run = test::run_cli("experts --loads " + kExamples +
                                         "experts/mixtral-like.json --gpus 8 --redundant 8 --out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(test::slurp(out))["num_groups"], 1);
  std::remove(out.c_str());
}

}  // namespace
}  // namespace parplan
