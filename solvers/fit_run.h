// A measured training run as the profile fit sees it (model, job, config,
// measured step time and optionally peak memory) and the cost model's
// prediction of it under a candidate profile.
#pragma once

#include <optional>
#include <string>

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

struct FitRun {
  std::string name;
  /// Where the measurement comes from (a paper's table, a log file).
  std::string source;
  ModelSpec model;
  JobSpec job;
  ParallelConfig config;
  /// The run's published config leaves vp or mbs out because it was tuned:
  /// the prediction takes the fastest valid value under the profile.
  bool best_vp = false;
  bool best_mbs = false;
  double measured_step_s = 0;
  /// Peak memory per device as measured (0 = not measured).
  double measured_peak_bytes = 0;
  /// HBM per GPU of the hardware the run used, where its source gives one
  /// that differs from the profile's (0 = the profile's): the memory check
  /// uses it in place of the profile's capacity; timing stays the profile's.
  double hbm_bytes = 0;
  /// The profile of the hardware the run used where it names one other than
  /// the profile it is read against (run key `cluster`): predictions of the
  /// run use it; calibrate refuses such runs (it fits one profile).
  std::optional<ClusterSpec> own_cluster;
};

struct RunPrediction {
  double step_s = 0;
  double peak_bytes = 0;
  /// The vp and mbs the prediction used (the run's, or the best ones).
  int vp = 1;
  int mbs = 1;
  bool fits = true;
};

/// The profile with the run's own HBM capacity (FitRun::hbm_bytes) where it
/// gives one: usable HBM scales with it by the profile's usable fraction.
ClusterSpec run_cluster(const FitRun& run, const ClusterSpec& cluster);

/// Pure: estimate_cost on the run's config (or the fastest of its tuned
/// choices that fits memory; the fastest valid one when none fits).
RunPrediction predict_run(const FitRun& run, const ClusterSpec& cluster);

}  // namespace parplan
