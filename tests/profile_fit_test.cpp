// The calibration LP (solvers/profile_fit): a two-constant fit equals a
// brute-force grid's optimum, and runs generated from a hidden profile give
// back its constants.
#include "solvers/profile_fit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "cost/fitted_constants.h"
#include "cost/step_cost.h"
#include "src/calibration/narayanan_table1.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/model_loader.h"
#include "tests/synthetic_runs.h"

namespace parplan {
namespace {

std::vector<FitRun> narayanan_runs() {
  std::vector<FitRun> runs;
  for (const auto& row : load_narayanan_table1((data_dir() / "calibration/reference.yaml").string())) {
    FitRun run;
    run.name = std::to_string(row.params_billion) + "B";
    run.model = calibration_model(row);
    run.job = calibration_job(row);
    run.config = calibration_config(row, 1);
    run.best_vp = true;
    // Narayanan 2021 eq. 3 FLOPs over the published TFLOP/s per GPU.
    const double B = row.gbs, s = 2048, l = row.layers, h = row.hidden, V = 51200;
    const double flops = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    run.measured_step_s = flops / (row.published_tflops_per_gpu * 1e12 * row.gpus);
    runs.push_back(run);
  }
  return runs;
}

double score(const ClusterSpec& c, const std::vector<FitRun>& runs, FitObjective objective) {
  const FitErrors e = fit_errors(c, runs);
  return objective == FitObjective::kMean ? e.mean_abs : e.max_abs;
}

void expect_matches_grid(FitObjective objective, SolverBackend backend) {
  // Two constants on the published Table 1 rows: the GEMM ceiling and the
  // InfiniBand efficiency. The grid is fine enough that its optimum is
  // within a grid step of the true one.
  const ClusterSpec base = load_cluster("dgx-a100");
  const auto runs = narayanan_runs();
  const auto gemm = *find_fitted_constant(base, "gemm_efficiency_max");
  const auto ib = *find_fitted_constant(base, "tiers[1].efficiency");
  double grid_best = 1e9, grid_gemm = 0, grid_ib = 0;
  constexpr double kGemmStep = 0.0025, kIbStep = 0.01;
  for (double g = 0.55; g <= 0.85 + 1e-9; g += kGemmStep) {
    for (double b = 0.3; b <= 1.0 + 1e-9; b += kIbStep) {
      ClusterSpec c = base;
      set_fitted_value(c, gemm, g);
      set_fitted_value(c, ib, b);
      const double s = score(c, runs, objective);
      if (s < grid_best) grid_best = s, grid_gemm = g, grid_ib = b;
    }
  }
  ProfileFitOptions options;
  options.objective = objective;
  options.backend = backend;
  const ProfileFitResult fit = fit_profile(base, runs, {gemm, ib}, options);
  const double fitted = score(fit.cluster, runs, objective);
  // The LP sequence is at least as good as the grid (it is not restricted
  // to grid points) and lands in the grid optimum's cell.
  EXPECT_LE(fitted, grid_best + 1e-6);
  // The mean's optimum is a point; the max's can be a flat valley (the
  // worst row does not depend on the network), so only its value is checked.
  if (objective == FitObjective::kMean) {
    EXPECT_NEAR(fit.after[0], grid_gemm, 2 * kGemmStep);
    EXPECT_NEAR(fit.after[1], grid_ib, 2 * kIbStep);
  }
  EXPECT_TRUE(fit.converged);
}

TEST(ProfileFit, TwoConstantMeanFitEqualsBruteForceGridCbc) {
  expect_matches_grid(FitObjective::kMean, SolverBackend::kCbc);
}

TEST(ProfileFit, TwoConstantMaxFitEqualsBruteForceGridGlpk) {
  expect_matches_grid(FitObjective::kMax, SolverBackend::kGlpk);
}

TEST(ProfileFit, RecoversSevenHiddenConstantsWithinTwoPercent) {
  const ClusterSpec base = load_cluster("dgx-h100");
  const HiddenProfile hidden = hidden_h100_profile(base);
  const auto runs = synthetic_runs(hidden.cluster, synthetic_designs());
  const ProfileFitResult fit = fit_profile(base, runs, hidden.constants);
  ASSERT_EQ(fit.after.size(), hidden.values.size());
  for (std::size_t j = 0; j < hidden.values.size(); ++j) {
    EXPECT_NEAR(fit.after[j], hidden.values[j], 0.02 * std::fabs(hidden.values[j]))
        << hidden.constants[j].key << " started at " << fit.before[j];
  }
  EXPECT_LT(fit.errors_after.max_abs, 1e-4);
}

TEST(ProfileFit, RankCheckKeepsOnlyWhatTheRunsPinDown) {
  // Runs at one sequence length cannot tell the attention kernel's
  // efficiency from its sequence-length curve; runs without measured memory
  // cannot pin the memory reserve.
  const ClusterSpec base = load_cluster("dgx-h100");
  auto designs = synthetic_designs();
  std::vector<RunDesign> one_seq;
  for (auto d : designs)
    if (d.seq == 4096) d.measure_memory = false, one_seq.push_back(d);
  const auto runs = synthetic_runs(base, one_seq);
  const auto candidates = hidden_h100_profile(base).constants;
  const auto kept = identifiable_constants(base, runs, candidates);
  bool has_reserve = false, has_flash = false, has_half_seq = false;
  for (const auto& c : kept) {
    has_reserve = has_reserve || c.key == "reserved_bytes";
    has_flash = has_flash || c.key == "flash_attention_efficiency";
    has_half_seq = has_half_seq || c.key == "attention_half_seq";
  }
  EXPECT_FALSE(has_reserve);
  EXPECT_TRUE(has_flash);
  EXPECT_FALSE(has_half_seq);
  // With every design (three sequence lengths, memory measured) all seven.
  EXPECT_EQ(identifiable_constants(base, synthetic_runs(base, designs), candidates).size(),
            candidates.size());
}

}  // namespace
}  // namespace parplan
