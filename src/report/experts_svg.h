// SVG picture of an expert placement (`parplan experts --svg`): per-GPU
// load of every layer as a heat map, for the static placement (experts in
// id order, no replicas) beside parplan's, so the hot GPUs a placement
// removes are visible at a glance.
#pragma once

#include <string>
#include <vector>

#include "solvers/expert_placement.h"
#include "src/plan/expert_placement_run.h"

namespace parplan {

/// Two heat maps side by side, one row per layer and one column per GPU:
/// each cell the GPU's load over the layer's mean GPU load (white at 1,
/// red above, blue below, saturated at 2 and 0), for the static placement
/// and for `run`'s. Node boundaries (shape.nodes > 1) are drawn; each row
/// carries a tooltip with the layer's imbalance under both.
std::string experts_svg(const std::vector<std::vector<double>>& loads, const ExpertPlacementShape& shape,
                        const ExpertPlacementRun& run);

}  // namespace parplan
