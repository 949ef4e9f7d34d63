// parplan tune: its trials pin down more constants than the top plans
// alone, their simulated logs recover a hidden profile, and the launch files
// pass the engine's rules.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "cost/step_cost.h"
#include "solvers/profile_fit.h"
#include "src/emit/emit.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "src/io/run_sources.h"
#include "src/tune/tune_loop.h"
#include "tests/cli_support.h"
#include "tests/synthetic_runs.h"
#include "tests/tune_support.h"

namespace parplan {
namespace {

struct TuneSetup {
  ModelSpec model = load_model("llama3-8b");
  ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job = test::recipe_job("megatron", 32, 256, 4096);
  HiddenProfile hidden;
  std::vector<FittedConstant> time_constants;
  std::vector<double> time_values;
  TuneSetup() {
    hidden = hidden_h100_profile(cluster);
    for (std::size_t j = 0; j < hidden.constants.size(); ++j) {
      if (hidden.constants[j].memory_only) continue;  // logs carry step times only
      time_constants.push_back(hidden.constants[j]);
      time_values.push_back(hidden.values[j]);
    }
  }
};

TEST(Tune, TrialsPinTheConstantsWithFewerRunsThanTheTopPlans) {
  TuneSetup s;
  // A job whose best plans differ little (tp 1 pp 1, cp 1 or 2, a ZeRO stage
  // or a recomputation apart).
  s.job.gpus = 64;
  s.job.gbs = 128;
  constexpr int kMaxRuns = 12;
  const auto candidates = candidate_trials(s.model, s.cluster, s.job);
  // The constants this job's runs depend on at all: under Megatron's
  // recipe attention is cuDNN's published curve, so the profile's attention
  // constants move no step time and no run can pin them.
  const auto relevant =
      identifiable_constants(s.cluster, trial_runs(s.model, candidates), s.time_constants, 1e-3);
  ASSERT_GE(relevant.size(), 4u);
  // The fewest runs that pin them all: the chosen trials (greedy, so the
  // first K of a longer choice are the choice of K) against the top K plans.
  const auto runs_to_pin_all = [&](const std::vector<Trial>& ordered) {
    for (std::size_t k = 1; k <= ordered.size(); ++k) {
      const std::vector<Trial> first(ordered.begin(), ordered.begin() + static_cast<std::ptrdiff_t>(k));
      if (identifiable_constants(s.cluster, trial_runs(s.model, first), s.time_constants, 1e-3).size() ==
          relevant.size())
        return static_cast<int>(k);
    }
    return kMaxRuns + 1;
  };
  const auto trials = choose_trials(s.model, s.cluster, candidates, tune_constants(s.cluster), kMaxRuns);
  const auto top = top_plan_trials(s.model, s.cluster, s.job, kMaxRuns);
  const int trial_runs_needed = runs_to_pin_all(trials);
  EXPECT_LE(trial_runs_needed, static_cast<int>(relevant.size()) + 1);
  EXPECT_LT(trial_runs_needed, runs_to_pin_all(top)) << "top plans: " << top.size();
}

TEST(Tune, SimulatedTrialLogsRecoverTheHiddenProfileAndPassEngineRules) {
  TuneSetup s;
  const auto dir =
      std::filesystem::temp_directory_path() / ("parplan_tune_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const TuneResult result =
      write_tune_loop(test::simulated_tune_request(s.model, s.cluster, s.job, 8, dir, s.hidden.cluster));
  ASSERT_EQ(result.trials.size(), 8u);
  for (const auto& t : result.trials) {
    Plan plan{s.model, s.cluster, t.job, t.config, {}};
    EXPECT_TRUE(engine_rule_violations(plan, Engine::kMegatron).empty()) << t.name;
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "README.md"));
  EXPECT_TRUE(std::filesystem::exists(dir / "run_trials.sh"));
  const auto runs = load_runs({(dir / "logs").string()}, s.cluster);
  ASSERT_EQ(runs.size(), 8u);
  // Every constant the trials pin (the README's --fit) is recovered; the
  // rest move no step time of these runs and keep the profile's values.
  ASSERT_GE(result.pinned.size(), 4u);
  std::vector<FittedConstant> fit_keys;
  std::vector<double> truth;
  for (const auto& key : result.pinned) {
    fit_keys.push_back(*find_fitted_constant(s.cluster, key));
    truth.push_back(fitted_value(s.hidden.cluster, fit_keys.back()));
  }
  const ProfileFitResult fit = fit_profile(s.cluster, runs, fit_keys);
  for (std::size_t j = 0; j < truth.size(); ++j)
    EXPECT_NEAR(fit.after[j], truth[j], 0.02 * truth[j]) << fit_keys[j].key;
  for (const auto& run : runs)
    EXPECT_NEAR(predict_run(run, fit.cluster).step_s / run.measured_step_s, 1.0, 1e-3);
  std::filesystem::remove_all(dir);
}

// The tuning example (docs/calibrate.md) can only recover its made-up
// cluster if that cluster is the shipped profile with the fitted constants
// moved and nothing else: put the six back and every plan costs the same.
TEST(Tune, ExampleTrueProfileIsTheShippedOneWithSixConstantsMoved) {
  TuneSetup s;
  ClusterSpec truth = load_cluster(std::string(PARPLAN_SOURCE_DIR) + "/examples/calibrate/true-h100.yaml");
  int moved = 0;
  for (const auto& c : fitted_constants(s.cluster)) {
    if (c.memory_only) continue;
    if (fitted_value(truth, c) != fitted_value(s.cluster, c)) ++moved;
    set_fitted_value(truth, c, fitted_value(s.cluster, c));
  }
  EXPECT_EQ(moved, 6);
  for (const auto& t : candidate_trials(s.model, s.cluster, s.job))
    EXPECT_DOUBLE_EQ(estimate_cost(s.model, truth, t.job, t.config).time.step_s,
                     estimate_cost(s.model, s.cluster, t.job, t.config).time.step_s)
        << t.name;
}

// A job no plan of which fits is infeasible (exit 1, naming what binds, as
// `plan` says it); one no config even divides is bad input (exit 2, as
// `plan` says it); neither writes anything.
TEST(Tune, InfeasibleJobExitsOneNamingTheBindingConstraint) {
  const std::string out = ::testing::TempDir() + "parplan_tune_infeasible_" + std::to_string(::getpid());
  const std::string job = "model: llama3-8b\ncluster: dgx-h100\ngbs: 256\nseq: 4096\nprecision: bf16\n";
  const std::string one_gpu = test::write_temp("tune_one_gpu.yaml", job + "gpus: 1\n");
  const test::CliRun tune = test::run_cli("tune --job " + one_gpu + " --out " + out);
  const test::CliRun plan = test::run_cli("plan --job " + one_gpu);
  EXPECT_EQ(plan.exit_code, 1) << plan.err;
  EXPECT_EQ(tune.exit_code, 1) << tune.err;
  EXPECT_EQ(test::line_count(tune.err), 1) << tune.err;
  EXPECT_NE(tune.err.find("memory: even the leanest config"), std::string::npos) << tune.err;
  EXPECT_NE(tune.err.find("GiB usable"), std::string::npos) << tune.err;
  EXPECT_TRUE(tune.out.empty()) << tune.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  const std::string tp3 = test::write_temp("tune_tp3.yaml", job + "gpus: 32\nconstraints: {tp: 3}\n");
  const std::string says = "config rejected: tp 3 must divide the model's 32 attention heads";
  test::expect_cli_refusal("tune --job " + tp3 + " --out " + out, says);
  test::expect_cli_refusal("plan --job " + tp3, says);
  // Pins each of which holds, but no split of the GPUs takes them all.
  const std::string split = test::write_temp("tune_split.yaml",
                                             "model: llama3-8b\ncluster: dgx-h100\ngbs: 3\nseq: 4096\ngpus: "
                                             "32\nconstraints: {tp: 8, pp: 1, cp: 1}\n");
  test::expect_cli_refusal("tune --job " + split + " --out " + out, "no split of 32 GPUs divides the job");
  test::expect_cli_refusal("plan --job " + split, "no split of 32 GPUs divides the job");
  EXPECT_FALSE(std::filesystem::exists(out));
}

// The job file's engine is the trials' engine: one tune cannot read back is
// refused as --emit deepspeed is, not replaced by Megatron.
TEST(Tune, JobFileEngineIsTheTrialsEngine) {
  const std::string out = ::testing::TempDir() + "parplan_tune_engine_" + std::to_string(::getpid());
  const std::string job = test::write_temp(
      "tune_deepspeed.yaml",
      "model: llama3-8b\ncluster: dgx-h100\ngpus: 32\ngbs: 256\nseq: 4096\nengine: deepspeed\n");
  const std::string says =
      "tune reads its trials' logs back from Megatron-LM, Megatron-DeepSpeed and torchtitan";
  test::expect_cli_refusal("tune --job " + job + " --out " + out, "field 'engine': " + says);
  test::expect_cli_refusal("tune --job " + job + " --out " + out + " --emit deepspeed", "--emit: " + says);
  EXPECT_FALSE(std::filesystem::exists(out));
  // A model the engine cannot build (no torchtitan flavor of Llama 2's
  // shape) is refused before any search, naming where the engine came from.
  const std::string llama2 = test::write_temp(
      "tune_llama2.yaml",
      "model: llama2-7b\ncluster: dgx-h100\ngpus: 32\ngbs: 256\nseq: 4096\nengine: torchtitan\n");
  test::expect_cli_refusal("tune --job " + llama2 + " --out " + out,
                           "field 'engine': torchtitan cannot build llama2-7b as it is");
  test::expect_cli_refusal("tune --job " + llama2 + " --out " + out + " --emit torchtitan",
                           "--emit: torchtitan cannot build llama2-7b as it is");
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace parplan
