// Expert placement: the MILP equals brute force on small instances (both
// backends, including ones the greedy start gets wrong); every placement
// obeys the rules; the lower bound is below the optimum.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "solvers/expert_placement.h"
#include "solvers/expert_placement_heuristic.h"
#include "tests/experts_brute_force.h"
#include "tests/sanitized_trials.h"

namespace parplan {
namespace {

struct Small {
  int experts, gpus, slots;
};

std::vector<double> random_loads(std::mt19937& rng, int experts, int max_load) {
  std::uniform_int_distribution<int> pick(1, max_load);
  std::vector<double> loads(experts);
  for (double& x : loads) x = pick(rng);
  return loads;
}

ExpertPlacementShape shape_of(const Small& s) {
  ExpertPlacementShape shape;
  shape.experts = s.experts;
  shape.gpus = s.gpus;
  shape.redundant = s.gpus * s.slots - s.experts;
  return shape;
}

TEST(ExpertsSolver, MilpEqualsBruteForceOnBothBackendsIncludingWhereGreedyIsSuboptimal) {
  const std::vector<Small> sizes = {{4, 2, 3}, {5, 3, 2}, {5, 2, 4}, {6, 3, 3}, {4, 3, 2}, {7, 3, 3}};
  std::mt19937 rng(20260501);
  int greedy_wrong = 0;
  int instances = 0;
  // Rounds 0 and 3 under the sanitizers: both load scales, a third of the work.
  for (int round = 0; round < 6; round += test::kTrialStride) {
    for (const Small& s : sizes) {
      const std::vector<double> loads = random_loads(rng, s.experts, round % 2 == 0 ? 30 : 200);
      const ExpertPlacementShape shape = shape_of(s);
      ASSERT_EQ(validate_shape(shape), "");
      const double optimum = test::brute_force(loads, s.gpus, s.slots);
      PlacementOptions greedy_only;
      greedy_only.improve = false;
      const LayerResult start = place_layer_heuristic(loads, shape, greedy_only);
      if (start.placement.max_load > optimum * (1 + 1e-9)) ++greedy_wrong;
      EXPECT_LE(start.lower_bound_load, optimum * (1 + 1e-12));
      for (SolverBackend backend : {SolverBackend::kCbc, SolverBackend::kGlpk}) {
        PlacementOptions options = greedy_only;
        options.backend = backend;
        options.solver_time_limit_s = 30;
        LayerResult r = start;
        // Bypass the "already optimal" shortcut only when the start is not
        // provably optimal; the MILP then has to reach the optimum itself.
        improve_layer_with_milp(loads, shape, options, r);
        EXPECT_NEAR(r.placement.max_load, optimum, 1e-9 * optimum)
            << backend_name(backend) << " E=" << s.experts << " G=" << s.gpus << " S=" << s.slots;
        EXPECT_EQ(r.certificate.status, SolveStatus::kOptimal) << backend_name(backend);
        EXPECT_EQ(check_placement(loads, shape, r.placement), "");
        if (start.placement.max_load > optimum * (1 + 1e-9)) {
          EXPECT_TRUE(r.milp_improved);
        }
      }
      ++instances;
    }
  }
  // The comparison is only meaningful if the greedy start was beaten often.
  EXPECT_GE(greedy_wrong, 5 / test::kTrialStride) << "of " << instances;
}

TEST(ExpertsSolver, ImprovedHeuristicNeverBeatsTheOptimum) {
  std::mt19937 rng(7);
  for (int round = 0; round < 30; ++round) {
    const Small s = round % 2 == 0 ? Small{5, 3, 2} : Small{6, 3, 3};
    const std::vector<double> loads = random_loads(rng, s.experts, 100);
    const LayerResult r = place_layer_heuristic(loads, shape_of(s), PlacementOptions{});
    EXPECT_GE(r.placement.max_load, test::brute_force(loads, s.gpus, s.slots) * (1 - 1e-12));
  }
}

TEST(ExpertsSolver, ConstraintsHoldOnRandomInstances) {
  std::mt19937 rng(99);
  std::lognormal_distribution<double> lognormal(0.0, 1.0);
  for (int round = 0; round < 40; ++round) {
    ExpertPlacementShape shape;
    shape.nodes = 1 + round % 4;
    shape.gpus = shape.nodes * (1 + round % 5);
    shape.experts = shape.gpus * (1 + round % 3) + (round % 2 == 0 ? 0 : shape.nodes * 2);
    shape.redundant = (shape.gpus - shape.experts % shape.gpus) % shape.gpus + shape.gpus * (round % 3);
    if (round % 3 == 0 && shape.experts % shape.nodes == 0) shape.groups = shape.nodes;
    if (!validate_shape(shape).empty()) continue;
    std::vector<double> loads(shape.experts);
    for (double& x : loads)
      x = round % 5 == 0 ? std::round(1000 * lognormal(rng)) + 1 : 1000 * lognormal(rng);
    const LayerResult r = place_layer_heuristic(loads, shape, PlacementOptions{});
    EXPECT_EQ(check_placement(loads, shape, r.placement), "") << "round " << round;
    EXPECT_LE(r.placement.max_load, r.greedy_max_load * (1 + 1e-12));
    EXPECT_GE(r.placement.max_load, r.lower_bound_load * (1 - 1e-12));
    const double total = std::accumulate(loads.begin(), loads.end(), 0.0);
    EXPECT_NEAR(std::accumulate(r.placement.gpu_load.begin(), r.placement.gpu_load.end(), 0.0), total,
                1e-9 * total);
    EXPECT_EQ(check_placement(loads, shape, greedy_layer_placement(loads, shape)), "");
  }
}

TEST(ExpertsSolver, WindowMilpsAndNodeMilpsKeepEveryRuleAndNeverWorsen) {
  std::mt19937 rng(5);
  std::lognormal_distribution<double> lognormal(0.0, 0.8);
  // Rounds 0 and 3 under the sanitizers: one per backend, with and without groups.
  for (int round = 0; round < 6; round += test::kTrialStride) {
    ExpertPlacementShape shape{24, 8, 2, round % 2 == 0 ? 0 : 4, 8};
    std::vector<double> loads(shape.experts);
    for (double& x : loads) x = std::round(1000 * lognormal(rng)) + 1;
    PlacementOptions options;
    options.improve = false;
    options.solver_time_limit_s = 2;
    options.backend = round < 3 ? SolverBackend::kCbc : SolverBackend::kGlpk;
    // Force the window path on the whole layer (no group) or the node MILP.
    if (shape.groups == 0) options.full_milp_max_binaries = 0;
    options.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    LayerResult r = place_layer_heuristic(loads, shape, options);
    const double start = r.placement.max_load;
    improve_layer_with_milp(loads, shape, options, r);
    EXPECT_EQ(check_placement(loads, shape, r.placement), "") << round;
    EXPECT_LE(r.placement.max_load, start * (1 + 1e-12));
    EXPECT_GE(r.placement.max_load, r.lower_bound_load * (1 - 1e-12));
    EXPECT_EQ(r.milp_improved, r.placement.max_load < start * (1 - 1e-9));
  }
}

TEST(ExpertsSolver, ShapeRulesNameTheFlag) {
  ExpertPlacementShape s{8, 3, 1, 0, 0};
  EXPECT_NE(validate_shape(s).find("multiple of --gpus"), std::string::npos);
  s = {8, 16, 1, 0, 0};
  EXPECT_NE(validate_shape(s).find("--gpus 16 exceeds"), std::string::npos);
  s = {8, 4, 1, 0, -4};
  EXPECT_NE(validate_shape(s).find("--redundant"), std::string::npos);
  s = {4, 2, 1, 0, 8};  // 12 slots on 2 GPUs: 6 per GPU but only 4 distinct experts
  EXPECT_NE(validate_shape(s).find("distinct GPUs"), std::string::npos);
  s = {8, 4, 2, 3, 0};
  EXPECT_NE(validate_shape(s).find("--groups"), std::string::npos);
}

TEST(ExpertsSolver, GreedyReplicationMinimisesTheLargestShare) {
  // 3 extra replicas for loads 90, 30, 10: 90 -> 45 -> 30, then 90/3 = 30
  // ties 30/1 and the lower id wins (expert 0 -> 22.5).
  const std::vector<int> count = replicate({90, 30, 10}, 3, 4);
  EXPECT_EQ(count, (std::vector<int>{4, 1, 1}));
  // Capped at the GPU count: the remaining extra replicas go elsewhere.
  EXPECT_EQ(replicate({90, 30, 10}, 3, 2), (std::vector<int>{2, 2, 2}));
}

TEST(ExpertsSolver, StaticBaselineIsContiguous) {
  const LayerPlacement p = static_placement({1, 2, 3, 4, 5}, 2);
  EXPECT_EQ(p.physical_to_logical, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_DOUBLE_EQ(p.gpu_load[0], 6);
  EXPECT_DOUBLE_EQ(p.gpu_load[1], 9);
}

}  // namespace
}  // namespace parplan

namespace parplan {
namespace {

// pack_replicas' greedy, written out as its definition: each replica, heaviest
// first, on the least-loaded GPU with a free slot and without that expert
// (lowest index on a tie). The solver finds that GPU with a heap; the plans
// must be the same.
TEST(ExpertsSolver, PackingEqualsTheLinearScanGreedy) {
  std::mt19937 rng(11);
  int compared = 0;
  for (int trial = 0; trial < 200; ++trial) {
    FlatProblem p;
    p.gpus = 1 + static_cast<int>(rng() % 12);
    p.slots = 1 + static_cast<int>(rng() % 6);
    const int experts = std::max(1, p.gpus * p.slots - static_cast<int>(rng() % (p.gpus + 1)));
    std::uniform_int_distribution<int> load(0, trial % 3 == 0 ? 4 : 1000);  // ties when small
    for (int e = 0; e < experts; ++e) p.loads.push_back(load(rng));
    const std::vector<int> replicas = greedy_replicas(p);
    const FlatPlacement packed = pack_replicas(p, replicas);
    // Reference without the fallback: where every open GPU holds the
    // expert the solver moves a replica; compare only until then.
    std::vector<std::pair<int, double>> items;
    for (int e = 0; e < experts; ++e)
      for (int k = 0; k < replicas[e]; ++k) items.emplace_back(e, p.loads[e] / replicas[e]);
    std::stable_sort(items.begin(), items.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::vector<std::vector<int>> gpu(p.gpus);
    std::vector<double> at_load(p.gpus, 0);
    bool fell_back = false;
    for (const auto& [e, share] : items) {
      int best = -1;
      for (int g = 0; g < p.gpus; ++g) {
        if (static_cast<int>(gpu[g].size()) >= p.slots || std::count(gpu[g].begin(), gpu[g].end(), e))
          continue;
        if (best < 0 || at_load[g] < at_load[best]) best = g;
      }
      if (best < 0) {
        fell_back = true;
        break;
      }
      gpu[best].push_back(e);
      at_load[best] += share;
    }
    if (fell_back) continue;
    ++compared;
    EXPECT_EQ(packed.gpu_experts, gpu) << "trial " << trial;
  }
  EXPECT_GT(compared, 150);
}

}  // namespace
}  // namespace parplan
