// Steps of sequences that each need more than half the GPUs: no two share
// a micro-batch, so the step takes one micro-batch per sequence, far more
// than its tokens over the cluster's capacity suggest. The solver must
// still find that plan (it once returned none past a few extra
// micro-batches) and the static grouping of the largest size.
#include <gtest/gtest.h>

#include <cmath>

#include "solvers/sequence_scatter.h"

namespace parplan {
namespace scatter_wide {

ScatterCoefficients linear_coefficients() {
  ScatterCoefficients c;
  c.quadratic_ms = 0;
  c.linear_ms = 1;
  c.fixed_ms = 1;
  c.group_sizes = {1, 2, 4, 8};
  c.alltoall_ms_per_token = {0, 0.01, 0.01, 0.01};
  c.token_capacity_per_gpu = 100;
  return c;
}

TEST(ScatterWideSequences, EachSequenceWiderThanHalfTheGpusGetsItsOwnMicroBatch) {
  const ScatterCoefficients c = linear_coefficients();
  for (int n : {10, 15, 40}) {
    // 450 tokens need 5 GPUs' capacity: a group of 8; two need 900 > 800.
    const std::vector<std::int64_t> lengths(n, 450);
    ScatterOptions o;
    const ScatterStepResult r = solve_scatter_step(lengths, 8, c, o);
    ASSERT_EQ(check_scatter_plan(r.plan, lengths, 8, c), "") << n;
    EXPECT_EQ(static_cast<int>(r.plan.micro_batches.size()), n);
    // Each micro-batch: 450 tokens on 8 GPUs (450/8 ms) + a2a 4.5 ms + 1 ms.
    const double per_micro_batch_ms = 450.0 / 8 + 0.01 * 450 + 1;
    EXPECT_NEAR(r.plan.time_ms, n * per_micro_batch_ms, 1e-6 * n * per_micro_batch_ms) << n;
    ASSERT_TRUE(std::isfinite(r.static_time_ms)) << n;
    EXPECT_EQ(r.static_size, 8) << n;
    EXPECT_NEAR(r.static_time_ms, r.plan.time_ms, 1e-6 * r.plan.time_ms) << n;
  }
}

// The other end: thousands of one-token sequences share groups. All of
// them fit one micro-batch of one-GPU groups (8192 tokens, 64 x 5992 of
// memory), which is the optimum (the fixed cost once, the work spread over
// every GPU); the solver once started at one micro-batch per 64 sequences
// (128, 123 times slower), and so did the static grouping.
TEST(ScatterWideSequences, ThousandsOfShortSequencesShareGroups) {
  ScatterCoefficients c = linear_coefficients();
  c.token_capacity_per_gpu = 5992;
  c.group_sizes = {1, 2, 4, 8, 16, 32, 64};
  c.alltoall_ms_per_token = {0, 0.01, 0.01, 0.01, 0.02, 0.02, 0.02};
  const std::vector<std::int64_t> lengths(8192, 1);
  ScatterOptions o;
  o.step_time_limit_s = 10;  // the plan, not the machine's speed
  const ScatterStepResult r = solve_scatter_step(lengths, 64, c, o);
  ASSERT_EQ(check_scatter_plan(r.plan, lengths, 64, c), "");
  EXPECT_EQ(r.plan.micro_batches.size(), 1u);
  // 128 tokens per GPU at 1 ms each, plus the fixed 1 ms.
  EXPECT_NEAR(r.plan.time_ms, 128.0 + 1.0, 1e-6);
  EXPECT_EQ(r.static_size, 1);
  EXPECT_NEAR(r.static_time_ms, 129.0, 1e-6);
}

}  // namespace scatter_wide
}  // namespace parplan
