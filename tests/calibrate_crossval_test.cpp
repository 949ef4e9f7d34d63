// parplan calibrate on the Narayanan 2021 Table 1 rows: fitted to the odd
// rows it predicts the even ones (and the other way round) about as well as
// the fit to all rows describes them.
#include <gtest/gtest.h>

#include <cmath>

#include "src/calibration/narayanan_table1.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/tune/calibrate.h"

namespace parplan {
namespace {

std::vector<FitRun> table1_runs() {
  std::vector<FitRun> runs;
  for (const auto& row : load_narayanan_table1((data_dir() / "calibration/reference.yaml").string())) {
    FitRun run;
    run.name = std::to_string(row.params_billion);
    run.model = calibration_model(row);
    run.job = calibration_job(row);
    run.config = calibration_config(row, 1);
    run.best_vp = true;
    // Narayanan 2021 eq. 3 FLOPs over the published TFLOP/s per GPU.
    const double B = row.gbs, s = 2048, l = row.layers, h = row.hidden, V = 51200;
    run.measured_step_s = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)) /
                          (row.published_tflops_per_gpu * 1e12 * row.gpus);
    runs.push_back(run);
  }
  return runs;
}

TEST(CalibrateCrossValidation, OddRowsPredictEvenRowsWithinOnePointOfTheFullFit) {
  const ClusterSpec cluster = load_cluster("dgx-a100");
  const auto runs = table1_runs();
  ASSERT_EQ(runs.size(), 10u);
  CalibrateOptions options;
  options.fit_keys = {"gemm_efficiency_max", "tiers[1].efficiency", "layer_overhead_s"};
  options.cross_validate = false;
  const CalibrateOutcome full = calibrate(cluster, runs, options);
  double held_out_sum = 0;
  for (int parity : {0, 1}) {
    std::vector<FitRun> fit_rows, test_rows;
    for (std::size_t i = 0; i < runs.size(); ++i)
      (i % 2 == static_cast<std::size_t>(parity) ? fit_rows : test_rows).push_back(runs[i]);
    const CalibrateOutcome half = calibrate(cluster, fit_rows, options);
    for (const auto& run : test_rows)
      held_out_sum += std::fabs(predict_run(run, half.fit.cluster).step_s / run.measured_step_s - 1.0);
  }
  const double held_out_mean = held_out_sum / runs.size();
  EXPECT_LE(held_out_mean, full.fit.errors_after.mean_abs + 0.01)
      << "full fit " << full.fit.errors_after.mean_abs << ", held out " << held_out_mean;
}

}  // namespace
}  // namespace parplan
