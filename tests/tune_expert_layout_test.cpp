// parplan tune on a MoE job: the trials measure the best plan of another
// expert-parallel size beside plan #1, because the cost model ranks expert
// layouts only within its held-out MoE error (docs/cost-model-moe.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cost/step_cost.h"
#include "src/emit/emit.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "src/io/run_sources.h"
#include "src/search/search.h"
#include "src/tune/tune_loop.h"
#include "tests/tune_support.h"

namespace parplan {
namespace {

struct MoeJob {
  ModelSpec model = load_model("mixtral-8x7b");
  ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job = test::recipe_job("megatron", 64, 256, 4096);
};

double best_step_at_ep(const MoeJob& s, int ep) {
  JobSpec pinned = s.job;
  pinned.pins.ep = ep;
  SearchOptions options;
  options.top_k = 1;
  const SearchResult r = search_configs(s.model, s.cluster, pinned, options);
  return r.best.empty() ? -1 : r.best.front().cost.time.step_s;
}

TEST(TuneExpertLayout, EachLayoutTrialIsTheBestPlanOfItsExpertParallelSize) {
  MoeJob s;
  const auto candidates = candidate_trials(s.model, s.cluster, s.job);
  ASSERT_FALSE(candidates.empty());
  const int plan1_ep = candidates.front().config.ep;
  int layouts = 0;
  std::vector<int> seen;
  for (const auto& t : candidates) {
    if (!t.expert_layout) continue;
    ++layouts;
    EXPECT_NE(t.config.ep, plan1_ep) << t.name;
    EXPECT_EQ(std::count(seen.begin(), seen.end(), t.config.ep), 0) << "one trial per size: " << t.name;
    seen.push_back(t.config.ep);
    // The search pinned to that size finds nothing faster.
    EXPECT_NEAR(t.predicted_step_s, best_step_at_ep(s, t.config.ep), 1e-12) << t.name;
    EXPECT_EQ(t.job.pins.ep, s.job.pins.ep) << "the trial runs the job as given: " << t.name;
    EXPECT_NE(t.why.find("predicted"), std::string::npos) << t.why;
  }
  EXPECT_GE(layouts, 1);
  // However the design weighs the constants, the second trial is the
  // fastest other layout.
  const auto two = choose_trials(s.model, s.cluster, candidates, tune_constants(s.cluster), 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_TRUE(two[1].expert_layout);
  double fastest_other = 1e300;
  for (int ep = 1; ep <= s.model.experts; ++ep)
    if (s.model.experts % ep == 0 && ep != plan1_ep) {
      const double step = best_step_at_ep(s, ep);
      if (step > 0) fastest_other = std::min(fastest_other, step);
    }
  EXPECT_NEAR(two[1].predicted_step_s, fastest_other, 1e-12);
}

TEST(TuneExpertLayout, DenseJobsAndPinnedExpertParallelismGetNone) {
  MoeJob s;
  s.job.pins.ep = 8;
  for (const auto& t : candidate_trials(s.model, s.cluster, s.job)) {
    EXPECT_FALSE(t.expert_layout) << t.name;
    EXPECT_EQ(t.config.ep, 8) << t.name;
  }
  const ModelSpec dense = load_model("llama3-8b");
  JobSpec job = s.job;
  job.pins.ep.reset();
  for (const auto& t : candidate_trials(dense, s.cluster, job)) EXPECT_FALSE(t.expert_layout) << t.name;
}

// The loop as a user runs it: the layout trial's launch files pass the
// engine's rules, its simulated log reads back as its config, and the
// README says what to do when it wins.
TEST(TuneExpertLayout, LayoutTrialRunsThroughTheLoop) {
  MoeJob s;
  const auto dir =
      std::filesystem::temp_directory_path() / ("parplan_tune_layout_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const TuneResult result =
      write_tune_loop(test::simulated_tune_request(s.model, s.cluster, s.job, 3, dir, s.cluster));
  ASSERT_EQ(result.trials.size(), 3u);
  const Trial& layout = result.trials[1];
  ASSERT_TRUE(layout.expert_layout);
  EXPECT_TRUE(
      engine_rule_violations(Plan{s.model, s.cluster, layout.job, layout.config, {}}, Engine::kMegatron)
          .empty());
  const auto runs = load_runs({(dir / "logs").string()}, s.cluster);
  ASSERT_EQ(runs.size(), 3u);
  bool read_back = false;
  for (const auto& run : runs)
    if (run.name.find(layout.name) != std::string::npos) {
      read_back = true;
      EXPECT_EQ(run.config.ep, layout.config.ep);
      EXPECT_EQ(run.config.pp, layout.config.pp);
      EXPECT_NEAR(run.measured_step_s / layout.predicted_step_s, 1.0, 1e-3);
    }
  EXPECT_TRUE(read_back);
  std::ifstream in(dir / "README.md");
  std::stringstream readme;
  readme << in.rdbuf();
  EXPECT_NE(readme.str().find("--ep " + std::to_string(layout.config.ep)), std::string::npos) << readme.str();
  EXPECT_NE(readme.str().find(" ep " + std::to_string(layout.config.ep) + " etp "), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace parplan
