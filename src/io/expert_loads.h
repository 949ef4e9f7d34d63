// Routing statistics of a MoE model: tokens routed to each logical expert of
// each MoE layer, from JSON {"loads": [[...], ...]} or CSV (one row a layer).
// Read by `parplan experts` and by the cost model's --routing-stats.
#pragma once

#include <string>
#include <vector>

namespace parplan {

struct ExpertLoads {
  /// loads[layer][expert], tokens (finite, >= 0); every row the same length.
  std::vector<std::vector<double>> loads;
  int layers() const { return static_cast<int>(loads.size()); }
  int experts() const { return loads.empty() ? 0 : static_cast<int>(loads.front().size()); }
};

/// Reads FILE as JSON when its first non-blank character is '{', else as
/// CSV (no header, or one header line whose first field is not a number).
/// Throws InputError naming the file, the layer/row and the field for an
/// unreadable or empty file, ragged rows, negative, NaN, infinite or
/// non-numeric loads, and a layer without tokens. `flag` names the file's
/// flag in errors.
ExpertLoads read_expert_loads(const std::string& path, const std::string& flag = "--loads");

/// The same from text already in memory; `source` names it in errors.
ExpertLoads parse_expert_loads(const std::string& text, const std::string& source);

/// Imbalance of the routing itself: per layer max expert load / mean expert
/// load, and its mean and max over the layers (what the slowest expert-parallel
/// rank sees with one expert per rank and no redundancy).
struct RoutingImbalance {
  std::vector<double> per_layer;
  double mean = 1;
  double max = 1;
};
RoutingImbalance routing_imbalance(const ExpertLoads& loads);

}  // namespace parplan
