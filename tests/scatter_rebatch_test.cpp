// Re-batching by load (rebatch_by_load): the plan's groups kept whole and
// laid into micro-batches slowest first. A plan that puts a slow group beside
// fast ones while another micro-batch waits on slow ones becomes the sum of
// the sorted runs' maxima; on random steps the result is never slower than
// its start and keeps every constraint of the formulation.
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

ScatterGroup group_of(int size, std::vector<int> sequences) { return ScatterGroup{size, 0, sequences, 0, 0}; }

TEST(ScatterRebatch, GroupsOfLikeLoadsShareAMicroBatch) {
  // One GPU per group, 1 ms per token, 10 ms per micro-batch: a group's load
  // is its tokens. Micro-batch 0 runs a 100-token group beside three 1-token
  // ones, micro-batch 1 three 100-token groups beside a 1-token one: 110 +
  // 110 ms. Sorted runs of four: (10 + 100) + (10 + 1) = 121 ms.
  const ScatterCoefficients c = test::unit_scatter_coefficients();
  const std::vector<std::int64_t> lengths = {100, 1, 1, 1, 100, 100, 100, 1};
  ScatterPlan plan;
  plan.micro_batches.resize(2);
  for (int i = 0; i < 4; ++i) plan.micro_batches[0].groups.push_back(group_of(1, {i}));
  for (int i = 4; i < 8; ++i) plan.micro_batches[1].groups.push_back(group_of(1, {i}));
  finalize_scatter_plan(plan, lengths, c);
  ASSERT_DOUBLE_EQ(plan.time_ms, 220);
  const scatter_detail::Instance in = scatter_detail::make_instance(lengths, 4, c);
  const ScatterPlan out = scatter_detail::rebatch_by_load(in, lengths, plan);
  EXPECT_DOUBLE_EQ(out.time_ms, 121);
  EXPECT_EQ(check_scatter_plan(out, lengths, 4, c), "");
}

TEST(ScatterRebatch, NeverSlowerAndKeepsEveryConstraint) {
  int faster = 0;
  test::for_random_scatter_steps(23, 24, [&](int trial, const auto& step, const auto& in, auto& rng) {
    const auto& [gpus, c, lengths] = step;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    const ScatterPlan fast = scatter_detail::fast_path(in, lengths, deadline);
    // The same groups dealt into micro-batches in a shuffled order: a poor
    // batching of good groups.
    std::vector<ScatterGroup> groups;
    for (const ScatterMicroBatch& mb : fast.micro_batches)
      groups.insert(groups.end(), mb.groups.begin(), mb.groups.end());
    std::shuffle(groups.begin(), groups.end(), rng);
    ScatterPlan shuffled;
    std::vector<int> used;
    for (const ScatterGroup& g : groups) {
      size_t m = 0;
      while (m < used.size() && used[m] + g.size > gpus) ++m;
      if (m == used.size()) {
        used.push_back(0);
        shuffled.micro_batches.emplace_back();
      }
      used[m] += g.size;
      shuffled.micro_batches[m].groups.push_back(g);
    }
    finalize_scatter_plan(shuffled, lengths, c);
    for (const ScatterPlan& start : {fast, shuffled}) {
      ASSERT_EQ(check_scatter_plan(start, lengths, gpus, c), "") << "trial " << trial;
      const ScatterPlan out = scatter_detail::rebatch_by_load(in, lengths, start);
      faster += test::expect_valid_and_not_slower(out, start, lengths, gpus, c, trial) ? 1 : 0;
    }
  });
  // The shuffled batchings leave room: the test saw re-batchings gain.
  EXPECT_GE(faster, 12);
}

}  // namespace
}  // namespace parplan
