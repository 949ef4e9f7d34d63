// The recommended plan beside the optimum: among the ranked plans within the
// profile's prediction error (at most 2 %) of the fastest, the one with no
// lossy collective, the most free memory and the fewest groups crossing
// the slow (inter-node) tiers.
#pragma once

#include <string>
#include <vector>

#include "cost/spec/cluster_spec.h"
#include "src/search/search.h"

namespace parplan {

/// The most a recommended plan may be predicted slower than the optimum.
inline constexpr double kMaxRecommendBand = 0.02;

struct Recommendation {
  /// Index into the ranked plans (0: the optimum itself).
  int index = 0;
  /// The band used: min(profile's mean step-time error, 2 %); 2 % when the
  /// profile is uncalibrated.
  double band = kMaxRecommendBand;
  /// Why it differs from the optimum (empty when index == 0).
  std::string reason;
};

/// The recommended plan itself (`why.index` counts in the ranked plans an
/// engine accepted, which may be more than the --top shown).
struct RecommendedPlan {
  RankedConfig plan;
  Recommendation why;
};

/// Process groups (tp, cp, dp, pp, ep) of more than one rank whose ranks
/// span more than one node, in Megatron's tp-cp-dp-pp rank order.
int groups_crossing_nodes(const ClusterSpec& cluster, const ParallelConfig& config);

/// Picks the recommended plan of `ranked` (best first).
Recommendation recommend_plan(const ClusterSpec& cluster, const std::vector<RankedConfig>& ranked);

}  // namespace parplan
