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

nlohmann::json cli_json(const std::string& args) {
  const test::CliRun run = test::run_cli(args);
  EXPECT_EQ(run.exit_code, 0) << args << "\n" << run.err;
  return run.exit_code == 0 ? nlohmann::json::parse(run.out) : nlohmann::json::object();
}

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
  return f;
}

TEST(EngineAny, PlansTheFastestEnginesOptimumAsThatEngineCostsIt) {
  const nlohmann::json any = cli_json("plan" + kJob);
  double fastest = std::numeric_limits<double>::infinity();
  for (const char* engine : kEngines) {
    const test::CliRun run = test::run_cli("plan" + kJob + " --engine " + engine);
    if (run.exit_code != 0) continue;  // the engine has no plan for the job
    fastest = std::min(fastest, nlohmann::json::parse(run.out)["optimum"]["step_s"].get<double>());
  }
  EXPECT_DOUBLE_EQ(any["optimum"]["step_s"].get<double>(), fastest);
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

}  // namespace
}  // namespace parplan::engine_any_test
