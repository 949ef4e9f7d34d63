// The pinned micro-batch bound and the group-count LP with its slowest
// sequence pinned never exceed the brute-force optimum on random tiny steps
// with one long sequence (the case both were added for), and the pinned
// bound beats the fluid bound (M d + max(GPU-ms / G, slowest)) on some.
// The pinned-pair bound never exceeds it on steps with two long sequences,
// and beats both the one-pin and the fluid bound on some.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <random>

#include "solvers/sequence_scatter.h"
#include "solvers/sequence_scatter_internal.h"
#include "tests/scatter_brute_force.h"
#include "tests/scatter_fluid_bound.h"

namespace parplan {
namespace {

struct Step {
  ScatterCoefficients c;
  std::vector<std::int64_t> lengths;
  int gpus = 4;
};

// 4 or 8 GPUs, all-to-all costs that need not fall with p, `long_count`
// sequences that need a large group, the others short enough to fill small
// ones.
Step long_tail_step(unsigned seed, int long_count = 1) {
  std::mt19937 rng(seed);
  Step t;
  t.gpus = seed % 2 == 0 ? 4 : 8;
  t.c.quadratic_ms = 1e-3 * (rng() % 5);
  t.c.linear_ms = 0.1 + 0.1 * (rng() % 5);
  t.c.fixed_ms = (rng() % 4) * 20.0;
  t.c.group_sizes = {1, 2, 4};
  t.c.alltoall_ms_per_token = {0, 0.05 * (rng() % 4), 0.05 * (rng() % 6)};
  if (t.gpus == 8) {
    t.c.group_sizes.push_back(8);
    t.c.alltoall_ms_per_token.push_back(0.05 * (rng() % 6));
  }
  t.c.token_capacity_per_gpu = 100 + rng() % 200;
  const double k = t.c.token_capacity_per_gpu;
  // The long ones: more than one GPU's memory, at most the largest group's.
  const double largest = k * t.c.group_sizes.back();
  for (int l = 0; l < long_count; ++l)
    t.lengths.push_back(static_cast<std::int64_t>(k * 1.1 + (largest - k * 1.1) * (rng() % 1000) / 1000.0));
  const int n = long_count + 1 + static_cast<int>(rng() % (t.gpus == 4 ? 4 : 3));
  for (int i = long_count; i < n; ++i)
    t.lengths.push_back(
        std::max<std::int64_t>(1, static_cast<std::int64_t>(k * (0.1 + 0.9 * (rng() % 1000) / 1000.0))));
  return t;
}

TEST(ScatterPinnedBound, NeverExceedsTheBruteForceOptimum) {
  int above_fluid = 0;
  int lp_finished = 0;
  constexpr unsigned kSeeds = 60;
  for (unsigned seed = 0; seed < kSeeds; ++seed) {
    const Step t = long_tail_step(seed);
    const double optimum = test::brute_force_step_ms(t.lengths, t.gpus, t.c);
    ASSERT_TRUE(std::isfinite(optimum)) << "seed " << seed;
    const scatter_detail::Instance in = scatter_detail::make_instance(t.lengths, t.gpus, t.c);
    const double pinned = scatter_detail::pinned_micro_batch_bound_ms(in);
    EXPECT_LE(pinned, optimum * (1 + 1e-9)) << "seed " << seed;
    EXPECT_LE(scatter_lower_bound_ms(t.lengths, t.gpus, t.c), optimum * (1 + 1e-9)) << "seed " << seed;
    above_fluid += pinned > test::fluid_bound_ms(in) * (1 + 1e-6) ? 1 : 0;
    for (SolverBackend backend : {SolverBackend::kCbc, SolverBackend::kGlpk}) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      const double lp = scatter_detail::group_lp_bound_ms(in, backend, deadline);
      EXPECT_LE(lp, optimum * (1 + 1e-9)) << backend_name(backend) << " seed " << seed;
      lp_finished += std::isfinite(lp) ? 1 : 0;
    }
  }
  EXPECT_EQ(lp_finished, 2 * static_cast<int>(kSeeds));  // every LP finished
  EXPECT_GT(above_fluid, 0);                             // and the pin tightened some bound
}

// A hand-solved step where the tokens sharing the pinned sequence's group
// must be priced at the other sequences' rate: 2 GPUs of K = 100 tokens,
// b = 1 ms per token, c = 0 / 0.5 ms per token on 1 / 2 GPUs, d = 50 ms; a
// 150-token sequence L (2 GPUs only: 75 + 75 = 150 ms, GPU-ms 300, rate
// beyond its share 150 - 300 / 2 = 0) and two of 20 tokens (20 ms on 1 or 2
// GPUs, GPU-ms 20, rate (20 - 10) / 20 = 0.5). One micro-batch, all in one
// group: 50 + 150 + 20 + 20 = 240 ms; two: 50 + 150 + 50 + 20 = 270. With L
// pinned on both GPUs in one micro-batch, its 40 token mates cost at least
// their GPU-ms over G (20) plus 0.5 per token (20): 50 + 150 + 20 + 20 =
// 240, the optimum. At L's own rate (0) the bound was 220, and with a short
// one pinned 230.
TEST(ScatterPinnedBound, GroupMatesPayTheOtherSequencesRate) {
  ScatterCoefficients c;
  c.quadratic_ms = 0;
  c.linear_ms = 1;
  c.fixed_ms = 50;
  c.group_sizes = {1, 2};
  c.alltoall_ms_per_token = {0, 0.5};
  c.token_capacity_per_gpu = 100;
  const std::vector<std::int64_t> lengths = {150, 20, 20};
  EXPECT_DOUBLE_EQ(test::brute_force_step_ms(lengths, 2, c), 240);
  const scatter_detail::Instance in = scatter_detail::make_instance(lengths, 2, c);
  EXPECT_NEAR(scatter_detail::pinned_micro_batch_bound_ms(in), 240, 1e-6);
}

TEST(ScatterPinnedPair, NeverExceedsTheBruteForceOptimum) {
  int above_both = 0;
  constexpr unsigned kSeeds = 80;
  for (unsigned seed = 0; seed < kSeeds; ++seed) {
    const Step t = long_tail_step(1000 + seed, 2);
    const double optimum = test::brute_force_step_ms(t.lengths, t.gpus, t.c);
    ASSERT_TRUE(std::isfinite(optimum)) << "seed " << seed;
    const scatter_detail::Instance in = scatter_detail::make_instance(t.lengths, t.gpus, t.c);
    const double pair = scatter_detail::pinned_pair_bound_ms(in);
    EXPECT_LE(pair, optimum * (1 + 1e-9)) << "seed " << seed;
    EXPECT_LE(scatter_lower_bound_ms(t.lengths, t.gpus, t.c), optimum * (1 + 1e-9)) << "seed " << seed;
    const double one = std::max(scatter_detail::pinned_micro_batch_bound_ms(in), test::fluid_bound_ms(in));
    above_both += pair > one * (1 + 1e-6) ? 1 : 0;
  }
  EXPECT_GT(above_both, 0);  // the second pin tightened some bound
}

}  // namespace
}  // namespace parplan
