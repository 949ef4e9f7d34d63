// skip-paths on large geo-distributed networks (the shape of SkipPipe's
// setting, scaled up): the candidate paths kept per source were the shortest
// round trips, which all ran through the same first nodes of each stage; on
// 1024 nodes nearly every micro-batch queued at three nodes (makespan 4700 s
// against a bound near 54 s), and the partition search took minutes. And
// --time-limit did not cover reading the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "solvers/skip_paths.h"
#include "tests/cli_support.h"

namespace parplan {
namespace skip_paths_large {

/// `nodes` in 8 equal stages over 12 sites: 2 GiB/s and 1 ms within a site,
/// 0.02 to 0.06 GiB/s and 30 to 130 ms between; 32 MiB of activations,
/// SkipPipe's task times, path length 6, memory 3, 4 micro-batches a source.
SkipProblem geo_problem(int nodes) {
  std::mt19937 rng(7);
  std::vector<int> site(nodes);
  for (int& s : site) s = static_cast<int>(rng() % 12);
  SkipProblem p;
  p.stage_sizes.assign(8, nodes / 8);
  p.path_length = 6;
  p.micro_batches_per_source = 4;
  SkipNetwork& net = p.network;
  net.nodes = nodes;
  net.memory = 3;
  net.forward_s.assign(nodes, 1.76);
  net.backward_factor = 1.5;
  net.loss_factor = 0.25;
  net.task_overhead_s = 0.13;
  net.transfer_s.assign(static_cast<std::size_t>(nodes) * nodes, 0.0);
  constexpr double kActivationGib = 1.0 / 32;
  for (int i = 0; i < nodes; ++i)
    for (int j = 0; j < nodes; ++j) {
      if (i == j) continue;
      const bool same = site[i] == site[j];
      const double latency_s = same ? 0.001 : (20 + 10 * std::abs(site[i] - site[j])) / 1000.0;
      const double gib_per_s = same ? 2 : 0.02 + 0.01 * ((site[i] * 7 + site[j] * 3) % 5);
      net.transfer_s[static_cast<std::size_t>(i) * nodes + j] = latency_s + kActivationGib / gib_per_s;
    }
  return p;
}

/// Micro-batches through the busiest node after stage 0.
int busiest_node_load(const SkipSchedule& s, int nodes) {
  std::vector<int> load(nodes, 0);
  for (const SkipMicroBatch& mb : s.micro_batches)
    for (std::size_t i = 1; i < mb.path.size(); ++i) ++load[mb.path[i]];
  return *std::max_element(load.begin(), load.end());
}

// 128 micro-batches each visit 5 of 224 nodes (2.9 a node on average). The
// short limit hurries part of the path search (all of it under the
// sanitizers, where the busiest node took 8); hurried or not, the schedule
// spreads, well within the bounds below (the defect queued 40 or more).
TEST(SkipPathsLarge, MicroBatchesSpreadOverTheNodesAndTheMakespanStaysNearTheBound) {
  const SkipProblem p = geo_problem(256);
  SkipSolveOptions options;
  options.time_limit_s = 0.5;
  const SkipSolveResult r = solve_skip_paths(p, options);
  ASSERT_TRUE(r.infeasible.empty()) << r.infeasible;
  EXPECT_EQ(schedule_violation(p, r.schedule), "");
  ASSERT_EQ(r.schedule.micro_batches.size(), 128u);
  ASSERT_GT(r.lower_bound_s, 0);
  EXPECT_LE(r.schedule.makespan_s, 1.3 * r.lower_bound_s);
  EXPECT_LE(busiest_node_load(r.schedule, p.network.nodes), 12);
  // The baseline visits 7 stages, so its own bound is higher; it must not
  // queue at a few nodes either.
  EXPECT_LE(r.full_pipeline.makespan_s, 2 * r.lower_bound_s);
  EXPECT_LE(busiest_node_load(r.full_pipeline, p.network.nodes), 12);
}

// Past the limit from the start: seeds only, paths placed unscored, and the
// result says so; the schedule is still valid and complete.
TEST(SkipPathsLarge, AnExhaustedLimitStillGivesAValidScheduleMarkedTimeLimited) {
  const SkipProblem p = geo_problem(256);
  SkipSolveOptions options;
  options.time_limit_s = 1e-3;
  const SkipSolveResult r = solve_skip_paths(p, options);
  EXPECT_TRUE(r.time_limited);
  EXPECT_EQ(schedule_violation(p, r.schedule), "");
  EXPECT_EQ(r.schedule.micro_batches.size(), 128u);
  EXPECT_TRUE(std::isfinite(r.schedule.makespan_s));
  EXPECT_GE(r.schedule.makespan_s, r.lower_bound_s - 1e-9);
  EXPECT_FALSE(r.notes.empty());
}

// Reading a 64-node problem (two 64 x 64 matrices) takes far more than the
// 1 ms limit: the command still answers, marked time-limited, and says so.
TEST(SkipPathsLarge, ReadingPastTheLimitIsReportedAndTheCommandStillAnswers) {
  const SkipProblem p = geo_problem(64);
  std::string text =
      "nodes: 64\nstage_sizes: [8, 8, 8, 8, 8, 8, 8, 8]\npath_length: 6\nmemory: 3\n"
      "micro_batches_per_source: 4\nstage_forward_s: 1.76\nbackward_factor: 1.5\n"
      "loss_factor: 0.25\ntask_overhead_s: 0.13\ntransfer_s:\n";
  for (int i = 0; i < 64; ++i) {
    text += "  - [";
    for (int j = 0; j < 64; ++j) text += (j ? ", " : "") + std::to_string(p.network.transfer(i, j));
    text += "]\n";
  }
  const std::string file = test::write_temp("skip-large-64.yaml", text);
  const test::CliRun run =
      test::run_cli("skip-paths --problem " + file + " --format json --time-limit 0.001");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_TRUE(j["time_limited"].get<bool>());
  ASSERT_TRUE(j.contains("notes"));
  EXPECT_NE(j["notes"][0].get<std::string>().find("reading the problem took"), std::string::npos);
  EXPECT_EQ(j["micro_batches"].size(), 32u);
}

}  // namespace skip_paths_large
}  // namespace parplan
