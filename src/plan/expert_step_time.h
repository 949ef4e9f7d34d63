// The predicted training step with each expert placement of `parplan
// experts`: one config (the job file's, or the best plan with ep = the
// placement's GPUs), priced by the cost model at each placement's measured
// imbalance.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

struct PlacementImbalance {
  std::string name;      ///< static | greedy | parplan
  double imbalance = 1;  ///< mean over layers of max GPU load / mean
};

struct PlacementStepTime {
  std::string name;
  double imbalance = 1;
  double step_s = 0;
  bool fits = true;
};

struct PlacementStepTimes {
  bool available = false;
  std::string note;        ///< why not available, or how the config was chosen
  std::string error_band;  ///< the profile's calibration error (report)
  ParallelConfig config;
  int model_layers = 0;  ///< the model's, for each rank's layers in the report
  std::vector<PlacementStepTime> placements;
};

/// `config`: the job file's (already checked, ep = the placement's GPUs);
/// else the best plan with ep pinned to `ep_gpus`, searched at the first
/// placement's imbalance (the static placement: what runs without a
/// balancer). Then every placement is priced on that one config, so the
/// step times differ only by the imbalance.
PlacementStepTimes predict_placement_step_times(const ModelSpec& model, const ClusterSpec& cluster,
                                                const JobSpec& job,
                                                const std::optional<ParallelConfig>& config, int ep_gpus,
                                                const std::vector<PlacementImbalance>& imbalances,
                                                const std::string& solver);

}  // namespace parplan
