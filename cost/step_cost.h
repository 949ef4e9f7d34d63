// The cost model's entry point: memory per device and step time of one
// ParallelConfig for a job. Pure: same inputs, same numbers; no allocation.
#pragma once

#include "cost/cost_report.h"
#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

/// Predicts one config. The config must be structurally valid (dimensions
/// multiply to the world, layers lay out over stages); see config_problem().
CostReport estimate_cost(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         const ParallelConfig& config);

/// Memory only (cheaper; the search prunes with it before timing).
MemoryBreakdown estimate_memory(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                const ParallelConfig& config);

/// Per-stage linear model for the stage-split and recompute formulations:
/// stage time per micro-batch = extra + layers * layer_time (+ recomputed *
/// recompute_time); peak memory = fixed + layers * layer_memory (- recomputed
/// * recompute_saved), for the config as given (with full recomputation:
/// every layer recomputed); recompute_* are the marginal cost and saving of
/// recomputing one more layer in full.
struct StageCoefficients {
  double layer_time_s = 0;
  double extra_time_s = 0;
  double layer_memory_bytes = 0;
  double fixed_memory_bytes = 0;
  double recompute_time_s = 0;
  double recompute_saved_bytes = 0;
};
StageCoefficients stage_coefficients(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                     const ParallelConfig& config, int stage);

/// Why a config cannot run at all (nullptr when it can): sizes that do not
/// divide, layouts Megatron rejects. Returned text names the rule.
const char* config_problem(const ModelSpec& model, const JobSpec& job, const ParallelConfig& config);

}  // namespace parplan
