// The planner's solver contract: backends agree, uneven splits are valid,
// `check` exit codes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::run_cli;

TEST(PlanSolver, CbcAndGlpkGiveTheSamePlanAndObjective) {
  const std::string job =
      "plan --model llama3-405b --cluster dgx-h100 --gpus 1024 --gbs 512 --seq 8192 --pp 16 --format json";
  const auto cbc = nlohmann::json::parse(run_cli(job + " --solver cbc").out);
  const auto glpk = nlohmann::json::parse(run_cli(job + " --solver glpk").out);
  EXPECT_EQ(cbc["config"], glpk["config"]);
  ASSERT_FALSE(cbc["solver"].empty());
  ASSERT_EQ(cbc["solver"].size(), glpk["solver"].size());
  for (std::size_t i = 0; i < cbc["solver"].size(); ++i) {
    EXPECT_EQ(cbc["solver"][i]["status"], "optimal");
    EXPECT_EQ(glpk["solver"][i]["status"], "optimal");
    EXPECT_NEAR(cbc["solver"][i]["objective"].get<double>(), glpk["solver"][i]["objective"].get<double>(),
                1e-9 * cbc["solver"][i]["objective"].get<double>());
  }
}

TEST(PlanSolver, ExhaustiveAgreesOnASmallInstance) {
  // 4 stages: small enough to enumerate the stage split.
  const std::string job =
      "plan --model gpt-3.6b --cluster dgx-a100 --gpus 32 --gbs 256 --seq 2048 --pp 4 --vp 1 --format json";
  const auto cbc = nlohmann::json::parse(run_cli(job + " --solver cbc").out);
  const auto exhaustive = nlohmann::json::parse(run_cli(job + " --solver exhaustive").out);
  ASSERT_FALSE(cbc["solver"].empty());
  EXPECT_EQ(exhaustive["solver"][0]["status"], "optimal");
  EXPECT_NEAR(cbc["solver"][0]["objective"].get<double>(), exhaustive["solver"][0]["objective"].get<double>(),
              1e-9 * cbc["solver"][0]["objective"].get<double>());
}

TEST(PlanSolver, LayersNotDivisibleByPpGetAValidUnevenSplit) {
  // Llama 3 405B has 126 layers; 16 does not divide them.
  const auto j = nlohmann::json::parse(run_cli("plan --model llama3-405b --cluster dgx-h100 --gpus 1024 "
                                               "--gbs 512 --seq 8192 --pp 16 --format json")
                                           .out);
  const auto& c = j["config"];
  ASSERT_EQ(c["pp"], 16);
  const int first = c["first_stage_layers"], last = c["last_stage_layers"];
  ASSERT_GT(first, 0);
  ASSERT_GT(last, 0);
  // Megatron's rule: the middle stages share the rest evenly.
  EXPECT_EQ((126 - first - last) % 14, 0);
  EXPECT_GT(126 - first - last, 0);
  // The LM head (128K vocabulary) makes the last stage no heavier in layers.
  EXPECT_LE(last, (126 - first - last) / 14);
}

const std::string kExpert =
    "--model gpt-1t --cluster dgx-a100 --gpus 3072 --gbs 3072 --seq 2048 --precision fp16 --tp 8 --pp 64 "
    "--vp 2 "
    "--recompute full";

TEST(PlanCheck, PublishedExpertConfigPrintsItsGap) {
  const auto run = run_cli("check " + kExpert + " --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_GE(j["gap_percent"].get<double>(), 0.0);
  EXPECT_NEAR(j["gap_percent"].get<double>(),
              (j["step_s"].get<double>() / j["optimum_step_s"].get<double>() - 1) * 100, 1e-6);
}

TEST(PlanCheck, MaxGapZeroFailsABadConfigAndPassesTheOptimum) {
  const auto bad = run_cli("check " + kExpert + " --max-gap 0");
  EXPECT_EQ(bad.exit_code, 1);
  const auto j = nlohmann::json::parse(run_cli("check " + kExpert + " --format json").out);
  const auto& o = j["optimum"]["config"];
  std::string args =
      "check --model gpt-1t --cluster dgx-a100 --gpus 3072 --gbs 3072 --seq 2048 --precision fp16";
  args += " --tp " + std::to_string(o["tp"].get<int>()) + " --pp " + std::to_string(o["pp"].get<int>()) +
          " --vp " + std::to_string(o["vp"].get<int>()) + " --cp " + std::to_string(o["cp"].get<int>()) +
          " --mbs " + std::to_string(o["mbs"].get<int>()) + " --zero " +
          std::to_string(o["zero"].get<int>()) + " --recompute " + o["recompute"].get<std::string>() +
          " --recompute-layers " + std::to_string(o["recompute_layers"].get<int>()) + " --attention " +
          o["attention"].get<std::string>() + (o["sp"].get<bool>() ? " --sp" : "") + " --max-gap 0";
  const auto good = run_cli(args);
  EXPECT_EQ(good.exit_code, 0) << args << "\n" << good.out << good.err;
}

TEST(PlanCheck, AConfigThatDoesNotFitFails) {
  const auto run = run_cli(
      "check --model gpt3-175b --cluster dgx-a100 --gpus 512 --gbs 1536 --seq 2048 --tp 1 --pp 1 --max-gap "
      "50");
  EXPECT_EQ(run.exit_code, 1);
}

}  // namespace
}  // namespace parplan
