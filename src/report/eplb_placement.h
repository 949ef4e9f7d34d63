// The placement in EPLB's convention (deepseek-ai/EPLB rebalance_experts:
// phy2log, log2phy, logcnt per layer), the file `parplan experts --out` writes.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "solvers/expert_placement.h"

namespace parplan {

/// { num_layers, num_logical_experts, num_physical_experts, num_gpus,
///   num_nodes, num_groups, phy2log: [[logical id per physical expert]],
///   log2phy: [[[physical ids of each logical expert, padded with -1 to the
///   largest count of any layer]]], logcnt: [[replicas per logical expert]] }
nlohmann::ordered_json eplb_json(const ExpertPlacementShape& shape,
                                 const std::vector<LayerPlacement>& layers);

}  // namespace parplan
