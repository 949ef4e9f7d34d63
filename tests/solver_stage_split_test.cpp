// Layer-to-stage split: hand-computed optima on heterogeneous and
// memory-bound pipelines, and the greedy fast path equal to the MILP optimum
// on every backend for random small instances.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "solvers/stage_split.h"
#include "tests/solver_backends.h"
#include "tests/xorshift_rng.h"

namespace parplan {
namespace {

using test::kAllBackends;

using Rng = test::XorshiftRng;

void expect_valid_split(const StageSplitInput& in, const StageSplitResult& r) {
  ASSERT_EQ(static_cast<int>(r.layers_per_stage.size()), in.stages);
  EXPECT_EQ(std::accumulate(r.layers_per_stage.begin(), r.layers_per_stage.end(), 0), in.layers);
  double makespan = 0;
  for (int s = 0; s < in.stages; ++s) {
    const int n = r.layers_per_stage[s];
    EXPECT_GE(n, in.min_layers_per_stage);
    EXPECT_LE(n, stage_max_layers(in, s));
    if (!in.memory_cap_bytes.empty()) {
      const double extra = in.extra_memory_bytes.empty() ? 0 : in.extra_memory_bytes[s];
      const double per = in.layer_memory_bytes.empty() ? 0 : in.layer_memory_bytes[s];
      EXPECT_LE(extra + n * per, in.memory_cap_bytes[s] * (1 + 1e-9));
    }
    const double extra_t = in.extra_time_s.empty() ? 0 : in.extra_time_s[s];
    makespan = std::max(makespan, extra_t + n * in.layer_time_s[s]);
  }
  EXPECT_DOUBLE_EQ(r.makespan_s, makespan);
}

void expect_split(const StageSplitInput& in, const std::vector<int>& layers, double makespan) {
  const StageSplitResult fast = stage_split_fast(in);
  EXPECT_EQ(fast.layers_per_stage, layers);
  EXPECT_DOUBLE_EQ(fast.makespan_s, makespan);
  EXPECT_EQ(fast.certificate.status, SolveStatus::kOptimal);
  EXPECT_EQ(fast.certificate.gap, 0);
  for (SolverBackend b : kAllBackends) {
    const StageSplitResult milp = stage_split_milp(in, b);
    SCOPED_TRACE(backend_name(b));
    ASSERT_EQ(milp.certificate.status, SolveStatus::kOptimal) << milp.certificate.message;
    EXPECT_EQ(milp.layers_per_stage, layers);
    EXPECT_NEAR(milp.makespan_s, makespan, 1e-9 * makespan);
    EXPECT_NEAR(milp.certificate.objective, makespan, 1e-9 * makespan);
    EXPECT_LE(milp.certificate.best_bound, milp.certificate.objective);
    EXPECT_EQ(milp.certificate.name, "stage_split");
  }
}

TEST(StageSplit, SlowerStageGetsFewerLayers) {
  // 10 layers on a fast (1 s/layer) and a slow (1.5 s/layer) stage:
  // (6, 4) -> max(6, 6) = 6; (5, 5) -> 7.5; (7, 3) -> 7.
  StageSplitInput in;
  in.layers = 10;
  in.stages = 2;
  in.layer_time_s = {1.0, 1.5};
  expect_split(in, {6, 4}, 6.0);
}

TEST(StageSplit, HeterogeneousPipelineOfFourStages) {
  // Two node groups twice as slow: max layers within makespan M are
  // M, M/2, M, M/2 -> 3M = 18 at M = 6, and M = 5 holds only 14.
  StageSplitInput in;
  in.layers = 18;
  in.stages = 4;
  in.layer_time_s = {1.0, 2.0, 1.0, 2.0};
  expect_split(in, {6, 3, 6, 3}, 6.0);
}

TEST(StageSplit, MemoryBoundEarlyStagesAndLmHeadOnTheLast) {
  // 1F1B with p = 4 keeps 4, 3, 2, 1 micro-batches in flight: a layer costs
  // 4, 3, 2, 1 units on stages 0..3, cap 10 -> at most 2, 3, 5, 10 layers.
  // The last stage also runs the LM head (2 s). M = 7 holds 2+3+5+5 = 15 < 16,
  // M = 8 holds 2+3+5+6 = 16: the split is (2, 3, 5, 6), makespan 8.
  StageSplitInput in;
  in.layers = 16;
  in.stages = 4;
  in.layer_time_s = {1, 1, 1, 1};
  in.extra_time_s = {0, 0, 0, 2};
  in.layer_memory_bytes = {4e9, 3e9, 2e9, 1e9};
  in.extra_memory_bytes = {0, 0, 0, 0};
  in.memory_cap_bytes = {10e9, 10e9, 10e9, 10e9};
  EXPECT_EQ(stage_max_layers(in, 0), 2);
  EXPECT_EQ(stage_max_layers(in, 3), 10);
  expect_split(in, {2, 3, 5, 6}, 8.0);
}

TEST(StageSplit, InfeasibleSplitsOnEveryPath) {
  StageSplitInput too_big;
  too_big.layers = 12;
  too_big.stages = 2;
  too_big.layer_time_s = {1, 1};
  too_big.layer_memory_bytes = {1e9, 1e9};
  too_big.memory_cap_bytes = {5e9, 6.5e9};  // 5 + 6 = 11 layers fit

  StageSplitInput too_few;
  too_few.layers = 3;
  too_few.stages = 2;
  too_few.layer_time_s = {1, 1};
  too_few.min_layers_per_stage = 2;

  StageSplitInput fixed_too_big;
  fixed_too_big.layers = 4;
  fixed_too_big.stages = 2;
  fixed_too_big.layer_time_s = {1, 1};
  fixed_too_big.extra_memory_bytes = {1e9, 9e9};
  fixed_too_big.memory_cap_bytes = {8e9, 8e9};

  for (const StageSplitInput* in : {&too_big, &too_few, &fixed_too_big}) {
    const StageSplitResult fast = stage_split_fast(*in);
    EXPECT_FALSE(fast.feasible());
    EXPECT_EQ(fast.certificate.status, SolveStatus::kInfeasible);
    EXPECT_TRUE(std::isinf(fast.makespan_s));
    for (SolverBackend b : kAllBackends) {
      const StageSplitResult milp = stage_split_milp(*in, b);
      EXPECT_EQ(milp.certificate.status, SolveStatus::kInfeasible) << backend_name(b);
      EXPECT_FALSE(milp.feasible());
    }
  }
}

TEST(StageSplit, RejectsInvalidInput) {
  StageSplitInput in;
  in.layers = 4;
  in.stages = 2;
  in.layer_time_s = {1};
  EXPECT_THROW(stage_split_fast(in), std::invalid_argument);
  in.layer_time_s = {1, -1};
  EXPECT_THROW(stage_split_fast(in), std::invalid_argument);
  in.layer_time_s = {1, 1};
  in.memory_cap_bytes = {1e9};
  EXPECT_THROW(stage_split_model(in), std::invalid_argument);
  in.memory_cap_bytes = {};
  in.stages = 0;
  EXPECT_THROW(stage_split_fast(in), std::invalid_argument);
}

TEST(StageSplit, SingleStageAndZeroMinimum) {
  StageSplitInput one;
  one.layers = 7;
  one.stages = 1;
  one.layer_time_s = {0.25};
  one.extra_time_s = {0.5};
  expect_split(one, {7}, 2.25);

  // With no minimum a stage whose fixed work already sets the makespan gets
  // no layers: stage 1 (LM head 10 s) stays empty, 5 layers at 2 s = 10 s.
  StageSplitInput empty_ok;
  empty_ok.layers = 5;
  empty_ok.stages = 2;
  empty_ok.layer_time_s = {2, 2};
  empty_ok.extra_time_s = {0, 10};
  empty_ok.min_layers_per_stage = 0;
  expect_split(empty_ok, {5, 0}, 10.0);
}

TEST(StageSplit, FastPathEqualsMilpOnRandomInstances) {
  Rng rng(424242);
  int feasible = 0;
  for (int instance = 0; instance < 100; ++instance) {
    StageSplitInput in;
    in.stages = rng.uniform(1, 4);
    in.min_layers_per_stage = rng.uniform(0, 2);
    in.layers = rng.uniform(in.stages * in.min_layers_per_stage, 16);
    for (int s = 0; s < in.stages; ++s) {
      in.layer_time_s.push_back(rng.uniform(1, 24) * 1e-3 / 8);  // realistic: ~ms
      in.extra_time_s.push_back(rng.uniform(0, 3) == 0 ? rng.uniform(1, 40) * 1e-3 / 8 : 0);
      in.layer_memory_bytes.push_back(rng.uniform(1, 8) * 0.5e9);
      in.extra_memory_bytes.push_back(rng.uniform(0, 4) * 1e9);
      in.memory_cap_bytes.push_back(rng.uniform(0, 3) == 0 ? kInfinity : rng.uniform(4, 24) * 1e9);
    }
    SCOPED_TRACE(std::string("instance ") += std::to_string(instance));
    const StageSplitResult fast = stage_split_fast(in);
    if (fast.feasible()) {
      ++feasible;
      expect_valid_split(in, fast);
    }
    for (SolverBackend b : kAllBackends) {
      SCOPED_TRACE(backend_name(b));
      const StageSplitResult milp = stage_split_milp(in, b);
      if (!fast.feasible()) {
        EXPECT_EQ(milp.certificate.status, SolveStatus::kInfeasible);
        continue;
      }
      ASSERT_EQ(milp.certificate.status, SolveStatus::kOptimal) << milp.certificate.message;
      expect_valid_split(in, milp);
      EXPECT_NEAR(milp.makespan_s, fast.makespan_s, 1e-6 * fast.makespan_s);
    }
  }
  EXPECT_GT(feasible, 50);
  EXPECT_LT(feasible, 100);
}

}  // namespace
}  // namespace parplan

namespace parplan {
namespace {

// Megatron's uneven layout (equal middle stages): the fast path equals the
// MILP optimum on every backend, on random instances (fixed seed).
TEST(StageSplitEqualMiddle, FastPathEqualsMilpOnRandomInstances) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 60; ++trial) {
    StageSplitInput in;
    // Small enough for the exhaustive backend (domain product <= 5e6).
    in.stages = std::uniform_int_distribution<int>(3, 4)(rng);
    in.layers = std::uniform_int_distribution<int>(in.stages, 24)(rng);
    in.equal_middle_stages = true;
    const double t = std::uniform_real_distribution<double>(0.5, 2.0)(rng);
    in.layer_time_s.assign(in.stages, t);
    in.extra_time_s.assign(in.stages, 0.0);
    in.extra_time_s.front() = std::uniform_real_distribution<double>(0, 2 * t)(rng);
    in.extra_time_s.back() = std::uniform_real_distribution<double>(0, 4 * t)(rng);
    const StageSplitResult fast = stage_split_fast(in);
    for (SolverBackend backend : {SolverBackend::kCbc, SolverBackend::kGlpk, SolverBackend::kExhaustive}) {
      const StageSplitResult milp = stage_split_milp(in, backend);
      ASSERT_EQ(fast.feasible(), milp.feasible()) << trial;
      if (!fast.feasible()) continue;
      EXPECT_EQ(milp.certificate.status, SolveStatus::kOptimal);
      EXPECT_NEAR(fast.makespan_s, milp.makespan_s, 1e-9 * fast.makespan_s)
          << trial << " " << backend_name(backend);
      for (int s = 2; s + 1 < in.stages; ++s) EXPECT_EQ(milp.layers_per_stage[s], milp.layers_per_stage[1]);
    }
    if (fast.feasible()) {
      for (int s = 2; s + 1 < in.stages; ++s) EXPECT_EQ(fast.layers_per_stage[s], fast.layers_per_stage[1]);
    }
  }
}

TEST(StageSplitEqualMiddle, HeavyLastStageGetsFewerLayers) {
  // 126 layers (Llama 3 405B) on 16 stages: the LM head costs 3 layers'
  // time on the last stage. Hand optimum: middle 8, first 8, last 6 gives 9
  // on every stage but the first (8); no split has a makespan below 9 since
  // 14 middle stages * 8 = 112 leaves 14 for first + last (8 + 6: 8, 9).
  StageSplitInput in;
  in.stages = 16;
  in.layers = 126;
  in.equal_middle_stages = true;
  in.layer_time_s.assign(16, 1.0);
  in.extra_time_s.assign(16, 0.0);
  in.extra_time_s.back() = 3.0;
  const StageSplitResult fast = stage_split_fast(in);
  ASSERT_TRUE(fast.feasible());
  EXPECT_DOUBLE_EQ(fast.makespan_s, 9.0);
  EXPECT_LT(fast.layers_per_stage.back(), fast.layers_per_stage[1]);
}

}  // namespace
}  // namespace parplan
