// JSON objects of the stable output schema (docs/json-schema.md).
#pragma once

#include <nlohmann/json.hpp>

#include "cost/cost_report.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

nlohmann::ordered_json config_json(const ParallelConfig& config, int model_layers);
/// { config, model, time, throughput, memory, limiter }
nlohmann::ordered_json cost_json(const ModelSpec& model, const ParallelConfig& config, const CostReport& cost,
                                 int seq);

}  // namespace parplan

#include <string>
#include <vector>

#include "cost/spec/cluster_spec.h"
#include "src/plan/placement.h"

namespace parplan {
/// [{ tier, nic, bytes, seconds }]: data-parallel traffic per tier per step.
nlohmann::ordered_json traffic_json(const ClusterSpec& cluster, const CostReport& cost);
/// { tp: [{ranks, nic}], dp: [...], pp: [...] }; nic a string or a list.
nlohmann::ordered_json placement_json(const Placement& placement);
}  // namespace parplan

#include <vector>

#include "solvers/certificate.h"

namespace parplan {
/// [{ name, status, objective, bound, gap, backend, time_s }]
/// `timings`: include each solve's wall-clock time_s (--no-timings omits it).
nlohmann::ordered_json certificates_json(const std::vector<SolverCertificate>& certificates,
                                         bool timings = true);
}  // namespace parplan

#include "cost/spec/job_spec.h"

namespace parplan {
/// { error_band: the profile's calibration error (the table's text),
///   heldout: { runs, mean_abs_error, max_abs_error, mean_error, alike } or
///   null } (src/calibration/heldout_alike.h).
nlohmann::ordered_json accuracy_json(const ClusterSpec& cluster, const ModelSpec& model, const JobSpec& job,
                                     const ParallelConfig& config);
}  // namespace parplan
