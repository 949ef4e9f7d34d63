#include "src/plan/placement.h"

#include <algorithm>

#include "cost/collectives.h"
#include "src/io/cluster_loader.h"

namespace parplan {

namespace {

int node_of(const ClusterSpec& cluster, int rank) { return rank / std::max(1, cluster.ranks_per_node); }

// The fabric a link between two ranks uses, as a NIC name.
std::string link_nic(const ClusterSpec& cluster, int a, int b) {
  if (node_of(cluster, a) == node_of(cluster, b)) return nic_name(NicKind::kIntraNode);
  return nic_name(tier_between(cluster, a, b).nic);
}

void add_nic(std::vector<std::string>& nics, const std::string& nic) {
  if (std::find(nics.begin(), nics.end(), nic) == nics.end()) nics.push_back(nic);
}

// A collective group (ring over its members): the inter-node fabrics of the
// node groups it touches and, if it spans several, the link between them.
PlacedGroup collective_group(const ClusterSpec& cluster, std::vector<int> ranks) {
  PlacedGroup g;
  g.ranks = std::move(ranks);
  bool one_node = true;
  for (int r : g.ranks) one_node = one_node && node_of(cluster, r) == node_of(cluster, g.ranks.front());
  if (one_node) {
    g.nics.push_back(nic_name(NicKind::kIntraNode));
    return g;
  }
  if (!cluster.heterogeneous()) {
    g.nics.push_back(nic_name(cluster.tiers.back().nic));
    return g;
  }
  const int first = node_group_of_rank(cluster, g.ranks.front());
  const int last = node_group_of_rank(cluster, g.ranks.back());
  for (int k = first; k <= last; ++k) add_nic(g.nics, nic_name(cluster.groups[k].nic));
  if (first != last) add_nic(g.nics, nic_name(cluster.inter_group.nic));
  return g;
}

// A pipeline group (a chain of point-to-point links between stages).
PlacedGroup pipeline_group(const ClusterSpec& cluster, std::vector<int> ranks, bool wraps) {
  PlacedGroup g;
  g.ranks = std::move(ranks);
  for (std::size_t i = 0; i + 1 < g.ranks.size(); ++i)
    add_nic(g.nics, link_nic(cluster, g.ranks[i], g.ranks[i + 1]));
  if (wraps && g.ranks.size() > 2) add_nic(g.nics, link_nic(cluster, g.ranks.back(), g.ranks.front()));
  if (g.nics.empty()) g.nics.push_back(nic_name(NicKind::kIntraNode));
  return g;
}

}  // namespace

std::string node_group_name(const ClusterSpec& cluster, int rank) {
  if (!cluster.heterogeneous()) return "";
  return cluster.groups[node_group_of_rank(cluster, rank)].name;
}

Placement place_groups(const ClusterSpec& cluster, const ParallelConfig& c) {
  Placement p;
  // rank = t + tp * (x + cp * (d + dp * s))
  const auto rank = [&](int t, int x, int d, int s) { return t + c.tp * (x + c.cp * (d + c.dp * s)); };
  for (int s = 0; s < c.pp; ++s) {
    for (int d = 0; d < c.dp; ++d)
      for (int x = 0; x < c.cp; ++x) {
        std::vector<int> ranks;
        for (int t = 0; t < c.tp; ++t) ranks.push_back(rank(t, x, d, s));
        p.tp.push_back(collective_group(cluster, ranks));
      }
    for (int d = 0; d < c.dp; ++d)
      for (int t = 0; t < c.tp; ++t) {
        std::vector<int> ranks;
        for (int x = 0; x < c.cp; ++x) ranks.push_back(rank(t, x, d, s));
        p.cp.push_back(collective_group(cluster, ranks));
      }
    for (int t = 0; t < c.tp; ++t) {
      std::vector<int> ranks;
      for (int d = 0; d < c.dp; ++d)
        for (int x = 0; x < c.cp; ++x) ranks.push_back(rank(t, x, d, s));
      std::sort(ranks.begin(), ranks.end());
      p.dp.push_back(collective_group(cluster, ranks));
    }
  }
  for (int d = 0; d < c.dp; ++d)
    for (int x = 0; x < c.cp; ++x)
      for (int t = 0; t < c.tp; ++t) {
        std::vector<int> ranks;
        for (int s = 0; s < c.pp; ++s) ranks.push_back(rank(t, x, d, s));
        p.pp.push_back(pipeline_group(cluster, ranks, c.vp > 1));
      }
  return p;
}

bool collectives_inside_node_groups(const Placement& placement, const ClusterSpec& cluster) {
  const auto inside = [&](const PlacedGroup& g) {
    if (!cluster.heterogeneous()) return true;
    return node_group_of_rank(cluster, g.ranks.front()) == node_group_of_rank(cluster, g.ranks.back());
  };
  for (const auto& g : placement.tp)
    if (!inside(g)) return false;
  for (const auto& g : placement.cp)
    if (!inside(g)) return false;
  for (const auto& g : placement.dp)
    if (!inside(g)) return false;
  return true;
}

}  // namespace parplan
