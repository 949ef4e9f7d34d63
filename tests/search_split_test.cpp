// The search's pipeline splits and expert layouts: an uneven split is solved
// for each candidate's own ZeRO stage and recomputation, full recomputation
// may cover the largest stage of an uneven split, and every etp dividing tp
// is tried. Each search is pinned down to a few shapes to stay fast.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::cli_json;
using test::run_cli;

// DeepSeek-V3's 61 layers do not divide over 8 stages: every pp-8 plan has
// an uneven split, and with tp 2 on 80 GB parts it fits only with ZeRO-1 and
// full recomputation.
const std::string kDeepSeek =
    "--model deepseek-v3 --cluster dgx-h800 --gpus 256 --gbs 1024 --seq 4096 --tp 2 --sp --pp 8 --cp 1 --ep "
    "16 "
    "--etp 1 --mbs 1 --format json --no-timings";

TEST(SearchSplit, UnevenSplitIsSolvedWithTheCandidatesMemorySavings) {
  // A config of the search space that fits: the search's optimum can be no
  // slower. (Before, the split was solved at ZeRO-0 without recomputation,
  // did not fit, and the shape was dropped: "no split divides the job".)
  const auto given = cli_json("estimate " + kDeepSeek +
                              " --first-stage-layers 8 --last-stage-layers 5 --zero 1 --recompute full");
  ASSERT_TRUE(given["memory"]["fits"].get<bool>()) << given.dump();
  const auto plan = cli_json("plan " + kDeepSeek + " --zero 1 --recompute full");
  ASSERT_TRUE(plan.contains("config")) << plan.dump();
  const auto& c = plan["config"];
  EXPECT_EQ(c["first_stage_layers"].get<int>() + c["last_stage_layers"].get<int>() +
                6 * c["stage_layers"][1].get<int>(),
            61);
  EXPECT_TRUE(plan["memory"]["fits"].get<bool>());
  EXPECT_LE(plan["time"]["step_s"].get<double>(), given["time"]["step_s"].get<double>() * (1 + 1e-12));
}

TEST(SearchSplit, FullRecomputationMayCoverTheLargestStage) {
  // Stages of 8, 8, ..., 8, 5 layers: the middle stages need all 8 layers
  // recomputed, one more than 61 / 8 = 7 (the old cap).
  const std::string split = " --first-stage-layers 8 --last-stage-layers 5 --zero 1 --recompute full";
  const auto plan = cli_json("plan " + kDeepSeek + split);
  ASSERT_TRUE(plan.contains("config")) << plan.dump();
  const int recomputed = plan["config"]["recompute_layers"].get<int>();
  EXPECT_GT(recomputed, 61 / 8);
  EXPECT_LE(recomputed, (61 - 8 - 5) / 6);
  EXPECT_TRUE(plan["memory"]["fits"].get<bool>());
  // One layer fewer does not fit: the count is the least that does.
  const auto fewer =
      cli_json("estimate " + kDeepSeek + split + " --recompute-layers " + std::to_string(recomputed - 1));
  EXPECT_FALSE(fewer["memory"]["fits"].get<bool>());
}

TEST(SearchSplit, LayersThatDoNotDivideOverPpNeverMeanNoSplit) {
  // Mixtral's 32 layers over 3 stages: only uneven splits exist. The answer
  // is a plan, or exit 1 naming memory, never exit 2 "no split divides".
  const test::CliRun run = run_cli(
      "plan --model mixtral-8x7b --cluster dgx-h100 --gpus 12 --gbs 48 --seq 4096 --pp 3 --tp 1 --cp 1 "
      "--format json --no-timings");
  ASSERT_NE(run.exit_code, 2) << run.err;
  if (run.exit_code == 1) {
    EXPECT_NE(run.err.find("memory"), std::string::npos) << run.err;
  } else {
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto c = nlohmann::json::parse(run.out)["config"];
    const int first = c["first_stage_layers"], last = c["last_stage_layers"];
    EXPECT_GT(first, 0);
    EXPECT_GT(last, 0);
    EXPECT_GT(32 - first - last, 0);
  }
}

TEST(SearchExperts, EveryEtpDividingTpIsSearched) {
  // tp 4 allows etp 1, 2 and 4; etp 2 was never tried. Each pinned etp is a
  // part of the free search's space, so the free optimum is no slower.
  const std::string job =
      "plan --model mixtral-8x7b --cluster dgx-h100 --gpus 16 --gbs 256 --seq 4096 --tp 4 --pp 2 --cp 1 "
      "--vp 1 --mbs 1 --zero 1 --recompute selective --format json --no-timings";
  const double free_s = cli_json(job)["time"]["step_s"].get<double>();
  for (int etp : {1, 2, 4}) {
    const auto pinned = cli_json(job + " --etp " + std::to_string(etp));
    ASSERT_TRUE(pinned.contains("config")) << etp;
    EXPECT_EQ(pinned["config"]["etp"], etp);
    EXPECT_LE(free_s, pinned["time"]["step_s"].get<double>() * (1 + 1e-12)) << "etp " << etp;
  }
}

}  // namespace
}  // namespace parplan
