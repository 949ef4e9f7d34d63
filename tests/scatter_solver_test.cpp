// Sequence scattering solver: optimum == brute force on tiny steps (CBC and
// GLPK), the MILP fixes a fast-path miss, the bound never exceeds the
// optimum, and every plan satisfies the constraints of the formulation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "solvers/sequence_scatter.h"
#include "tests/scatter_brute_force.h"
#include "tests/scatter_random_steps.h"

namespace parplan {
namespace {

struct TinyStep {
  ScatterCoefficients c;
  std::vector<std::int64_t> lengths;
};

// Random tiny instance on 4 GPUs: non-monotone all-to-all costs and a
// memory cap small enough to force larger groups.
TinyStep tiny_step(unsigned seed, int min_n, int spread_n) {
  std::mt19937 rng(seed);
  TinyStep t;
  t.c.quadratic_ms = 1e-3 * (rng() % 5);
  t.c.linear_ms = 0.1 + 0.1 * (rng() % 5);
  t.c.fixed_ms = (rng() % 4) * 20.0;
  t.c.group_sizes = {1, 2, 4};
  t.c.alltoall_ms_per_token = {0, 0.05 * (rng() % 4), 0.05 * (rng() % 6)};
  t.c.token_capacity_per_gpu = 100 + rng() % 200;
  const int n = min_n + static_cast<int>(rng() % spread_n);
  for (int i = 0; i < n; ++i) t.lengths.push_back(20 + rng() % 380);
  return t;
}

ScatterOptions exact(SolverBackend backend) {
  ScatterOptions o;
  o.backend = backend;
  o.step_time_limit_s = 30;
  o.relative_gap = 1e-9;
  return o;
}

TEST(ScatterSolver, EqualsBruteForceOnTinyStepsOnBothBackends) {
  for (SolverBackend backend : {SolverBackend::kCbc, SolverBackend::kGlpk}) {
    for (unsigned seed = 0; seed < 12; ++seed) {
      const TinyStep t = tiny_step(seed, 2, 3);
      const double optimum = test::brute_force_step_ms(t.lengths, 4, t.c);
      const ScatterStepResult r = solve_scatter_step(t.lengths, 4, t.c, exact(backend));
      ASSERT_TRUE(std::isfinite(optimum));
      EXPECT_NEAR(r.plan.time_ms, optimum, 1e-6 * optimum) << backend_name(backend) << " seed " << seed;
      EXPECT_EQ(r.certificate.status, SolveStatus::kOptimal) << r.certificate.message;
      EXPECT_LE(r.certificate.best_bound, optimum * (1 + 1e-9));
      EXPECT_EQ(check_scatter_plan(r.plan, t.lengths, 4, t.c), "");
    }
  }
}

TEST(ScatterSolver, MilpReachesTheOptimumWhereTheFastPathMisses) {
  // Seed 178: five sequences whose fast path (packing, split and long-split
  // paths, local search with moves and swaps) ends above the optimum.
  const TinyStep t = tiny_step(178, 3, 3);
  const double optimum = test::brute_force_step_ms(t.lengths, 4, t.c);
  ScatterOptions fast = exact(SolverBackend::kCbc);
  fast.use_milp = false;
  const ScatterStepResult greedy = solve_scatter_step(t.lengths, 4, t.c, fast);
  EXPECT_GT(greedy.plan.time_ms, optimum * (1 + 1e-3));
  EXPECT_GT(greedy.certificate.gap, 0);
  for (SolverBackend backend : {SolverBackend::kCbc, SolverBackend::kGlpk}) {
    const ScatterStepResult r = solve_scatter_step(t.lengths, 4, t.c, exact(backend));
    EXPECT_NEAR(r.plan.time_ms, optimum, 1e-6 * optimum) << backend_name(backend);
    EXPECT_EQ(r.certificate.backend, backend_name(backend));
  }
}

TEST(ScatterSolver, GapIsNeverNegativeAgainstBruteForce) {
  for (unsigned seed = 100; seed < 160; ++seed) {
    const TinyStep t = tiny_step(seed, 2, 4);
    const double optimum = test::brute_force_step_ms(t.lengths, 4, t.c);
    for (bool milp : {false, true}) {
      ScatterOptions o;
      o.use_milp = milp;
      o.step_time_limit_s = 0.02;  // may stop early: the bound must still hold
      const ScatterStepResult r = solve_scatter_step(t.lengths, 4, t.c, o);
      EXPECT_LE(r.certificate.best_bound, optimum * (1 + 1e-9)) << "seed " << seed;
      EXPECT_GE(r.plan.time_ms, optimum * (1 - 1e-9)) << "seed " << seed;
      EXPECT_GE(r.certificate.gap, 0);
      EXPECT_NEAR(r.certificate.gap, (r.plan.time_ms - r.certificate.best_bound) / r.plan.time_ms, 1e-12);
    }
  }
}

TEST(ScatterSolver, ConstraintsHoldOnRandomSteps) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int gpus = trial % 2 ? 64 : 16;
    const ScatterCoefficients c = test::random_scatter_coefficients(rng, gpus, trial, 4000);
    const std::vector<std::int64_t> lengths = test::random_scatter_lengths(rng, c, gpus, 20, 200, 1.2);
    ScatterOptions o;
    o.step_time_limit_s = 0.05;
    const ScatterStepResult r = solve_scatter_step(lengths, gpus, c, o);
    ASSERT_FALSE(r.plan.empty());
    EXPECT_EQ(check_scatter_plan(r.plan, lengths, gpus, c), "") << "trial " << trial;
    // The reported times are the formula's.
    ScatterPlan again = r.plan;
    finalize_scatter_plan(again, lengths, c);
    EXPECT_NEAR(again.time_ms, r.plan.time_ms, 1e-9 * r.plan.time_ms);
    EXPECT_LE(r.certificate.best_bound, r.plan.time_ms);
    EXPECT_LE(r.plan.time_ms, r.static_time_ms * (1 + 1e-12));  // the static plan is a warm start
    EXPECT_GE(r.certificate.best_bound, scatter_lower_bound_ms(lengths, gpus, c) * (1 - 1e-12));
  }
}

TEST(ScatterSolver, OneSequenceOnOneSizeIsTheFormula) {
  // Group time = (a s^2 + b s) / p + c_p s + d (the formula).
  ScatterCoefficients c;
  c.quadratic_ms = 2e-6;
  c.linear_ms = 0.2;
  c.fixed_ms = 50;
  c.group_sizes = {8};
  c.alltoall_ms_per_token = {0.003};
  c.token_capacity_per_gpu = 10000;
  const std::int64_t s = 60000;
  const ScatterStepResult r = solve_scatter_step({s}, 8, c, ScatterOptions{});
  const double expected = (2e-6 * s * s + 0.2 * s) / 8 + 0.003 * s + 50;
  EXPECT_NEAR(r.plan.time_ms, expected, 1e-9 * expected);
  EXPECT_EQ(r.static_size, 8);
  EXPECT_NEAR(r.certificate.gap, 0, 1e-12);
}

TEST(ScatterSolver, TooLongASequenceIsReportedNotPlaced) {
  ScatterCoefficients c;
  c.group_sizes = {1, 2};
  c.alltoall_ms_per_token = {0, 0.01};
  c.token_capacity_per_gpu = 100;
  EXPECT_EQ(first_unplaceable_sequence({50, 150, 201, 10}, c), 2);
  EXPECT_EQ(solve_scatter_step({50, 201}, 2, c, ScatterOptions{}).certificate.status,
            SolveStatus::kInfeasible);
}

}  // namespace
}  // namespace parplan
