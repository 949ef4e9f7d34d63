// The output of `plan`: the best plan with its engine, the runners-up, the
// certificates and the notes, as a table for people or the JSON document of
// docs/json-schema.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "src/plan/planner.h"
#include "src/plan/recommend.h"

namespace parplan {

/// "9.9 ms", "1.24 s": a duration rounded for people.
std::string human_duration(double seconds);

/// `timings` false omits every wall-clock field (--no-timings). The
/// optimum is result.ranked.front(); `recommended`, when given and not the
/// optimum, is shown beside it.
std::string plan_table(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                       const PlannerResult& result, bool timings = true,
                       const RecommendedPlan* recommended = nullptr);
nlohmann::ordered_json plan_json(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                 const PlannerResult& result, bool timings = true,
                                 const RecommendedPlan* recommended = nullptr);

}  // namespace parplan
