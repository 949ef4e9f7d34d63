// Faster links must not give a slower schedule. With every transfer zero on
// geo-20 the solver gave 97 s where geo-20's own schedule replays in 59 s:
// all paths tied on round trip, the 24 kept per source were the first by
// node id, and the first nodes of each stage took most micro-batches.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "solvers/skip_candidates.h"
#include "solvers/skip_paths.h"
#include "src/io/skip_problem_loader.h"
#include "tests/sanitized_trials.h"

namespace parplan {
namespace skip_faster_links {

SkipProblem example(const std::string& file) {
  return load_skip_problem(std::string(PARPLAN_SOURCE_DIR) + "/examples/skip-paths/" + file).problem;
}

SkipProblem scaled(SkipProblem p, double factor) {
  for (double& t : p.network.transfer_s) t *= factor;
  return p;
}

// The kept paths of a source spread over the nodes of every later stage when
// their round trips tie, instead of all starting through the lowest ids.
TEST(SkipPathsFasterLinks, TiedRoundTripsKeepPathsOverEveryNode) {
  const SkipProblem p = scaled(example("geo-20-nodes.yaml"), 0);
  std::vector<std::vector<int>> partition;
  for (int s = 0, next = 0; s < static_cast<int>(p.stage_sizes.size()); ++s)
    for (int i = 0; i < p.stage_sizes[s]; ++i) {
      if (i == 0) partition.emplace_back();
      partition.back().push_back(next++);
    }
  const auto kept = skip_candidates(p.network, partition, 0, p.path_length, false, 24);
  ASSERT_EQ(kept.size(), 24u);
  std::set<int> used;
  for (const SkipCandidate& c : kept) {
    EXPECT_DOUBLE_EQ(c.round_trip_s, kept.front().round_trip_s);  // every path ties
    used.insert(c.path.begin() + 1, c.path.end());
  }
  // 24 paths x 3 later nodes cover the 15 nodes of stages 1..5.
  EXPECT_EQ(used.size(), 15u);
}

// The property: each shipped example, its transfers scaled by f <= 1, solved
// with the original's schedule as warm start, finishes no later than the
// original schedule. The warm start replayed on the faster links bounds the
// answer; the test also holds the simulation to finishing that replay no
// later than on the slower links.
TEST(SkipPathsFasterLinks, ScaledDownTransfersNeverGiveALargerMakespan) {
  // Under the sanitizers geo-20 with free transfers only (kTrialStride).
  const char* files[] = {"geo-20-nodes.yaml", "geo-32-nodes.yaml", "llama3-8b-cost-model.yaml"};
  const double factors[] = {0.0, 0.5, 0.99};
  for (int f = 0; f < 3; f += test::kTrialStride) {
    const char* file = files[f];
    const SkipProblem p = example(file);
    const SkipSolveResult original = solve_skip_paths(p, SkipSolveOptions{});
    ASSERT_EQ(original.infeasible, "") << file;
    for (int k = 0; k < 3; k += test::kTrialStride) {
      const double factor = factors[k];
      SkipSolveOptions options;
      options.warm_start = original.schedule;
      const SkipProblem faster = scaled(p, factor);
      const SkipSolveResult r = solve_skip_paths(faster, options);
      ASSERT_EQ(r.infeasible, "") << file;
      EXPECT_EQ(schedule_violation(faster, r.schedule), "") << file << " x" << factor;
      EXPECT_LE(r.schedule.makespan_s, original.schedule.makespan_s + 1e-9) << file << " x" << factor;
      SkipSimulator sim;
      EXPECT_DOUBLE_EQ(sim.run(faster.network, r.schedule.micro_batches).makespan_s, r.schedule.makespan_s);
    }
  }
}

// Without a warm start: geo-20 with free transfers needs no schedule slower
// than geo-20's own (the audit's case).
TEST(SkipPathsFasterLinks, FreeTransfersOnGeoTwentyBeatItsOwnSchedule) {
  const SkipProblem p = example("geo-20-nodes.yaml");
  const double original_s = solve_skip_paths(p, SkipSolveOptions{}).schedule.makespan_s;
  EXPECT_LE(solve_skip_paths(scaled(p, 0), SkipSolveOptions{}).schedule.makespan_s, original_s + 1e-9);
}

}  // namespace skip_faster_links
}  // namespace parplan
