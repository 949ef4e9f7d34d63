// Published runs (calibration/validation_runs.yaml) and parplan's prediction
// of each with the same config: the held-out check of the cost model.
#pragma once

#include <string>
#include <vector>

#include "cost/spec/cluster_spec.h"
#include "cost/spec/model_spec.h"

namespace parplan {

struct ValidationRun {
  std::string name, model, cluster;
  int gpus = 0, gbs = 0, seq = 2048, tp = 1, pp = 1, vp = 0, cp = 1, mbs = 1, zero = 0;
  bool sp = false;
  /// The run's software overlapped pipeline point-to-point and dp traffic.
  bool overlap = true;
  std::string recompute = "none", precision = "bf16", attention;
  /// The engine whose recipe the run is costed under (apply_engine_recipe);
  /// empty: none (`--engine any`).
  std::string engine;
  double published_step_s = 0;
};

std::vector<ValidationRun> load_validation_runs(const std::string& path);

struct ValidationResult {
  int vp = 1;
  double predicted_step_s = 0;
  double error = 0;  // (predicted - published) / published
};

/// Loads the run's model and cluster from the catalogs; when `cluster`
/// is given it replaces the catalog profile (the fit uses this).
ValidationResult predict_validation_run(const ValidationRun& run, const ClusterSpec* cluster = nullptr);
/// The same with the model already loaded.
ValidationResult predict_validation_run(const ValidationRun& run, const ModelSpec& model,
                                        const ClusterSpec& cluster);

}  // namespace parplan
