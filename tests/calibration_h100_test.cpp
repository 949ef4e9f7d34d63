// The shipped dgx-h100 profile is the calibrated one: it predicts the
// Megatron-LM README's H100 runs it was fitted to
// (calibration/h100-megatron-lm.yaml) within the errors its calibration block
// states, the block is what `plan` prints, and the fitted constants stay
// inside their physical bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "cost/fitted_constants.h"
#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/run_sources.h"
#include "src/report/error_band.h"

namespace parplan {
namespace {

TEST(CalibrationH100, PredictsTheHeldInRunsWithinTheStatedErrors) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  ASSERT_TRUE(cluster.calibration.calibrated());
  const auto runs = load_runs({(data_dir() / "calibration/h100-megatron-lm.yaml").string()}, cluster);
  ASSERT_EQ(static_cast<int>(runs.size()), cluster.calibration.runs);
  double sum = 0, worst = 0;
  for (const auto& run : runs) {
    // Megatron-Core on Hopper: Transformer Engine's cuDNN fused attention.
    EXPECT_EQ(run.job.attention_kernel, AttentionKernel::kCudnn) << run.name;
    const double error = std::fabs(predict_run(run, cluster).step_s / run.measured_step_s - 1.0);
    sum += error;
    worst = std::max(worst, error);
    EXPECT_LE(error, cluster.calibration.max_step_error + 1e-4) << run.name;
  }
  EXPECT_LE(sum / runs.size(), cluster.calibration.mean_step_error + 1e-4);
  EXPECT_NEAR(worst, cluster.calibration.max_step_error, 1e-3);
  EXPECT_GE(cluster.calibration.cv_mean_step_error, cluster.calibration.mean_step_error);
}

TEST(CalibrationH100, OneProfilePerMachine) {
  // The calibrated profiles are the shipped names; no "-calibrated" copies.
  for (const char* name : {"dgx-h100", "frontier"}) {
    const ClusterSpec cluster = load_cluster(name);
    EXPECT_TRUE(cluster.calibration.calibrated()) << name;
    // What plan prints under the step time: held-in and left-out errors.
    const std::string band = error_band_text(cluster);
    EXPECT_EQ(band.find("uncalibrated"), std::string::npos) << band;
    EXPECT_NE(band.find("left out"), std::string::npos) << band;
  }
  EXPECT_FALSE(std::filesystem::exists(data_dir() / "hardware-profiles/dgx-h100-calibrated.yaml"));
  EXPECT_FALSE(std::filesystem::exists(data_dir() / "hardware-profiles/frontier-calibrated.yaml"));
}

TEST(CalibrationH100, FittedConstantsStayInsideTheirPhysicalBounds) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  for (const auto& c : fitted_constants(cluster)) {
    const double value = fitted_value(cluster, c);
    EXPECT_GE(value, c.lower) << c.key;
    EXPECT_LE(value, c.upper) << c.key;
  }
}

}  // namespace
}  // namespace parplan
