// Output of `parplan scatter`: the JSON document (docs/scatter.md), the
// human table, and the --out plan (one JSON line per step for data loaders).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost/scatter_coefficients.h"
#include "solvers/sequence_scatter.h"

namespace parplan {

struct ScatterReport {
  int gpus = 0;
  ScatterCoefficients coefficients;
  /// "model" (derived by the cost model) or the coefficients file's path.
  std::string coefficients_source;
  std::vector<std::vector<std::int64_t>> steps;
  std::vector<ScatterStepResult> results;
  /// false: omit solve_ms and every wall-clock field (byte-identical output).
  bool timings = true;
  /// Wall-clock ms of the whole solve (all steps, all threads).
  double wall_ms = 0;
};

/// {quadratic_ms, linear_ms, fixed_ms, alltoall_ms_per_token, token_capacity_per_gpu, group_sizes}
nlohmann::ordered_json scatter_coefficients_json(const ScatterCoefficients& coefficients);
/// {coefficients, steps: [...], summary: {...}}
nlohmann::ordered_json scatter_json(const ScatterReport& report);
/// One line per step: {"step", "time_ms", "micro_batches": [{"groups": [...]}]}.
std::string scatter_out_lines(const ScatterReport& report);
/// Per step: groups used, time vs static, gap; then the summary.
std::string scatter_table(const ScatterReport& report);

}  // namespace parplan
