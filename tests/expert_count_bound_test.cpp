// The replica-count bound of expert placement: never above the optimum (by
// enumeration of every placement) on random small layers, never below the
// plain bound (mean GPU load, largest per-replica load), and on two slots
// per GPU the value the pairing argument gives by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

#include "solvers/expert_placement.h"
#include "solvers/expert_placement_count_bound.h"
#include "tests/experts_brute_force.h"

namespace parplan {
namespace {

/// Trial t's small layer: 3 + t % expert_kinds experts on 2 + t % 3 GPUs,
/// redundant slots up to whole slots per GPU (a round more on odd trials),
/// lognormal loads; none (and no draw) above four slots per GPU.
struct SmallLayer {
  ExpertPlacementShape shape;
  int slots = 0;
  std::vector<double> loads;
};
std::optional<SmallLayer> small_layer(int trial, int expert_kinds, std::mt19937& rng,
                                      std::lognormal_distribution<double>& load) {
  SmallLayer layer;
  layer.shape.experts = 3 + trial % expert_kinds;
  layer.shape.gpus = 2 + trial % 3;
  const int gpus = layer.shape.gpus;
  layer.shape.redundant = (gpus - layer.shape.experts % gpus) % gpus + gpus * (trial % 2);
  layer.slots = layer.shape.slots_per_gpu();
  if (layer.slots > 4 || layer.slots < 1) return std::nullopt;
  layer.loads.resize(layer.shape.experts);
  for (double& l : layer.loads) l = std::round(1000 * load(rng));
  return layer;
}

TEST(ExpertCountBound, NeverAboveTheOptimum) {
  std::mt19937 rng(20261128);
  std::lognormal_distribution<double> load(0.0, 0.6);
  int raised = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const std::optional<SmallLayer> layer = small_layer(trial, 4, rng, load);  // 3..6 experts
    if (!layer) continue;
    const std::vector<double>& loads = layer->loads;
    const int gpus = layer->shape.gpus;
    const double optimum = test::brute_force(loads, gpus, layer->slots);
    const double bound = replica_count_bound(loads, gpus, layer->shape.redundant, gpus);
    EXPECT_LE(bound, optimum * (1 + 1e-12)) << "trial " << trial;
    const double plain = std::accumulate(loads.begin(), loads.end(), 0.0) / gpus;
    EXPECT_GE(bound, plain * (1 - 1e-12)) << "trial " << trial;
    raised += bound > plain * (1 + 1e-9) ? 1 : 0;
  }
  EXPECT_GT(raised, 0);  // it does raise the mean-load bound somewhere
}

TEST(ExpertCountBound, TwoSlotsPerGpuPairTheLargestWithTheSmallest) {
  // Six experts on three GPUs, no redundancy: one count vector, replicas
  // 10, 9, 5, 4, 3, 0; pairing the i-th largest with the i-th smallest is
  // the best dealing: 10 + 0, 9 + 3, 5 + 4, so the busiest GPU carries 12
  // (the mean is 31 / 3 and the largest replica 10).
  const std::vector<double> loads = {5, 10, 0, 4, 9, 3};
  EXPECT_DOUBLE_EQ(replica_count_bound(loads, 3, 0, 3), 12.0);
  EXPECT_DOUBLE_EQ(test::brute_force(loads, 3, 2), 12.0);
}

TEST(ExpertCountBound, PairedPlacementsAreValidAndBetweenBoundAndOptimum) {
  std::mt19937 rng(7);
  std::lognormal_distribution<double> load(0.0, 0.5);
  int optimal = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int gpus = 2 + trial % 3;               // 2..4
    const int experts = gpus + 1 + trial % gpus;  // gpus + 1 .. 2 gpus
    const int redundant = 2 * gpus - experts;
    std::vector<double> loads(experts);
    for (double& l : loads) l = std::round(1000 * load(rng));
    const std::vector<std::vector<int>> paired = paired_placement(loads, gpus, redundant, gpus);
    ASSERT_EQ(paired.size(), static_cast<std::size_t>(gpus)) << "trial " << trial;
    ExpertPlacementShape shape;
    shape.experts = experts;
    shape.gpus = gpus;
    shape.redundant = redundant;
    const LayerPlacement placement = make_placement(loads, paired);
    EXPECT_EQ(check_placement(loads, shape, placement), "") << "trial " << trial;
    const double optimum = test::brute_force(loads, gpus, 2);
    EXPECT_GE(placement.max_load, optimum * (1 - 1e-12)) << "trial " << trial;
    EXPECT_GE(placement.max_load, replica_count_bound(loads, gpus, redundant, gpus) * (1 - 1e-12));
    optimal += placement.max_load <= optimum * (1 + 1e-12) ? 1 : 0;
  }
  EXPECT_GE(optimal, 30);  // the dealing is the optimum on most small layers
}

TEST(ExpertExactDealing, EqualsBruteForceAndIsAValidPlacement) {
  std::mt19937 rng(20261128);
  std::lognormal_distribution<double> load(0.0, 0.6);
  int tried = 0;
  for (int trial = 0; trial < 80; ++trial) {
    const std::optional<SmallLayer> layer = small_layer(trial, 5, rng, load);  // 3..7 experts
    if (!layer) continue;
    ++tried;
    const std::vector<double>& loads = layer->loads;
    const ExpertPlacementShape& shape = layer->shape;
    const int gpus = shape.gpus, redundant = shape.redundant;
    const double optimum = test::brute_force(loads, gpus, layer->slots);
    // From no placement in hand: it finds the optimum and proves it.
    const ExactDealing exact =
        exact_dealing(loads, gpus, redundant, gpus, std::numeric_limits<double>::infinity());
    ASSERT_TRUE(exact.proven) << "trial " << trial;
    ASSERT_EQ(exact.gpu_experts.size(), static_cast<std::size_t>(gpus)) << "trial " << trial;
    EXPECT_NEAR(exact.max_load, optimum, 1e-9 * optimum) << "trial " << trial;
    const LayerPlacement placement = make_placement(loads, exact.gpu_experts);
    EXPECT_EQ(check_placement(loads, shape, placement), "") << "trial " << trial;
    EXPECT_NEAR(placement.max_load, exact.max_load, 1e-9 * optimum) << "trial " << trial;
    // From an incumbent at the optimum: nothing lower exists, and it says so.
    const ExactDealing at = exact_dealing(loads, gpus, redundant, gpus, optimum);
    EXPECT_TRUE(at.proven) << "trial " << trial;
    EXPECT_TRUE(at.gpu_experts.empty()) << "trial " << trial;
    // The layer's certificate never claims a bound above the optimum.
    PlacementOptions options;
    options.use_milp = false;
    const LayerResult r = place_layer_heuristic(loads, shape, options);
    EXPECT_LE(r.certificate.best_bound, optimum * (1 + 1e-9)) << "trial " << trial;
    EXPECT_NEAR(r.placement.max_load, optimum, 1e-9 * optimum) << "trial " << trial;
  }
  EXPECT_GE(tried, 40);
}

TEST(ExpertExactDealing, StopsUnprovenWhenItsNodesRunOut) {
  std::vector<double> loads(8);
  for (int e = 0; e < 8; ++e) loads[e] = 1000 + 37 * e;
  const ExactDealing exact = exact_dealing(loads, 4, 4, 4, std::numeric_limits<double>::infinity(), 20000, 3);
  EXPECT_FALSE(exact.proven);
}

TEST(ExpertCountBound, GivesUpOnTooManyCountVectors) {
  const std::vector<double> loads(64, 1.0);
  EXPECT_EQ(replica_count_bound(loads, 16, 16, 16, 1000), 0.0);
}

TEST(ExpertCountBound, PastTheDeadlineTheLayerBoundStaysValid) {
  // Past the run's deadline a layer skips the count-vector bound: what it
  // states instead is weaker, never above the optimum.
  std::mt19937 rng(20261201);
  std::lognormal_distribution<double> load(0.0, 0.6);
  const auto past = std::chrono::steady_clock::time_point::min();
  int weaker = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const std::optional<SmallLayer> layer = small_layer(trial, 4, rng, load);
    if (!layer) continue;
    const std::vector<double>& loads = layer->loads;
    const int gpus = layer->shape.gpus;
    EXPECT_EQ(replica_count_bound(loads, gpus, layer->shape.redundant, gpus, 20000, past), 0.0);
    PlacementOptions options;
    options.improve = false;  // no proven dealing: the bound alone
    options.use_milp = false;
    const LayerResult full = place_layer_heuristic(loads, layer->shape, options);
    options.bound_deadline = past;
    const LayerResult cut = place_layer_heuristic(loads, layer->shape, options);
    const double optimum = test::brute_force(loads, gpus, layer->slots);
    EXPECT_LE(cut.lower_bound_load, optimum * (1 + 1e-12)) << "trial " << trial;
    EXPECT_LE(cut.lower_bound_load, full.lower_bound_load * (1 + 1e-12)) << "trial " << trial;
    EXPECT_GE(cut.lower_bound_load, std::accumulate(loads.begin(), loads.end(), 0.0) / gpus * (1 - 1e-12));
    EXPECT_GE(cut.certificate.gap, full.certificate.gap - 1e-12) << "trial " << trial;
    weaker += cut.lower_bound_load < full.lower_bound_load * (1 - 1e-9) ? 1 : 0;
  }
  EXPECT_GT(weaker, 0);  // the skipped bound did raise some layers' bounds
}

}  // namespace
}  // namespace parplan
