// JSON objects of the stable output schema (docs/json-schema.md).
#pragma once

#include <nlohmann/json.hpp>

#include "cost/cost_report.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

nlohmann::ordered_json config_json(const ParallelConfig& config);
/// { config, model, time, throughput, memory, limiter }
nlohmann::ordered_json cost_json(const ModelSpec& model, const ParallelConfig& config, const CostReport& cost,
                                 int seq);

}  // namespace parplan

#include <vector>

#include "solvers/certificate.h"

namespace parplan {
/// [{ name, status, objective, bound, gap, backend, time_s }]
nlohmann::ordered_json certificates_json(const std::vector<SolverCertificate>& certificates);
}  // namespace parplan
