// The group-count LP bound of sequence scattering (both backends) never
// exceeds the brute-force optimum on random tiny steps, with sequences over
// a half, a third and a quarter of a group's memory so every crowding row
// binds somewhere; nor does the bound with whole micro-batch counts. CBC
// solves the LPs warm (one model, bounds changed between solves) and GLPK
// afresh: both give the same bounds.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <random>
#include <vector>

#include "solvers/sequence_scatter.h"
#include "solvers/sequence_scatter_internal.h"
#include "tests/scatter_brute_force.h"
#include "tests/scatter_fluid_bound.h"

namespace parplan {
namespace {

TEST(ScatterGroupLp, BoundNeverExceedsTheBruteForceOptimum) {
  int finished = 0;
  int above_plain = 0;
  int above_relaxed = 0;
  for (unsigned seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(seed);
    ScatterCoefficients c;
    c.quadratic_ms = 1e-3 * (rng() % 5);
    c.linear_ms = 0.1 + 0.1 * (rng() % 5);
    c.fixed_ms = (rng() % 4) * 20.0;
    c.group_sizes = {1, 2, 4};
    c.alltoall_ms_per_token = {0, 0.05 * (rng() % 4), 0.05 * (rng() % 6)};
    c.token_capacity_per_gpu = 100 + rng() % 200;
    const double k = c.token_capacity_per_gpu;
    std::vector<std::int64_t> lengths;
    const int n = 2 + static_cast<int>(rng() % 4);
    for (int i = 0; i < n; ++i) {
      // Between a fifth and all of a 1-, 2- or 4-GPU group's memory.
      const double capacity = k * (1 << (rng() % 3));
      const double share = 0.2 + 0.8 * static_cast<double>(rng() % 1000) / 1000.0;
      lengths.push_back(std::max<std::int64_t>(1, static_cast<std::int64_t>(capacity * share)));
    }
    const double optimum = test::brute_force_step_ms(lengths, 4, c);
    ASSERT_TRUE(std::isfinite(optimum)) << "seed " << seed;
    const scatter_detail::Instance in = scatter_detail::make_instance(lengths, 4, c);
    // The fluid bound: what the LP's crowding rows add to (the pinned
    // bounds, stronger on some of these steps, are not the comparison).
    const double plain = test::fluid_bound_ms(in);
    std::vector<double> bounds;
    for (SolverBackend backend : {SolverBackend::kCbc, SolverBackend::kGlpk}) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      const scatter_detail::GroupLpBound relaxed = scatter_detail::group_lp_bound(in, backend, deadline);
      const double lp = relaxed.bound_ms;
      EXPECT_LE(lp, optimum * (1 + 1e-9)) << backend_name(backend) << " seed " << seed;
      const double whole = scatter_detail::whole_micro_batch_bound_ms(in, backend, deadline, relaxed);
      EXPECT_LE(whole, optimum * (1 + 1e-9)) << backend_name(backend) << " seed " << seed;
      EXPECT_GE(whole, lp) << backend_name(backend) << " seed " << seed;
      bounds.push_back(lp);
      bounds.push_back(whole);
      above_relaxed += whole > lp * (1 + 1e-6) ? 1 : 0;
      finished += std::isfinite(lp) ? 1 : 0;
      above_plain += lp > plain * (1 + 1e-6) ? 1 : 0;
    }
    EXPECT_NEAR(bounds[0], bounds[2], 1e-6 * std::abs(bounds[2])) << "seed " << seed;
    EXPECT_NEAR(bounds[1], bounds[3], 1e-6 * std::abs(bounds[3])) << "seed " << seed;
  }
  EXPECT_EQ(finished, 80);      // every LP finished: the test checked something
  EXPECT_GT(above_plain, 0);    // and the crowding rows tightened some bound
  EXPECT_GT(above_relaxed, 0);  // whole micro-batch counts raised some
}

}  // namespace
}  // namespace parplan
