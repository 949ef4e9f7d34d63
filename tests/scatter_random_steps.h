// Random scatter steps for the solver's property tests: FlexSP-like
// coefficients on power-of-two group sizes and log-normal lengths.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cost/scatter_coefficients.h"
#include "solvers/sequence_scatter.h"
#include "solvers/sequence_scatter_internal.h"

namespace parplan::test {

/// Hand-checkable coefficients: 1 ms per token on one GPU, 10 ms per
/// micro-batch, groups of 1, 2 and 4 GPUs paying 0.5 ms per token of
/// all-to-all, 1000 tokens per GPU.
inline ScatterCoefficients unit_scatter_coefficients() {
  ScatterCoefficients c;
  c.quadratic_ms = 0;
  c.linear_ms = 1;
  c.fixed_ms = 10;
  c.group_sizes = {1, 2, 4};
  c.alltoall_ms_per_token = {0, 0.5, 0.5};
  c.token_capacity_per_gpu = 1000;
  return c;
}

/// GPT-7B-like linear and quadratic terms, sizes 1, 2, 4, ... up to `gpus`,
/// an all-to-all ten times dearer per token past 8 GPUs (another node),
/// fixed cost 0, 100 or 200 ms by `trial`, K drawn in [min_k, min_k + 4000).
inline ScatterCoefficients random_scatter_coefficients(std::mt19937& rng, int gpus, int trial, int min_k) {
  ScatterCoefficients c;
  c.quadratic_ms = 5e-6;
  c.linear_ms = 0.18;
  c.fixed_ms = 100.0 * (trial % 3);
  for (int p = 1; p <= gpus; p *= 2) {
    c.group_sizes.push_back(p);
    c.alltoall_ms_per_token.push_back(p == 1 ? 0 : (p <= 8 ? 0.02 : 0.2) / p);
  }
  c.token_capacity_per_gpu = min_k + rng() % 4000;
  return c;
}

/// `fewest` + [0, spread) lengths, log-normal (median 2000 tokens, `sigma`),
/// clipped to [1, G K] so that the largest group holds each.
inline std::vector<std::int64_t> random_scatter_lengths(std::mt19937& rng, const ScatterCoefficients& c,
                                                        int gpus, int fewest, int spread, double sigma) {
  std::lognormal_distribution<double> length(std::log(2000.0), sigma);
  std::vector<std::int64_t> lengths(fewest + rng() % spread);
  const double cap = gpus * c.token_capacity_per_gpu;
  for (auto& s : lengths)
    s = std::clamp<std::int64_t>(static_cast<std::int64_t>(length(rng)), 1, static_cast<std::int64_t>(cap));
  return lengths;
}

/// One random step of the improvement tests: 16 or 64 GPUs by `trial`'s
/// parity, K from 2000 tokens, 10 to 159 lengths of sigma 1.3.
struct RandomScatterStep {
  int gpus = 0;
  ScatterCoefficients coefficients;
  std::vector<std::int64_t> lengths;
};

inline RandomScatterStep random_scatter_step(std::mt19937& rng, int trial) {
  RandomScatterStep step;
  step.gpus = trial % 2 ? 64 : 16;
  step.coefficients = random_scatter_coefficients(rng, step.gpus, trial, 2000);
  step.lengths = random_scatter_lengths(rng, step.coefficients, step.gpus, 10, 150, 1.3);
  return step;
}

/// Calls body(trial, step, instance, rng) on `count` random steps drawn from
/// `seed` (the rng passed on, for bodies that draw more).
template <class Body>
void for_random_scatter_steps(unsigned seed, int count, Body body) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < count; ++trial) {
    const RandomScatterStep step = random_scatter_step(rng, trial);
    const scatter_detail::Instance in =
        scatter_detail::make_instance(step.lengths, step.gpus, step.coefficients);
    body(trial, step, in, rng);
  }
}

/// `plan` keeps every constraint and its stated times are the formula's.
inline void expect_valid_plan(const ScatterPlan& plan, const std::vector<std::int64_t>& lengths, int gpus,
                              const ScatterCoefficients& c, int trial) {
  EXPECT_EQ(check_scatter_plan(plan, lengths, gpus, c), "") << "trial " << trial;
  ScatterPlan again = plan;
  finalize_scatter_plan(again, lengths, c);
  EXPECT_NEAR(again.time_ms, plan.time_ms, 1e-9 * plan.time_ms) << "trial " << trial;
}

/// What every improvement step promises: `out` is a valid plan, never slower
/// than `start`, its stated times the formula's. True when it is faster.
inline bool expect_valid_and_not_slower(const ScatterPlan& out, const ScatterPlan& start,
                                        const std::vector<std::int64_t>& lengths, int gpus,
                                        const ScatterCoefficients& c, int trial) {
  EXPECT_LE(out.time_ms, start.time_ms) << "trial " << trial;
  expect_valid_plan(out, lengths, gpus, c, trial);
  return out.time_ms < start.time_ms;
}

}  // namespace parplan::test
