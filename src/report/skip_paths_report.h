// Output of `parplan skip-paths`: the human table, the JSON document
// (schema in docs/skip-paths.md) and the SVG timeline.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "solvers/skip_paths.h"

namespace parplan {

/// solve_s: omitted when nullopt (--no-timings).
nlohmann::ordered_json skip_paths_json(const SkipProblem& problem, const SkipSolveResult& result,
                                       std::optional<double> solve_s);
std::string skip_paths_table(const SkipProblem& problem, const SkipSolveResult& result,
                             std::optional<double> solve_s);
/// One row per node, a box per task coloured by micro-batch (forward solid,
/// backward hatched, loss dark), gaps are idle time.
std::string skip_paths_svg(const SkipProblem& problem, const SkipSchedule& schedule,
                           const std::string& title);

}  // namespace parplan
