// check's optimum is plan's for the same job, and a config counts only where
// an engine runs it: under --engine any a config no engine runs fails; the
// job file's constraints pin the optimum as they pin plan; a heterogeneous
// cluster's first/last split round-trips through the JSON config.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/cli_support.h"

namespace parplan::test {
namespace {

TEST(CheckPlanSpace, UnderAnyAConfigNoEngineRunsFails) {
  // Mixtral with the expert all-to-all overlapped: no released engine runs it.
  const CliRun r =
      run_cli(std::string("check --job ") + PARPLAN_SOURCE_DIR +
              "/examples/mixtral-8x7b-h100.yaml --tp 1 --pp 1 --ep 8 --zero 2 --mbs 1 --recompute none "
              "--ep-overlap on --max-gap 50 --format json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["pass"].get<bool>());
  EXPECT_TRUE(j["gap_percent"].is_null());
  EXPECT_NE(j["engine_problem"].get<std::string>().find("megatron: "), std::string::npos) << j.dump();
  EXPECT_EQ(line_count(r.err), 1) << r.err;
}

// Under --engine any the step time is one engine's: check names it, and
// each engine's own, as estimate does; the engine it names is one where the
// config fits and whose own estimate is that step.
TEST(CheckPlanSpace, UnderAnyTheCostingEngineIsNamed) {
  const std::string args = std::string("--job ") + PARPLAN_SOURCE_DIR +
                           "/examples/llama3-70b-h100.yaml --tp 4 --pp 4 --mbs 1 --sp --zero 1";
  const nlohmann::json j = cli_json("check " + args + " --format json");
  ASSERT_TRUE(j.contains("costed_engine")) << j.dump();
  const std::string engine = j["costed_engine"].get<std::string>();
  ASSERT_TRUE(j["step_s_per_engine"].contains(engine)) << j.dump();
  EXPECT_EQ(j["step_s_per_engine"][engine].get<double>(), j["step_s"].get<double>());
  const nlohmann::json alone = cli_json("estimate " + args + " --engine " + engine + " --format json");
  EXPECT_TRUE(alone["memory"]["fits"].get<bool>());
  EXPECT_EQ(alone["time"]["step_s"].get<double>(), j["step_s"].get<double>());
  ASSERT_TRUE(j["optimum"].contains("engine")) << j.dump();
  // The table lists each engine's step and says where the config does not fit.
  const CliRun table = run_cli("check " + args);
  int not_fitting = 0;
  for (const auto& [name, step] : j["step_s_per_engine"].items()) {
    const nlohmann::json own = cli_json("estimate " + args + " --engine " + name + " --format json");
    const bool fits = own["memory"]["fits"].get<bool>();
    not_fitting += fits ? 0 : 1;
    char shown[96];
    std::snprintf(shown, sizeof shown, "%s (%.3f s%s)", name.c_str(), step.get<double>(),
                  fits ? "" : ", does not fit");
    EXPECT_NE(table.out.find(shown), std::string::npos) << shown << "\n" << table.out;
  }
  EXPECT_GT(not_fitting, 0) << "the case should hold an engine where the config does not fit";
}

TEST(CheckPlanSpace, JobFileConstraintsPinTheOptimumAsInPlan) {
  const std::string job =
      "model: gpt3-175b\ncluster: dgx-a100\ngpus: 1024\ngbs: 1536\nseq: 2048\nconstraints: {tp: 8, pp: 16}\n";
  const nlohmann::json plan =
      cli_json("plan --job " + write_temp("constrained.yaml", job) + " --format json");
  const nlohmann::json& c = plan["config"];
  const std::string config = "config: {tp: " + c["tp"].dump() + ", pp: " + c["pp"].dump() +
                             ", vp: " + c["vp"].dump() + ", cp: " + c["cp"].dump() +
                             ", mbs: " + c["mbs"].dump() + ", zero: " + c["zero"].dump() +
                             ", sp: " + c["sp"].dump() + ", recompute: " + c["recompute"].get<std::string>() +
                             ", recompute_layers: " + c["recompute_layers"].dump() + "}\n";
  const CliRun r = run_cli("check --job " + write_temp("constrained_config.yaml", job + config) +
                           " --max-gap 0 --format json");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["optimum_step_s"].get<double>(), plan["time"]["step_s"].get<double>(), 1e-9);
  EXPECT_NEAR(j["gap_percent"].get<double>(), 0.0, 1e-9);
}

TEST(CheckPlanSpace, HeterogeneousFirstLastSplitRoundTrips) {
  // holmes-mixed: the per-stage split with equal middle stages is written as
  // Megatron's first/last split, so estimate costs the plan as planned.
  const std::string job =
      "--model qwen3-30b-a3b --cluster holmes-mixed --gpus 64 --gbs 256 --seq 4096 --engine megatron";
  const nlohmann::json plan = cli_json("plan " + job + " --format json");
  const nlohmann::json& c = plan["config"];
  int first = c["first_stage_layers"], last = c["last_stage_layers"];
  const std::vector<int> stages = c["stage_layers"];
  if (first == 0 && last == 0) {
    for (int layers : stages) EXPECT_EQ(layers, stages.front()) << c.dump();
    return;
  }
  EXPECT_EQ(first, stages.front());
  EXPECT_EQ(last, stages.back());
  std::string flags = " --tp " + c["tp"].dump() + " --pp " + c["pp"].dump() + " --cp " + c["cp"].dump() +
                      " --ep " + c["ep"].dump() + " --etp " + c["etp"].dump() + " --mbs " + c["mbs"].dump() +
                      " --zero " + c["zero"].dump() + " --recompute " + c["recompute"].get<std::string>() +
                      " --a2a " + c["a2a"].get<std::string>() + " --ep-overlap " +
                      (c["ep_overlap"].get<bool>() ? "on" : "off") + (c["sp"].get<bool>() ? " --sp" : "") +
                      " --first-stage-layers " + std::to_string(first) + " --last-stage-layers " +
                      std::to_string(last);
  const nlohmann::json est = cli_json("estimate " + job + flags + " --format json");
  const nlohmann::json& e = est.is_array() ? est[0] : est;
  EXPECT_NEAR(e["time"]["step_s"].get<double>(), plan["time"]["step_s"].get<double>(), 1e-9);
}

}  // namespace
}  // namespace parplan::test
