// phy2log / log2phy / logcnt from per-layer placements.
#include "src/report/eplb_placement.h"

#include <algorithm>

namespace parplan {

nlohmann::ordered_json eplb_json(const ExpertPlacementShape& shape,
                                 const std::vector<LayerPlacement>& layers) {
  int widest = 1;
  for (const LayerPlacement& p : layers)
    widest = std::max(widest, *std::max_element(p.replicas.begin(), p.replicas.end()));
  nlohmann::ordered_json phy2log = nlohmann::ordered_json::array();
  nlohmann::ordered_json log2phy = nlohmann::ordered_json::array();
  nlohmann::ordered_json logcnt = nlohmann::ordered_json::array();
  for (const LayerPlacement& p : layers) {
    std::vector<std::vector<int>> physical(shape.experts);
    for (size_t slot = 0; slot < p.physical_to_logical.size(); ++slot) {
      physical[p.physical_to_logical[slot]].push_back(static_cast<int>(slot));
    }
    for (auto& ids : physical) ids.resize(widest, -1);
    phy2log.push_back(p.physical_to_logical);
    log2phy.push_back(physical);
    logcnt.push_back(p.replicas);
  }
  nlohmann::ordered_json out;
  out["num_layers"] = layers.size();
  out["num_logical_experts"] = shape.experts;
  out["num_physical_experts"] = shape.physical();
  out["num_gpus"] = shape.gpus;
  out["num_nodes"] = shape.nodes;
  // No group limit is EPLB's global policy, which rebalance_experts runs
  // for num_groups 1 (0 would divide by zero in its hierarchical branch).
  out["num_groups"] = shape.groups > 0 ? shape.groups : 1;
  out["phy2log"] = phy2log;
  out["log2phy"] = log2phy;
  out["logcnt"] = logcnt;
  return out;
}

}  // namespace parplan
