// Iterated ruin and recreate (perturb_search, ScatterOptions::improve_time_s):
// from any start it returns a valid plan never slower than the start; from a
// plan that wastes a micro-batch per sequence it finds a faster one; a step
// solved with time to improve keeps a valid plan and a bound at or below it.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "solvers/sequence_scatter.h"
#include "solvers/sequence_scatter_internal.h"
#include "tests/scatter_random_steps.h"

namespace parplan {
namespace {

using Clock = std::chrono::steady_clock;

TEST(ScatterPerturb, NeverSlowerAndKeepsEveryConstraint) {
  test::for_random_scatter_steps(31, 16, [](int trial, const auto& step, const auto& in, auto&) {
    const auto& [gpus, c, lengths] = step;
    const ScatterPlan start = scatter_detail::fast_path(in, lengths, Clock::now() + std::chrono::seconds(30));
    ASSERT_EQ(check_scatter_plan(start, lengths, gpus, c), "") << "trial " << trial;
    const ScatterPlan out = scatter_detail::perturb_search(in, lengths, start, trial,
                                                           Clock::now() + std::chrono::milliseconds(20));
    test::expect_valid_and_not_slower(out, start, lengths, gpus, c, trial);
  });
}

TEST(ScatterPerturb, MergesMicroBatchesThatEachHoldOneSequence) {
  // Eight 100-token sequences on 4 GPUs of 1000 tokens, one micro-batch each:
  // 8 x (10 + 100) ms. Two of them packed into one save a fixed cost, so any
  // recreation into one fewer micro-batch is faster.
  const ScatterCoefficients c = test::unit_scatter_coefficients();
  const std::vector<std::int64_t> lengths(8, 100);
  ScatterPlan plan;
  for (int i = 0; i < 8; ++i) {
    ScatterMicroBatch mb;
    mb.groups.push_back(ScatterGroup{1, 0, {i}, 0, 0});
    plan.micro_batches.push_back(mb);
  }
  finalize_scatter_plan(plan, lengths, c);
  ASSERT_DOUBLE_EQ(plan.time_ms, 880);
  const scatter_detail::Instance in = scatter_detail::make_instance(lengths, 4, c);
  const ScatterPlan out =
      scatter_detail::perturb_search(in, lengths, plan, 7, Clock::now() + std::chrono::milliseconds(200));
  EXPECT_EQ(check_scatter_plan(out, lengths, 4, c), "");
  // The optimum: one micro-batch, two sequences on each GPU, 10 + 200 ms.
  EXPECT_LT(out.time_ms, plan.time_ms);
  EXPECT_GE(out.time_ms, 210 - 1e-9);
}

TEST(ScatterPerturb, StepWithTimeToImproveKeepsAValidPlanAndBound) {
  std::mt19937 rng(37);
  for (int trial = 0; trial < 6; ++trial) {
    const auto [gpus, c, lengths] = test::random_scatter_step(rng, trial);
    ScatterOptions options;
    options.improve_time_s = 0.02;
    const ScatterStepResult r = solve_scatter_step(lengths, gpus, c, options);
    ASSERT_EQ(check_scatter_plan(r.plan, lengths, gpus, c), "") << "trial " << trial;
    EXPECT_LE(r.certificate.best_bound, r.plan.time_ms) << "trial " << trial;
    EXPECT_GE(r.certificate.gap, 0) << "trial " << trial;
    // Never below the plain lower bound, which holds for every plan.
    EXPECT_GE(r.plan.time_ms, scatter_lower_bound_ms(lengths, gpus, c) * (1 - 1e-9)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace parplan
