// SkipPipe solver: convergence rules, optimality against an exhaustive search
// written here on its own, and the partition against random and greedy ones.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "solvers/skip_path_rules.h"
#include "solvers/skip_paths.h"
#include "src/io/skip_problem_loader.h"

namespace parplan {
namespace {

SkipProblem geo_problem(const std::string& file) {
  return load_skip_problem(std::string(PARPLAN_SOURCE_DIR) + "/examples/skip-paths/" + file).problem;
}

void expect_rules_hold(const SkipProblem& p, const SkipSchedule& s) {
  EXPECT_EQ(schedule_violation(p, s), "");
  std::vector<int> stage_of(p.network.nodes, -1);
  for (std::size_t st = 0; st < s.partition.size(); ++st)
    for (int node : s.partition[st]) stage_of[node] = static_cast<int>(st);
  std::vector<int> per_source(p.network.nodes, 0);
  for (const SkipMicroBatch& mb : s.micro_batches) {
    ++per_source[mb.source];
    ASSERT_EQ(static_cast<int>(mb.path.size()), p.path_length);
    EXPECT_EQ(mb.path[0], mb.source);
    EXPECT_EQ(stage_of[mb.source], 0);
    // Independent reading of the rules: distinct stages, each step above the
    // furthest stage so far or exactly one below it right after reaching it.
    int frontier = 0, swaps = 0;
    std::vector<bool> seen(s.partition.size(), false);
    seen[0] = true;
    for (std::size_t i = 1; i < mb.path.size(); ++i) {
      const int st = stage_of[mb.path[i]];
      EXPECT_FALSE(seen[st]);
      seen[st] = true;
      if (st > frontier)
        frontier = st;
      else {
        EXPECT_EQ(st, frontier - 1);
        EXPECT_EQ(stage_of[mb.path[i - 1]], frontier);
        ++swaps;
      }
    }
    EXPECT_LE(swaps, 2);
  }
  for (int src : s.partition[0]) EXPECT_EQ(per_source[src], p.micro_batches_per_source);
}

// The simulator replays the schedule to its makespan, without deadlock and
// within every node's memory.
void expect_replays_as_scheduled(const SkipProblem& p, const SkipSchedule& s) {
  SkipSimulator sim;
  const SkipSimResult replay = sim.run(p.network, s.micro_batches);
  EXPECT_FALSE(replay.deadlock);
  EXPECT_DOUBLE_EQ(replay.makespan_s, s.makespan_s);
  for (int n = 0; n < p.network.nodes; ++n) EXPECT_LE(replay.peak_memory[n], p.network.memory);
}

TEST(SkipPathsRules, StageSequencesByHand) {
  EXPECT_EQ(stage_sequence_violation(std::vector<int>{0, 2, 1}, 3, 3), "");
  EXPECT_EQ(stage_sequence_violation(std::vector<int>{0, 1, 3, 2}, 4, 4), "");
  EXPECT_EQ(stage_sequence_violation(std::vector<int>{0, 2, 1, 4, 3}, 5, 5), "");
  EXPECT_NE(stage_sequence_violation(std::vector<int>{0, 3, 1}, 4, 3), "");  // two below the furthest
  EXPECT_NE(stage_sequence_violation(std::vector<int>{0, 2, 1, 4, 3, 6, 5}, 7, 7), "");  // three swaps
  EXPECT_NE(stage_sequence_violation(std::vector<int>{0, 1, 1}, 3, 3), "");              // a stage twice
  EXPECT_NE(stage_sequence_violation(std::vector<int>{1, 2}, 3, 2), "");                 // not from stage 0
  EXPECT_NE(stage_sequence_violation(std::vector<int>{0, 3, 2, 1}, 4, 4), "");           // swap after a swap
  // S = 4, P = 3: increasing {1,2}, {1,3}, {2,3}, and the swaps [0,2,1], [0,3,2].
  EXPECT_EQ(valid_stage_sequences(4, 3).size(), 5u);
  // Full length: no skip, each of 3 neighbouring pairs swapped or not, at most 2 swaps, no overlap:
  // S = 4 (stages 1..3): [] [12] [23] -> 3 orders.
  EXPECT_EQ(valid_stage_sequences(4, 4).size(), 3u);
}

TEST(SkipPathsSolver, GeoTwentyNodesPathsObeyRulesAndMemory) {
  const SkipProblem p = geo_problem("geo-20-nodes.yaml");
  const SkipSolveResult r = solve_skip_paths(p, SkipSolveOptions{});
  ASSERT_EQ(r.infeasible, "");
  expect_rules_hold(p, r.schedule);
  expect_replays_as_scheduled(p, r.schedule);
  EXPECT_LE(r.lower_bound_s, r.schedule.makespan_s);
  EXPECT_LT(r.schedule.makespan_s, r.full_pipeline.makespan_s);
}

// Every partition x every assignment of rule-abiding paths, releases at 0.
double brute_force_s(const SkipProblem& p) {
  const int n = p.network.nodes;
  const int stages = static_cast<int>(p.stage_sizes.size());
  double best_s = std::numeric_limits<double>::infinity();
  SkipSimulator sim;
  std::vector<int> stage_of(n, -1), count(stages, 0);
  std::function<void(int)> assign = [&](int node) {
    if (node < n) {
      for (int s = 0; s < stages; ++s)
        if (count[s] < p.stage_sizes[s]) {
          stage_of[node] = s, ++count[s];
          assign(node + 1);
          --count[s];
        }
      return;
    }
    std::vector<int> sources;
    for (int v = 0; v < n; ++v)
      if (stage_of[v] == 0) sources.push_back(v);
    // All node sequences of path_length from each source, filtered by the rules.
    std::vector<std::vector<std::vector<int>>> paths(sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
      std::vector<int> path{sources[i]};
      std::function<void()> grow = [&] {
        if (static_cast<int>(path.size()) == p.path_length) {
          std::vector<int> st;
          for (int v : path) st.push_back(stage_of[v]);
          if (stage_sequence_violation(st, stages, p.path_length).empty()) paths[i].push_back(path);
          return;
        }
        for (int v = 0; v < n; ++v)
          if (std::find(path.begin(), path.end(), v) == path.end()) {
            path.push_back(v);
            grow();
            path.pop_back();
          }
      };
      grow();
    }
    const int n_mb = static_cast<int>(sources.size()) * p.micro_batches_per_source;
    std::vector<SkipMicroBatch> mbs(n_mb);
    std::function<void(int)> pick = [&](int m) {
      if (m == n_mb) {
        best_s = std::min(best_s, sim.run(p.network, mbs).makespan_s);
        return;
      }
      const std::size_t si = m % sources.size();
      for (const auto& path : paths[si]) {
        mbs[m] = {sources[si], path, 0};
        pick(m + 1);
      }
    };
    pick(0);
  };
  assign(0);
  return best_s;
}

SkipProblem random_small_problem(std::mt19937& rng, std::vector<int> sizes, int path_length, int per_source) {
  SkipProblem p;
  int n = 0;
  for (int s : sizes) n += s;
  p.network.nodes = n;
  p.stage_sizes = std::move(sizes);
  p.path_length = path_length;
  p.micro_batches_per_source = per_source;
  p.network.memory = 1 + static_cast<int>(rng() % 2);
  p.network.backward_factor = 1.5;
  p.network.loss_factor = 0.25;
  p.network.task_overhead_s = 0.05;
  std::uniform_real_distribution<double> compute(0.5, 2), link(0.05, 3);
  for (int i = 0; i < n; ++i) p.network.forward_s.push_back(compute(rng));
  p.network.transfer_s.assign(n * n, 0);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      p.network.transfer_s[i * n + j] = p.network.transfer_s[j * n + i] = link(rng);
  return p;
}

TEST(SkipPathsSolver, EqualsExhaustiveSearchUpToSixNodes) {
  std::mt19937 rng(11);
  struct Case {
    std::vector<int> sizes;
    int path_length, per_source;
  };
  const Case cases[] = {{{1, 1, 2}, 3, 2},    {{1, 2, 2}, 3, 2}, {{2, 1, 1, 1}, 3, 1},
                        {{1, 1, 1, 1}, 3, 2}, {{2, 2, 2}, 3, 1}, {{1, 2, 1, 2}, 4, 1}};
  for (const Case& c : cases) {
    for (int trial = 0; trial < 2; ++trial) {
      const SkipProblem p = random_small_problem(rng, c.sizes, c.path_length, c.per_source);
      SkipSolveOptions options;
      options.search_release_times = false;
      const SkipSolveResult r = solve_skip_paths(p, options);
      EXPECT_TRUE(r.exhaustive);
      EXPECT_NEAR(r.schedule.makespan_s, brute_force_s(p), 1e-9) << "nodes " << p.network.nodes;
      expect_rules_hold(p, r.schedule);
      // Searching release times too can only help.
      EXPECT_LE(solve_skip_paths(p, SkipSolveOptions{}).schedule.makespan_s, r.schedule.makespan_s + 1e-9);
    }
  }
}

double makespan_on(const SkipProblem& p, const std::vector<std::vector<int>>& partition) {
  SkipSolveOptions options;
  options.partition = partition;
  return solve_skip_paths(p, options).schedule.makespan_s;
}

TEST(SkipPathsSolver, PartitionBeatsRandomAndGreedyOnGeoSetting) {
  const SkipProblem p = geo_problem("geo-20-nodes.yaml");
  const double ours_s = solve_skip_paths(p, SkipSolveOptions{}).schedule.makespan_s;
  // Greedy: nodes in id order fill the stages (the order SkipPipe lists them).
  std::vector<std::vector<int>> greedy(p.stage_sizes.size());
  int node = 0;
  for (std::size_t s = 0; s < greedy.size(); ++s)
    for (int i = 0; i < p.stage_sizes[s]; ++i) greedy[s].push_back(node++);
  EXPECT_LT(ours_s, makespan_on(p, greedy));
  // Greedy by distance: each stage-0 node pulls its nearest free node into every next stage in turn.
  std::vector<std::vector<int>> nearest(p.stage_sizes.size());
  std::vector<bool> used(p.network.nodes, false);
  std::vector<int> head;
  for (int i = 0; i < p.stage_sizes[0]; ++i) nearest[0].push_back(i), used[i] = true, head.push_back(i);
  int turn = 0;
  for (std::size_t s = 1; s < nearest.size(); ++s)
    for (int i = 0; i < p.stage_sizes[s]; ++i, ++turn) {
      int& h = head[turn % head.size()];
      int pick = -1;
      for (int v = 0; v < p.network.nodes; ++v)
        if (!used[v] && (pick < 0 || p.network.transfer(h, v) < p.network.transfer(h, pick))) pick = v;
      nearest[s].push_back(pick);
      used[pick] = true;
      h = pick;
    }
  EXPECT_LT(ours_s, makespan_on(p, nearest));
  std::mt19937 rng(3);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<int> order(p.network.nodes);
    for (int i = 0; i < p.network.nodes; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<std::vector<int>> random(p.stage_sizes.size());
    int k = 0;
    for (std::size_t s = 0; s < random.size(); ++s)
      for (int i = 0; i < p.stage_sizes[s]; ++i) random[s].push_back(order[k++]);
    EXPECT_LT(ours_s, makespan_on(p, random)) << "random partition " << trial;
  }
}

TEST(SkipPathsSolver, ThirtyTwoNodesUnderHalfTheFullPipeline) {
  const SkipProblem p = geo_problem("geo-32-nodes.yaml");
  const SkipSolveResult r = solve_skip_paths(p, SkipSolveOptions{});
  ASSERT_EQ(r.infeasible, "");
  expect_rules_hold(p, r.schedule);
  EXPECT_LT(r.schedule.makespan_s, 0.5 * r.full_pipeline.makespan_s);
  EXPECT_LE(r.lower_bound_s, r.schedule.makespan_s);
  // The partition MILP ran, warm-started from the chain seed.
  EXPECT_EQ(r.partition_milp.name, "skip_partition");
  EXPECT_LE(r.partition_link_cost_s, r.warm_start_link_cost_s + 1e-6);
  // With its bound (at least the LP relaxation's) it states how far the
  // partition's links may be from the least.
  ASSERT_TRUE(std::isfinite(r.partition_milp.gap));
  EXPECT_GE(r.partition_milp.gap, 0);
  EXPECT_LE(r.partition_milp.gap, 1);
  EXPECT_LE(r.partition_milp.best_bound, r.partition_link_cost_s + 1e-6);
}

TEST(SkipPathsSolver, CapacityTooSmallIsNamed) {
  SkipProblem p = geo_problem("geo-20-nodes.yaml");
  p.stage_capacity = {std::nullopt, 17, 18, 18, 18, 18};  // 89 visits, 90 needed
  EXPECT_NE(solve_skip_paths(p, SkipSolveOptions{}).infeasible.find("stage_capacity"), std::string::npos);
}

}  // namespace
}  // namespace parplan

namespace parplan {
namespace {

// Many micro-batches: scoring a path simulates every micro-batch placed so
// far, so the greedy alone outgrew any time limit (hundreds of seconds at
// 2 x 1000). Past the deadline the search stops improving and places the
// rest unscored; the schedule still keeps every rule and says it stopped.
TEST(SkipPathsSolver, ATimeLimitCutsTheSearchShortAndKeepsEveryRule) {
  SkipProblem p = geo_problem("geo-20-nodes.yaml");
  p.micro_batches_per_source = 60;
  p.stage_capacity.clear();  // no cap per stage: only memory bounds the paths
  SkipSolveOptions options;
  options.time_limit_s = 0.01;
  const SkipSolveResult r = solve_skip_paths(p, options);
  ASSERT_EQ(r.infeasible, "");
  EXPECT_TRUE(r.time_limited);
  expect_rules_hold(p, r.schedule);
  expect_replays_as_scheduled(p, r.schedule);
}

}  // namespace
}  // namespace parplan
