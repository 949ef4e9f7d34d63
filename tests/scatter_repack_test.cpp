// Ruin and recreate over pairs of micro-batches (repack_search) and the
// one-for-several swap (eject_search): on random steps, from the fast
// path's plan and from a poor plan (every sequence in a micro-batch of its
// own), the result is never slower than its start, keeps
// every constraint of the formulation, and its stated times are the
// formula's.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "solvers/sequence_scatter.h"
#include "solvers/sequence_scatter_internal.h"
#include "tests/scatter_random_steps.h"

namespace parplan {
namespace {

/// Every sequence alone in a micro-batch, on its cheapest size.
ScatterPlan one_per_micro_batch(const scatter_detail::Instance& in,
                                const std::vector<std::int64_t>& lengths) {
  ScatterPlan plan;
  for (int i = 0; i < in.num_sequences(); ++i) {
    const int j = in.size_order(i)[0];
    ScatterMicroBatch mb;
    mb.groups.push_back(ScatterGroup{in.size[j], 0, {i}, 0, 0});
    plan.micro_batches.push_back(std::move(mb));
  }
  finalize_scatter_plan(plan, lengths, *in.coefficients);
  return plan;
}

TEST(ScatterRepack, NeverSlowerAndKeepsEveryConstraint) {
  int faster = 0;
  test::for_random_scatter_steps(11, 24, [&](int trial, const auto& step, const auto& in, auto&) {
    const auto& [gpus, c, lengths] = step;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    const ScatterPlan starts[] = {scatter_detail::fast_path(in, lengths, deadline),
                                  one_per_micro_batch(in, lengths)};
    for (const ScatterPlan& start : starts) {
      ASSERT_EQ(check_scatter_plan(start, lengths, gpus, c), "") << "trial " << trial;
      const ScatterPlan out = scatter_detail::repack_search(in, lengths, start, deadline);
      faster += test::expect_valid_and_not_slower(out, start, lengths, gpus, c, trial) ? 1 : 0;
      // The one-for-several swap (off by default) keeps the same promises.
      const ScatterPlan ejected = scatter_detail::eject_search(in, lengths, start, 4, deadline);
      EXPECT_LE(ejected.time_ms, start.time_ms) << "trial " << trial;
      EXPECT_EQ(check_scatter_plan(ejected, lengths, gpus, c), "") << "trial " << trial;
    }
  });
  // The poor starts leave room on every trial: the test saw replacements.
  EXPECT_GE(faster, 24);
}

// Micro-batches of one group of all G GPUs last fixed_ms plus their
// sequences' times at G. Four of 280 tokens each (groups of 4 x 100 tokens)
// fit in three only as 200 + 200, 200 + 140 and 140 + 80 + 80 + 80: no two
// fit in one and no three in two, so only the first-fit packing of all four
// finds it, and the step is one fixed_ms shorter.
TEST(ScatterRepack, WholeMachineMicroBatchesPackedIntoFewer) {
  ScatterCoefficients c;
  c.quadratic_ms = 1e-4;
  c.linear_ms = 0.2;
  c.fixed_ms = 50;
  c.group_sizes = {1, 2, 4};
  c.alltoall_ms_per_token = {0, 0.01, 0.02};
  c.token_capacity_per_gpu = 100;
  constexpr int kGpus = 4;
  const std::vector<std::int64_t> lengths{200, 80, 200, 80, 200, 80, 140, 140};
  const scatter_detail::Instance in = scatter_detail::make_instance(lengths, kGpus, c);
  ScatterPlan start;
  for (const std::vector<int>& sequences : {std::vector<int>{0, 1}, {2, 3}, {4, 5}, {6, 7}}) {
    ScatterMicroBatch mb;
    mb.groups.push_back(ScatterGroup{kGpus, 0, sequences, 0, 0});
    start.micro_batches.push_back(std::move(mb));
  }
  finalize_scatter_plan(start, lengths, c);
  ASSERT_EQ(check_scatter_plan(start, lengths, kGpus, c), "");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  const ScatterPlan out = scatter_detail::repack_search(in, lengths, start, deadline);
  EXPECT_EQ(check_scatter_plan(out, lengths, kGpus, c), "");
  EXPECT_EQ(out.micro_batches.size(), 3u);
  EXPECT_LE(out.time_ms, start.time_ms - c.fixed_ms + 1e-9);
}

}  // namespace
}  // namespace parplan
