// The Narayanan 2021 Table 1 runs (calibration/reference.yaml) as jobs, and
// parplan's prediction of each: the calibration the dgx-a100 profile is
// fitted to, shared by bench/calibration_bench and tests/calibration_test.
#pragma once

#include <string>
#include <vector>

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

struct CalibrationRow {
  double params_billion = 0;
  int heads = 0, hidden = 0, layers = 0, tp = 0, pp = 0, gpus = 0, gbs = 0;
  double published_tflops_per_gpu = 0;
};

std::vector<CalibrationRow> load_narayanan_table1(const std::string& path);

/// The job and the published config of a row (mbs 1, full recompute,
/// unfused attention, fp16, interleaved schedule, no grad-reduce and no
/// point-to-point overlap as in the Megatron-LM of 2021).
ModelSpec calibration_model(const CalibrationRow& row);
JobSpec calibration_job(const CalibrationRow& row);
ParallelConfig calibration_config(const CalibrationRow& row, int vp);

struct CalibrationResult {
  CalibrationRow row;
  int vp = 1;
  double predicted_tflops_per_gpu = 0;  // Narayanan's eq. 3 FLOPs / predicted step
  double error = 0;                     // (predicted - published) / published
};

/// Predicts one row; vp is the best valid interleaving (the paper's runs were
/// tuned), chosen by the model itself.
CalibrationResult predict_calibration_row(const CalibrationRow& row, const ClusterSpec& cluster);

}  // namespace parplan
