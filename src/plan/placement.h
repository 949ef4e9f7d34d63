// Where a plan's groups land: the ranks of every tensor-, context-, data- and
// pipeline-parallel group (Megatron's tp-cp-dp-pp rank order; on a
// heterogeneous cluster rank order is node group by node group) and the NIC
// types their traffic uses.
#pragma once

#include <string>
#include <vector>

#include "cost/spec/cluster_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

struct PlacedGroup {
  std::vector<int> ranks;
  /// Distinct NIC types the group's traffic uses, in order of first use:
  /// "intra-node" for a group inside one node, else the inter-node fabrics
  /// ("ib", "roce", "ethernet", "slingshot") its links cross.
  std::vector<std::string> nics;
};

struct Placement {
  std::vector<PlacedGroup> tp, cp, dp, pp;
};

/// The groups of `config` on `cluster` (cp groups exchange a sequence's
/// keys and values; dp groups are the dp x cp data shards ZeRO spans; pp
/// groups chain one rank of every stage).
Placement place_groups(const ClusterSpec& cluster, const ParallelConfig& config);

/// Whether every tp, cp and dp group stays inside one node group (or one node),
/// so that only pipeline traffic crosses groups.
bool collectives_inside_node_groups(const Placement& placement, const ClusterSpec& cluster);

/// Name of the node group holding `rank` ("" on a uniform cluster).
std::string node_group_name(const ClusterSpec& cluster, int rank);

}  // namespace parplan
