// Per-stage recomputation: the closed form against a hand-computed case and
// against the MILP optimum on every backend for random small instances.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "solvers/recompute_split.h"
#include "tests/solver_backends.h"
#include "tests/xorshift_rng.h"

namespace parplan {
namespace {

using test::kAllBackends;

using Rng = test::XorshiftRng;

RecomputeSplitInput two_stages() {
  // Stage 0 is 25 GB over its cap, stage 1 15 GB; a recomputed layer saves
  // 10 GB: ceil(2.5) = 3 and ceil(1.5) = 2 layers. Times 10 + 3 * 1 = 13 and
  // 10 + 2 * 2 = 14: makespan 14.
  RecomputeSplitInput in;
  in.layers_per_stage = {4, 4};
  in.base_time_s = {10, 10};
  in.recompute_time_s = {1, 2};
  in.memory_bytes = {100e9, 100e9};
  in.saved_bytes_per_layer = {10e9, 10e9};
  in.memory_cap_bytes = {75e9, 85e9};
  return in;
}

void expect_fits(const RecomputeSplitInput& in, const RecomputeSplitResult& r) {
  ASSERT_EQ(r.recompute_layers.size(), in.layers_per_stage.size());
  double makespan = 0;
  for (std::size_t s = 0; s < in.layers_per_stage.size(); ++s) {
    const int k = r.recompute_layers[s];
    EXPECT_GE(k, 0);
    EXPECT_LE(k, in.layers_per_stage[s]);
    EXPECT_LE(in.memory_bytes[s] - k * in.saved_bytes_per_layer[s],
              in.memory_cap_bytes[s] + 1e-9 * in.saved_bytes_per_layer[s]);
    makespan = std::max(makespan, in.base_time_s[s] + k * in.recompute_time_s[s]);
  }
  EXPECT_DOUBLE_EQ(r.makespan_s, makespan);
}

TEST(Recompute, HandComputedTwoStages) {
  const RecomputeSplitInput in = two_stages();
  EXPECT_EQ(stage_min_recompute_layers(in, 0), 3);
  EXPECT_EQ(stage_min_recompute_layers(in, 1), 2);
  const RecomputeSplitResult fast = recompute_split_fast(in);
  EXPECT_EQ(fast.recompute_layers, (std::vector<int>{3, 2}));
  EXPECT_DOUBLE_EQ(fast.makespan_s, 14);
  EXPECT_EQ(fast.certificate.status, SolveStatus::kOptimal);
  for (SolverBackend b : kAllBackends) {
    const RecomputeSplitResult milp = recompute_split_milp(in, b);
    ASSERT_EQ(milp.certificate.status, SolveStatus::kOptimal) << backend_name(b);
    // Stage 1 sets the makespan: it must recompute exactly 2 layers.
    EXPECT_EQ(milp.recompute_layers[1], 2);
    EXPECT_NEAR(milp.makespan_s, 14, 1e-9);
    EXPECT_NEAR(milp.certificate.objective, 14, 1e-9);
    expect_fits(in, milp);
  }
}

TEST(Recompute, ExactFitNeedsNoExtraLayer) {
  // 30 GB over the cap at 10 GB per layer: exactly 3, not 4.
  RecomputeSplitInput in = two_stages();
  in.memory_cap_bytes = {70e9, 100e9};
  EXPECT_EQ(stage_min_recompute_layers(in, 0), 3);
  EXPECT_EQ(stage_min_recompute_layers(in, 1), 0);
}

TEST(Recompute, InfeasibleWhenEvenFullRecomputeDoesNotFit) {
  RecomputeSplitInput in = two_stages();
  in.memory_cap_bytes = {55e9, 85e9};  // needs 5 of 4 layers on stage 0
  EXPECT_EQ(stage_min_recompute_layers(in, 0), 5);
  const RecomputeSplitResult fast = recompute_split_fast(in);
  EXPECT_FALSE(fast.feasible());
  EXPECT_EQ(fast.certificate.status, SolveStatus::kInfeasible);
  EXPECT_TRUE(std::isinf(fast.makespan_s));

  RecomputeSplitInput no_saving = two_stages();
  no_saving.saved_bytes_per_layer = {0, 10e9};
  EXPECT_FALSE(recompute_split_fast(no_saving).feasible());

  for (const RecomputeSplitInput* bad : {&in, &no_saving}) {
    for (SolverBackend b : kAllBackends) {
      const RecomputeSplitResult milp = recompute_split_milp(*bad, b);
      EXPECT_EQ(milp.certificate.status, SolveStatus::kInfeasible) << backend_name(b);
      EXPECT_FALSE(milp.feasible());
    }
  }
}

TEST(Recompute, RejectsInvalidInput) {
  RecomputeSplitInput in = two_stages();
  in.base_time_s = {1};
  EXPECT_THROW(recompute_split_fast(in), std::invalid_argument);
  in = two_stages();
  in.saved_bytes_per_layer = {-1, 1};
  EXPECT_THROW(recompute_split_model(in), std::invalid_argument);
  in = two_stages();
  in.layers_per_stage = {-1, 4};
  EXPECT_THROW(recompute_split_fast(in), std::invalid_argument);
}

TEST(Recompute, ClosedFormEqualsMilpOnRandomInstances) {
  Rng rng(1357);
  int feasible = 0;
  for (int instance = 0; instance < 100; ++instance) {
    RecomputeSplitInput in;
    const int stages = rng.uniform(1, 4);
    for (int s = 0; s < stages; ++s) {
      const int layers = rng.uniform(0, 8);
      in.layers_per_stage.push_back(layers);
      in.base_time_s.push_back(rng.uniform(20, 80) * 1e-3);
      in.recompute_time_s.push_back(rng.uniform(0, 10) * 1e-3 / 3);
      const double saved = rng.uniform(0, 6) * 0.25e9;
      in.saved_bytes_per_layer.push_back(saved);
      in.memory_bytes.push_back(rng.uniform(10, 40) * 1e9);
      in.memory_cap_bytes.push_back(rng.uniform(0, 4) == 0 ? kInfinity : rng.uniform(20, 40) * 1e9);
    }
    SCOPED_TRACE(std::string("instance ") += std::to_string(instance));
    const RecomputeSplitResult fast = recompute_split_fast(in);
    if (fast.feasible()) {
      ++feasible;
      expect_fits(in, fast);
    }
    for (SolverBackend b : kAllBackends) {
      SCOPED_TRACE(backend_name(b));
      const RecomputeSplitResult milp = recompute_split_milp(in, b);
      if (!fast.feasible()) {
        EXPECT_EQ(milp.certificate.status, SolveStatus::kInfeasible);
        continue;
      }
      ASSERT_EQ(milp.certificate.status, SolveStatus::kOptimal) << milp.certificate.message;
      expect_fits(in, milp);
      EXPECT_NEAR(milp.makespan_s, fast.makespan_s, 1e-6 * fast.makespan_s);
    }
  }
  EXPECT_GT(feasible, 30);
  EXPECT_LT(feasible, 100);
}

}  // namespace
}  // namespace parplan
