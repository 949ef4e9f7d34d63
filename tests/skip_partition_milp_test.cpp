// SkipPipe partition MILP: its optimum equals an exhaustive search over every
// partition and every link assignment (written here on its own) on both
// backends, and never exceeds its warm start.
#include "solvers/skip_partition_milp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "src/io/skip_problem_loader.h"

namespace parplan {
namespace {

SkipNetwork random_network(int nodes, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.05, 3.0);
  SkipNetwork net;
  net.nodes = nodes;
  net.forward_s.assign(nodes, 1.0);
  net.transfer_s.assign(static_cast<std::size_t>(nodes) * nodes, 0.0);
  for (int i = 0; i < nodes; ++i)
    for (int j = 0; j < nodes; ++j)
      if (i != j) net.transfer_s[i * nodes + j] = u(rng);
  return net;
}

/// Least link cost of one partition: every assignment of each node of stage
/// s to a node of stage s+1 with at most ceil(n_s / n_{s+1}) links per target.
double brute_link_cost(const SkipNetwork& net, const std::vector<std::vector<int>>& p) {
  double total = 0;
  for (std::size_t s = 0; s + 1 < p.size(); ++s) {
    const auto& from = p[s];
    const auto& to = p[s + 1];
    const int cap = static_cast<int>((from.size() + to.size() - 1) / to.size());
    double best = INFINITY;
    std::vector<int> load(to.size(), 0);
    std::function<void(std::size_t, double)> go = [&](std::size_t k, double cost) {
      if (k == from.size()) {
        best = std::min(best, cost);
        return;
      }
      for (std::size_t t = 0; t < to.size(); ++t) {
        if (load[t] == cap) continue;
        ++load[t];
        go(k + 1, cost + net.transfer(from[k], to[t]) + net.transfer(to[t], from[k]));
        --load[t];
      }
    };
    go(0, 0);
    total += best;
  }
  return total;
}

double brute_optimum(const SkipNetwork& net, const std::vector<int>& sizes) {
  double best = INFINITY;
  for_each_partition(net.nodes, sizes, [&](const SkipPartition& p) {
    best = std::min(best, brute_link_cost(net, p));
    return true;
  });
  return best;
}

class SkipPartitionMilp : public ::testing::TestWithParam<SolverBackend> {};

TEST_P(SkipPartitionMilp, OptimumEqualsExhaustiveSearch) {
  const std::vector<std::vector<int>> size_sets = {{2, 2, 2}, {3, 2, 1}, {2, 1, 2, 1}, {2, 3}, {1, 2, 2}};
  unsigned seed = 11;
  for (const auto& sizes : size_sets) {
    int nodes = 0;
    for (int s : sizes) nodes += s;
    for (int trial = 0; trial < 3; ++trial) {
      const SkipNetwork net = random_network(nodes, seed++);
      const SkipPartition warm = block_partition(sizes);
      const SkipPartitionMilpResult r =
          solve_skip_partition_milp(net, sizes, warm, GetParam(), SolveOptions{});
      ASSERT_EQ(r.certificate.status, SolveStatus::kOptimal) << r.certificate.message;
      const double brute = brute_optimum(net, sizes);
      EXPECT_NEAR(r.link_cost_s, brute, 1e-6);
      // The returned partition has the stage sizes and the stated cost.
      for (std::size_t s = 0; s < sizes.size(); ++s)
        EXPECT_EQ(static_cast<int>(r.partition[s].size()), sizes[s]);
      EXPECT_NEAR(brute_link_cost(net, r.partition), r.link_cost_s, 1e-6);
      EXPECT_NEAR(r.warm_start_cost_s, brute_link_cost(net, warm), 1e-6);
      EXPECT_LE(r.link_cost_s, r.warm_start_cost_s + 1e-9);
    }
  }
}

TEST_P(SkipPartitionMilp, GeoTwentyNodesNoWorseThanTheChainWarmStart) {
  const SkipProblem p =
      load_skip_problem(std::string(PARPLAN_SOURCE_DIR) + "/examples/skip-paths/geo-20-nodes.yaml").problem;
  const SkipPartition warm = chain_partition(p.network, p.stage_sizes);
  SolveOptions options;
  options.time_limit_s = 5;
  const SkipPartitionMilpResult r =
      solve_skip_partition_milp(p.network, p.stage_sizes, warm, GetParam(), options);
  ASSERT_TRUE(r.certificate.status == SolveStatus::kOptimal ||
              r.certificate.status == SolveStatus::kFeasible ||
              r.certificate.status == SolveStatus::kTimeLimitNoSolution)
      << r.certificate.message;
  EXPECT_LE(r.link_cost_s, r.warm_start_cost_s + 1e-6);
  // Stopped or not, the LP relaxation's bound at least gives the gap.
  EXPECT_TRUE(std::isfinite(r.certificate.gap));
  // Links to the 8 nearest nodes only: the full transportation can only be cheaper.
  EXPECT_LE(brute_link_cost(p.network, r.partition), r.link_cost_s + 1e-6);
  std::vector<int> seen(p.network.nodes, 0);
  for (std::size_t s = 0; s < p.stage_sizes.size(); ++s) {
    EXPECT_EQ(static_cast<int>(r.partition[s].size()), p.stage_sizes[s]);
    for (int node : r.partition[s]) ++seen[node];
  }
  for (int count : seen) EXPECT_EQ(count, 1);
}

TEST_P(SkipPartitionMilp, LpBoundProvesAnEvenNetworkWithoutBranching) {
  // Every link costs the same round trip, so every partition costs
  // (nodes of stages 0..S-2) x 2c and so does the LP relaxation: the warm
  // start is optimal by the bound alone.
  constexpr double kOneWay_s = 0.4;
  SkipNetwork net = random_network(7, 3);
  for (int i = 0; i < net.nodes; ++i)
    for (int j = 0; j < net.nodes; ++j) net.transfer_s[i * net.nodes + j] = i == j ? 0 : kOneWay_s;
  const std::vector<int> sizes{3, 2, 2};
  const SkipPartition warm = chain_partition(net, sizes);
  const SkipPartitionMilpResult r = solve_skip_partition_milp(net, sizes, warm, GetParam(), SolveOptions{});
  ASSERT_EQ(r.certificate.status, SolveStatus::kOptimal) << r.certificate.message;
  EXPECT_NE(r.certificate.message.find("LP relaxation"), std::string::npos) << r.certificate.message;
  EXPECT_EQ(r.partition, warm);
  EXPECT_NEAR(r.link_cost_s, 5 * 2 * kOneWay_s, 1e-9);
  EXPECT_NEAR(r.link_cost_s, brute_optimum(net, sizes), 1e-9);
  EXPECT_EQ(r.certificate.gap, 0);
}

TEST_P(SkipPartitionMilp, StatedBoundNeverExceedsTheOptimum) {
  // A tiny limit stops some solves before the optimum: whatever the status,
  // the stated bound is a true lower bound and the gap is the answer's.
  for (unsigned seed = 0; seed < 6; ++seed) {
    const SkipNetwork net = random_network(7, 100 + seed);
    const std::vector<int> sizes{3, 2, 2};
    const SkipPartition warm = chain_partition(net, sizes);
    SolveOptions options;
    options.time_limit_s = seed % 2 ? 1e-3 : 5;
    const SkipPartitionMilpResult r = solve_skip_partition_milp(net, sizes, warm, GetParam(), options);
    const double optimum = brute_optimum(net, sizes);
    EXPECT_GE(r.link_cost_s, optimum - 1e-6) << seed;
    if (!std::isfinite(r.certificate.best_bound)) continue;
    EXPECT_LE(r.certificate.best_bound, optimum + 1e-6) << seed;
    EXPECT_NEAR(r.certificate.gap, (r.link_cost_s - r.certificate.best_bound) / r.link_cost_s, 1e-6) << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SkipPartitionMilp,
                         ::testing::Values(SolverBackend::kCbc, SolverBackend::kGlpk),
                         [](const auto& info) { return std::string(backend_name(info.param)); });

}  // namespace
}  // namespace parplan
