// Sequence scattering at its time limit, on FlexSP's GPT-7B coefficients and
// Wikipedia batches: a step whose budget is spent returns the best plan so
// far with its gap instead of running the MILP on, and a CBC search cut
// short never claims a proof it did not finish. No wall time is asserted.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "solvers/sequence_scatter.h"
#include "solvers/solve.h"
#include "src/io/scatter_input.h"

namespace parplan {
namespace {

const std::string kExamples = std::string(PARPLAN_SOURCE_DIR) + "/examples/scatter/";

struct FlexspBatches {
  ScatterCoefficients coefficients;
  std::vector<std::vector<std::int64_t>> steps;
};

FlexspBatches flexsp_batches() {
  return {load_scatter_coefficients(kExamples + "flexsp-gpt-7b-64gpu-30gb.json"),
          load_scatter_lengths(kExamples + "flexsp-wikipedia-gbs512.txt")};
}

TEST(ScatterTimeLimit, SpentBudgetSkipsTheMilpAndStatesTheGap) {
  const FlexspBatches b = flexsp_batches();
  ASSERT_EQ(b.steps.size(), 4u);
  ScatterOptions options;
  options.step_time_limit_s = 0;  // spent before the step starts
  for (const auto& lengths : b.steps) {
    const ScatterStepResult r = solve_scatter_step(lengths, 64, b.coefficients, options);
    EXPECT_EQ(check_scatter_plan(r.plan, lengths, 64, b.coefficients), "");
    EXPECT_EQ(r.certificate.backend, "fast-path");
    EXPECT_LE(r.certificate.best_bound, r.plan.time_ms);
    // The hurried packing (one coarse cap, no micro-batch packed again)
    // still gives the static baseline, and the plan is never slower.
    EXPECT_TRUE(std::isfinite(r.static_time_ms));
    EXPECT_LE(r.plan.time_ms, r.static_time_ms * (1 + 1e-12));
    EXPECT_GE(r.certificate.gap, 0.0);
    if (r.certificate.status == SolveStatus::kFeasible) {
      EXPECT_NE(r.certificate.message.find("MILP skipped (step time limit reached)"), std::string::npos)
          << r.certificate.message;
    }
  }
}

TEST(ScatterTimeLimit, ShortBudgetKeepsAValidPlanAndBound) {
  const FlexspBatches b = flexsp_batches();
  for (SolverBackend backend : {SolverBackend::kCbc, SolverBackend::kGlpk}) {
    ScatterOptions options;
    options.backend = backend;
    options.step_time_limit_s = 0.05;
    for (const auto& lengths : b.steps) {
      const ScatterStepResult r = solve_scatter_step(lengths, 64, b.coefficients, options);
      EXPECT_EQ(check_scatter_plan(r.plan, lengths, 64, b.coefficients), "");
      EXPECT_LE(r.certificate.best_bound, r.plan.time_ms * (1 + 1e-12));
      EXPECT_GE(r.certificate.best_bound, scatter_lower_bound_ms(lengths, 64, b.coefficients) * (1 - 1e-9));
      EXPECT_TRUE(r.certificate.status == SolveStatus::kFeasible ||
                  r.certificate.status == SolveStatus::kOptimal);
    }
  }
}

// A feasible assignment MILP (every job on one of several machines, minimise
// the makespan) too large to finish in a millisecond: stopped at the limit,
// CBC may report a solution or none, but never infeasibility, and a bound
// never above the objective.
TEST(ScatterTimeLimit, CbcStoppedEarlyNeverClaimsInfeasible) {
  std::mt19937 rng(7);
  MilpModel model("makespan");
  constexpr int kJobs = 120;
  constexpr int kMachines = 12;
  const int makespan = model.add_continuous("T", 0, kInfinity, 1.0);
  std::vector<std::vector<MilpTerm>> load(kMachines);
  for (int i = 0; i < kJobs; ++i) {
    std::vector<MilpTerm> once;
    for (int m = 0; m < kMachines; ++m) {
      const int x = model.add_binary("x" + std::to_string(i) + "_" + std::to_string(m));
      once.push_back({x, 1.0});
      load[m].push_back({x, 1.0 + static_cast<double>(rng() % 1000)});
    }
    model.add_equal("once" + std::to_string(i), once, 1.0);
  }
  for (int m = 0; m < kMachines; ++m) {
    load[m].push_back({makespan, -1.0});
    model.add_less_equal("load" + std::to_string(m), load[m], 0);
  }
  SolveOptions options;
  options.time_limit_s = 1e-3;
  const SolveResult r = solve(model, SolverBackend::kCbc, options);
  EXPECT_NE(r.certificate.status, SolveStatus::kInfeasible);
  EXPECT_NE(r.certificate.status, SolveStatus::kError) << r.certificate.message;
  if (r.has_solution()) {
    EXPECT_LE(r.certificate.best_bound, r.certificate.objective * (1 + 1e-9));
  }
}

}  // namespace
}  // namespace parplan
