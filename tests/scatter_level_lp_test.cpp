// The duration-level LP bound of sequence scattering (both backends, with
// and without sequences of their own, buckets of several lengths, with and
// without the groups held for their level's floor) never exceeds the
// brute-force optimum on random tiny steps.
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

TEST(ScatterLevelLp, BoundNeverExceedsTheBruteForceOptimum) {
  int finished = 0;
  int above_plain = 0;
  for (unsigned seed = 0; seed < 30; ++seed) {
    std::mt19937 rng(seed + 1000);
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
      // Between a twentieth and all of a 1-, 2- or 4-GPU group's memory.
      const double capacity = k * (1 << (rng() % 3));
      const double share = 0.05 + 0.95 * static_cast<double>(rng() % 1000) / 1000.0;
      lengths.push_back(std::max<std::int64_t>(1, static_cast<std::int64_t>(capacity * share)));
    }
    const double optimum = test::brute_force_step_ms(lengths, 4, c);
    ASSERT_TRUE(std::isfinite(optimum)) << "seed " << seed;
    const scatter_detail::Instance in = scatter_detail::make_instance(lengths, 4, c);
    // The bounds of one pinned sequence (the pinned pair's now dominates
    // the level LP's on these steps, which is not what this measures).
    const double plain = std::max(test::fluid_bound_ms(in), scatter_detail::pinned_micro_batch_bound_ms(in));
    scatter_detail::LevelLpOptions options;
    options.single_sequences = static_cast<int>(seed % 3);  // 0, 1 or 2 on their own
    options.bucket_ratio = 1.5 + seed % 2;                  // buckets of several lengths
    options.grid_ratio = 1.3;
    options.memory_held = seed % 2 == 1;  // groups held for their level's floor
    for (SolverBackend backend : {SolverBackend::kCbc, SolverBackend::kGlpk}) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      const double lp = scatter_detail::level_lp_bound_ms(in, backend, deadline, options);
      EXPECT_LE(lp, optimum * (1 + 1e-9)) << backend_name(backend) << " seed " << seed;
      finished += std::isfinite(lp) ? 1 : 0;
      above_plain += lp > plain * (1 + 1e-6) ? 1 : 0;
    }
  }
  EXPECT_EQ(finished, 60);    // every LP finished: the test checked something
  EXPECT_GT(above_plain, 0);  // and the level rows tightened some bound
}

}  // namespace
}  // namespace parplan
