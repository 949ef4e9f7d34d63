// The long-split path's least-sum partition of the slowest sequences: the
// dynamic program over subsets equals brute force over every set partition,
// and the path's plans keep every constraint of the formulation.
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "solvers/sequence_scatter.h"
#include "solvers/sequence_scatter_internal.h"
#include "tests/scatter_random_steps.h"

namespace parplan {
namespace {

/// The least sum over every partition of `count` elements (restricted
/// growth strings: element k joins one of the parts so far or opens one).
double brute_force_least_sum(const std::vector<double>& part_ms, int count) {
  double best = INFINITY;
  std::vector<std::uint32_t> parts;
  std::function<void(int)> place = [&](int k) {
    if (k == count) {
      double sum = 0;
      for (std::uint32_t p : parts) sum += part_ms[p];
      best = std::min(best, sum);
      return;
    }
    // By index: the recursion below pushes onto `parts`.
    for (size_t p = 0; p < parts.size(); ++p) {
      parts[p] |= std::uint32_t{1} << k;
      place(k + 1);
      parts[p] &= ~(std::uint32_t{1} << k);
    }
    parts.push_back(std::uint32_t{1} << k);
    place(k + 1);
    parts.pop_back();
  };
  place(0);
  return best;
}

/// Random part prices over `count` elements, indexed by the part's mask,
/// with an economy of scale (a part costs less than its elements apart,
/// sometimes); one in `not_allowed_one_in` of the larger parts has no price.
std::vector<double> random_part_prices(std::mt19937& rng, int count, unsigned not_allowed_one_in) {
  std::uniform_real_distribution<double> price(1.0, 100.0);
  const std::uint32_t all = (std::uint32_t{1} << count) - 1;
  std::vector<double> part_ms(all + 1, INFINITY);
  for (std::uint32_t mask = 1; mask <= all; ++mask) {
    const int size = std::popcount(mask);
    part_ms[mask] = size > 1 && rng() % not_allowed_one_in == 0 ? INFINITY : price(rng) * std::sqrt(size);
  }
  return part_ms;
}

/// The parts are disjoint and cover `mask` exactly.
void expect_parts_cover(const std::vector<std::uint32_t>& parts, std::uint32_t mask, int trial) {
  std::uint32_t covered = 0;
  for (std::uint32_t p : parts) {
    EXPECT_EQ(covered & p, 0u) << "trial " << trial;
    covered |= p;
  }
  EXPECT_EQ(covered, mask) << "trial " << trial << " mask " << mask;
}

TEST(ScatterPartition, LeastSumEqualsBruteForce) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 60; ++trial) {
    const int count = 1 + trial % 8;
    const std::uint32_t all = (std::uint32_t{1} << count) - 1;
    const std::vector<double> part_ms = random_part_prices(rng, count, 5);
    double sum_ms = 0;
    const std::vector<std::uint32_t> parts = scatter_detail::least_sum_partition(part_ms, count, &sum_ms);
    const double expected = brute_force_least_sum(part_ms, count);
    EXPECT_NEAR(sum_ms, expected, 1e-9 * expected) << "trial " << trial;
    // The parts cover every element once, and their prices sum to it.
    expect_parts_cover(parts, all, trial);
    double sum = 0;
    for (std::uint32_t p : parts) sum += part_ms[p];
    EXPECT_NEAR(sum, expected, 1e-9 * expected) << "trial " << trial;
  }
}

TEST(ScatterPartition, EverySubsetsLeastSumEqualsBruteForce) {
  // The long-split path reads the partition of each count's slowest
  // sequences from one table: every subset's entry is that subset's least
  // sum (its elements renumbered), and its parts cover it.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 10; ++trial) {
    const int count = 3 + trial % 5;
    const std::uint32_t all = (std::uint32_t{1} << count) - 1;
    const std::vector<double> part_ms = random_part_prices(rng, count, 4);
    const scatter_detail::SubsetPartitions table = scatter_detail::least_sum_partitions(part_ms, count);
    for (std::uint32_t mask = 1; mask <= all; ++mask) {
      // The subset's own price table over its elements in order.
      std::vector<int> elements;
      for (int k = 0; k < count; ++k) {
        if (mask >> k & 1) elements.push_back(k);
      }
      const int size = static_cast<int>(elements.size());
      std::vector<double> sub_ms(std::size_t{1} << size, INFINITY);
      for (std::uint32_t sub = 1; sub < (std::uint32_t{1} << size); ++sub) {
        std::uint32_t original = 0;
        for (int k = 0; k < size; ++k) {
          if (sub >> k & 1) original |= std::uint32_t{1} << elements[k];
        }
        sub_ms[sub] = part_ms[original];
      }
      const double expected = brute_force_least_sum(sub_ms, size);
      EXPECT_NEAR(table.least_ms[mask], expected, 1e-9 * expected) << "trial " << trial << " mask " << mask;
      expect_parts_cover(table.parts_of(mask), mask, trial);
    }
  }
}

TEST(ScatterPartition, NoPartitionWhenAnElementHasNoPart) {
  // Element 1 belongs to no finite part: no partition.
  const std::vector<double> part_ms = {INFINITY, 1.0, INFINITY, INFINITY};
  double sum_ms = 0;
  EXPECT_TRUE(scatter_detail::least_sum_partition(part_ms, 2, &sum_ms).empty());
  EXPECT_TRUE(std::isinf(sum_ms));
}

TEST(ScatterPartition, LongSplitPlansKeepEveryConstraint) {
  int plans = 0;
  test::for_random_scatter_steps(17, 24, [&](int trial, const auto& step, const auto& in, auto&) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    const ScatterPlan plan = scatter_detail::long_split_path(in, step.lengths, deadline);
    if (plan.empty()) return;
    ++plans;
    test::expect_valid_plan(plan, step.lengths, step.gpus, step.coefficients, trial);
  });
  EXPECT_GE(plans, 20);
}

TEST(ScatterPartition, ScreenedRestIsTheUntightenedPacking) {
  // The long-split path screens each count by packed_time_ms: pack_items's
  // open-groups-first packing before each micro-batch is packed again
  // alone, so at pack_items's precision (1e-3) it is never below
  // pack_items's plan, and it is the time of a packing, never below the bound.
  int compared = 0;
  test::for_random_scatter_steps(23, 24, [&](int trial, const auto& step, const auto& in, auto&) {
    std::vector<int> items(step.lengths.size());
    for (size_t i = 0; i < items.size(); ++i) items[i] = static_cast<int>(i);
    for (int m : {1, 2, 3}) {
      const ScatterPlan plan = scatter_detail::pack_items(in, step.lengths, items, m, 2);
      const double screened = scatter_detail::packed_time_ms(in, items, m, 1e-3);
      EXPECT_EQ(plan.empty(), std::isinf(screened)) << "trial " << trial << " m " << m;
      if (plan.empty()) continue;
      ++compared;
      EXPECT_GE(screened, plan.time_ms * (1 - 1e-12)) << "trial " << trial << " m " << m;
      EXPECT_GE(screened, scatter_detail::lower_bound_ms(in) * (1 - 1e-12)) << "trial " << trial;
    }
  });
  EXPECT_GE(compared, 20);
}

}  // namespace
}  // namespace parplan
