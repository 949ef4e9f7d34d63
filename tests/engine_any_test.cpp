// --engine any (the default): every engine searched and costed as it runs the
// plan, the fastest engine's plan kept. Each number `any` prints is then one
// the named engine's own `--engine E` prints for the same plan.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_support.h"

namespace parplan::engine_any_test {
namespace {

// Llama 3 70B on 128 H100s: a union recipe once named torchtitan's plan the
// fastest at a step time torchtitan's own recipe does not give.
const std::string kJob =
    " --model llama3-70b --cluster dgx-h100 --gpus 128 --gbs 512 --seq 8192 --format json";
const char* const kEngines[] = {"megatron", "deepspeed", "megatron-deepspeed", "torchtitan"};

using test::cli_json;

// The flags of a plan's config, for estimate and check.
std::string config_flags(const nlohmann::json& c) {
  std::string f = " --tp " + std::to_string(c["tp"].get<int>()) + " --pp " +
                  std::to_string(c["pp"].get<int>()) + " --cp " + std::to_string(c["cp"].get<int>()) +
                  " --mbs " + std::to_string(c["mbs"].get<int>()) + " --zero " +
                  std::to_string(c["zero"].get<int>()) + " --recompute " + c["recompute"].get<std::string>();
  if (c["vp"].get<int>() > 1) f += " --vp " + std::to_string(c["vp"].get<int>());
  if (c["sp"].get<bool>()) f += " --sp";
  if (c["recompute"] == "full" && c["recompute_layers"].get<int>() > 0)
    f += " --recompute-layers " + std::to_string(c["recompute_layers"].get<int>());
  if (c["zeropp"].get<bool>()) f += c["qwz"].get<bool>() ? " --zeropp" : " --hpz";
  // An uneven split is part of the plan (the search solves it per candidate).
  if (c["first_stage_layers"].get<int>() > 0)
    f += " --first-stage-layers " + std::to_string(c["first_stage_layers"].get<int>());
  if (c["last_stage_layers"].get<int>() > 0)
    f += " --last-stage-layers " + std::to_string(c["last_stage_layers"].get<int>());
  return f;
}

TEST(EngineAny, PlansTheFastestEnginesOptimumAsThatEngineCostsIt) {
  const nlohmann::json any = cli_json("plan" + kJob);
  // `engines` lists each engine's own optimum, fastest first.
  const nlohmann::json& listed = any["engines"];
  ASSERT_EQ(listed.size(), std::size(kEngines));
  const auto listed_as = [&](const std::string& engine) {
    for (const auto& e : listed)
      if (e["engine"] == engine) return e;
    return nlohmann::json();
  };
  double fastest = std::numeric_limits<double>::infinity();
  for (const char* engine : kEngines) {
    const test::CliRun run = test::run_cli("plan" + kJob + " --engine " + engine);
    const nlohmann::json e = listed_as(engine);
    if (run.exit_code != 0) {  // the engine has no plan for the job
      EXPECT_TRUE(e["step_s"].is_null()) << engine;
      continue;
    }
    const nlohmann::json own = nlohmann::json::parse(run.out);
    EXPECT_FALSE(own.contains("engines")) << "one engine searched: nothing to compare";
    fastest = std::min(fastest, own["optimum"]["step_s"].get<double>());
    EXPECT_DOUBLE_EQ(e["step_s"].get<double>(), own["optimum"]["step_s"].get<double>()) << engine;
    EXPECT_EQ(e["config"], own["config"]) << engine;
    EXPECT_EQ(e["chosen"].get<bool>(), engine == any["optimum"]["engine"]) << engine;
  }
  for (std::size_t i = 1; i < listed.size(); ++i) {
    if (!listed[i]["step_s"].is_null()) {
      EXPECT_LE(listed[i - 1]["step_s"].get<double>(), listed[i]["step_s"].get<double>());
    }
  }
  EXPECT_DOUBLE_EQ(any["optimum"]["step_s"].get<double>(), fastest);
  EXPECT_DOUBLE_EQ(listed[0]["step_s"].get<double>(), fastest);
  // The named engine prints the same plan at the same step time.
  const std::string engine = any["optimum"]["engine"];
  const nlohmann::json own =
      cli_json("estimate" + kJob + " --engine " + engine + config_flags(any["config"]));
  EXPECT_DOUBLE_EQ(own["time"]["step_s"].get<double>(), any["time"]["step_s"].get<double>());
  // check under any finds the plan optimal.
  const nlohmann::json checked = cli_json("check" + kJob + config_flags(any["config"]));
  EXPECT_DOUBLE_EQ(checked["gap_percent"].get<double>(), 0.0);
}

// estimate under any: each engine that runs the config gives its own step
// time, and the costs printed are the fastest's.
TEST(EngineAny, EstimateGivesEachEnginesOwnStepTime) {
  const std::string config = " --tp 1 --pp 1 --zero 2 --mbs 1 --recompute none";
  const std::string job =
      " --model llama3-8b --cluster dgx-h100 --gpus 64 --gbs 256 --seq 8192 --format json";
  const nlohmann::json any = cli_json("estimate" + job + config);
  ASSERT_GE(any["step_s_per_engine"].size(), 2u);
  double fastest = std::numeric_limits<double>::infinity();
  for (const auto& [engine, step_s] : any["step_s_per_engine"].items()) {
    const nlohmann::json own = cli_json("estimate" + job + config + " --engine " + engine);
    EXPECT_DOUBLE_EQ(own["time"]["step_s"].get<double>(), step_s.get<double>()) << engine;
    fastest = std::min(fastest, step_s.get<double>());
  }
  EXPECT_DOUBLE_EQ(any["time"]["step_s"].get<double>(), fastest);
  EXPECT_DOUBLE_EQ(any["step_s_per_engine"][any["engine"].get<std::string>()].get<double>(), fastest);
}

// An engine that cannot run the job, or does not take one of the user's
// choices, is listed with the reason instead of a plan.
TEST(EngineAny, PlanNamesWhyAnEngineHasNoPlan) {
  const nlohmann::json any = cli_json(
      "plan --model llama3-8b --cluster dgx-h100 --gpus 16 --gbs 64 --seq 8192 --precision fp8 "
      "--fp8-recipe current --format json");
  ASSERT_EQ(any["engines"].size(), std::size(kEngines));
  EXPECT_EQ(any["engines"][0]["engine"], "megatron");
  EXPECT_TRUE(any["engines"][0]["chosen"].get<bool>());
  for (std::size_t i = 1; i < any["engines"].size(); ++i) {
    const nlohmann::json& e = any["engines"][i];
    EXPECT_TRUE(e["step_s"].is_null()) << e.dump();
    const std::string reason = e["reason"];
    if (e["engine"] == "torchtitan") {
      EXPECT_NE(reason.find("not searched: --fp8-recipe"), std::string::npos) << reason;
    } else {
      EXPECT_NE(reason.find("no fp8"), std::string::npos) << reason;
    }
  }
}

// A model an engine cannot build (no torchtitan flavor of Llama 2's shape)
// is that engine's line under any, and a refused request under --engine.
TEST(EngineAny, AnEngineThatCannotBuildTheModelIsNamedNotSearched) {
  const std::string job = "plan --model llama2-7b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096";
  const nlohmann::json any = cli_json(job + " --format json");
  bool listed = false;
  for (const nlohmann::json& e : any["engines"]) {
    if (e["engine"] != "torchtitan") continue;
    listed = true;
    EXPECT_TRUE(e["step_s"].is_null()) << e.dump();
    EXPECT_NE(e["reason"].get<std::string>().find("cannot build the model as it is: torchtitan builds models "
                                                  "from registered flavors"),
              std::string::npos)
        << e.dump();
  }
  EXPECT_TRUE(listed);
  test::expect_cli_refusal(job + " --engine torchtitan",
                           "--engine torchtitan cannot build llama2-7b as it is");
  // check refuses it as plan does: a request to change, not a regression.
  test::expect_cli_refusal(job.substr(std::string("plan").size()).insert(0, "check") +
                               " --engine torchtitan --tp 1 --pp 1 --zero 3 --mbs 1",
                           "--engine torchtitan cannot build llama2-7b as it is");
  // Megatron-LM builds it: the same job plans there.
  EXPECT_EQ(test::run_cli(job + " --engine megatron").exit_code, 0);
}

}  // namespace
}  // namespace parplan::engine_any_test
