// The calibrated Frontier profile (hardware-profiles/frontier.yaml)
// predicts the published runs it was fitted to (calibration/frontier-runs.yaml)
// within the errors its calibration block states, and every fitted constant
// stays inside its physical bounds, the GEMM one below the measured ceiling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "cost/fitted_constants.h"
#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/run_sources.h"

namespace parplan {
namespace {

ClusterSpec frontier_profile() {
  return load_cluster((data_dir() / "hardware-profiles/frontier.yaml").string());
}

TEST(CalibrationFrontier, PredictsTheHeldInRunsWithinTheStatedErrors) {
  const ClusterSpec cluster = frontier_profile();
  ASSERT_TRUE(cluster.calibration.calibrated());
  const auto runs = load_runs({(data_dir() / "calibration/frontier-runs.yaml").string()}, cluster);
  ASSERT_EQ(static_cast<int>(runs.size()), cluster.calibration.runs);
  double sum = 0, worst = 0;
  for (const auto& run : runs) {
    const double error = std::fabs(predict_run(run, cluster).step_s / run.measured_step_s - 1.0);
    sum += error;
    worst = std::max(worst, error);
    // The profile rounds its constants to 6 significant digits.
    EXPECT_LE(error, cluster.calibration.max_step_error + 1e-4) << run.name;
  }
  EXPECT_LE(sum / runs.size(), cluster.calibration.mean_step_error + 1e-4);
  EXPECT_NEAR(worst, cluster.calibration.max_step_error, 1e-3);
  // Leave-one-out can only be worse than the fit to all runs.
  EXPECT_GE(cluster.calibration.cv_mean_step_error, cluster.calibration.mean_step_error);
}

TEST(CalibrationFrontier, FittedConstantsStayInsideTheirPhysicalBounds) {
  const ClusterSpec cluster = frontier_profile();
  for (const auto& c : fitted_constants(cluster)) {
    const double value = fitted_value(cluster, c);
    EXPECT_GE(value, c.lower) << c.key;
    EXPECT_LE(value, c.upper) << c.key;
  }
  // Measured single-GCD bf16 GEMM: 147.0 of 191.5 TFLOP/s (MAMF, ROCm 6.2).
  EXPECT_LE(cluster.device.gemm_efficiency_max, 147.0 / 191.5);
  EXPECT_GT(cluster.device.layer_overhead_s, 0.0);
}

}  // namespace
}  // namespace parplan
