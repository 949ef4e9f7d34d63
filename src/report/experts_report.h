// Output of `parplan experts`: the terminal table and the JSON document
// (schema in docs/experts.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "src/io/expert_loads.h"
#include "src/plan/expert_placement_run.h"
#include "src/plan/expert_step_time.h"

namespace parplan {

struct ExpertsReportContext {
  const ExpertLoads* loads = nullptr;
  ExpertPlacementRequest request;
  /// Omit every wall-clock field (identical input, identical bytes).
  bool timings = true;
  /// How the step's config was chosen, or why no step time is shown
  /// (empty: none was asked for).
  std::string step_time_note;
  /// The predicted step with each placement (--job or --model/--cluster).
  PlacementStepTimes step_times;
};

nlohmann::ordered_json experts_json(const ExpertsReportContext& context, const ExpertPlacementRun& run);
std::string experts_table(const ExpertsReportContext& context, const ExpertPlacementRun& run);

}  // namespace parplan
