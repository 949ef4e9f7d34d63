// Test helper: DeepSeek's EPLB algorithm (deepseek-ai/EPLB, eplb.py:
// balanced_packing, replicate_experts, rebalance_experts_hierarchical and the
// global policy = hierarchical with one group and one node), written here
// from its published description for one layer, and the greedy balancer.
#pragma once

#include <algorithm>
#include <numeric>
#include <vector>

namespace parplan::test {

/// n items into `packs` packs of n / packs items each: heaviest first onto
/// the lightest pack that still has room (EPLB balanced_packing).
inline std::vector<int> eplb_balanced_packing(const std::vector<double>& weight, int packs,
                                              std::vector<int>& rank) {
  const int n = static_cast<int>(weight.size());
  const int per = n / packs;
  std::vector<int> pack(n);
  rank.assign(n, 0);
  if (per == 1) {
    std::iota(pack.begin(), pack.end(), 0);
    return pack;
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return weight[a] > weight[b]; });
  std::vector<double> sum(packs, 0);
  std::vector<int> items(packs, 0);
  for (int i : order) {
    int best = -1;
    for (int p = 0; p < packs; ++p) {
      if (items[p] < per && (best < 0 || sum[p] < sum[best])) best = p;
    }
    pack[i] = best;
    rank[i] = items[best]++;
    sum[best] += weight[i];
  }
  return pack;
}

/// EPLB replicate_experts: phy2log of num_phy physical experts (the first
/// num_log are the identity), each extra one to argmax(weight / count).
inline std::vector<int> eplb_replicate(const std::vector<double>& weight, int num_phy, std::vector<int>& rank,
                                       std::vector<int>& count) {
  const int num_log = static_cast<int>(weight.size());
  std::vector<int> phy2log(num_phy);
  std::iota(phy2log.begin(), phy2log.begin() + num_log, 0);
  rank.assign(num_phy, 0);
  count.assign(num_log, 1);
  for (int i = num_log; i < num_phy; ++i) {
    int best = 0;
    for (int e = 1; e < num_log; ++e) {
      if (weight[e] / count[e] > weight[best] / count[best]) best = e;
    }
    phy2log[i] = best;
    rank[i] = count[best]++;
  }
  return phy2log;
}

/// EPLB rebalance_experts_hierarchical for one layer: phy2log (physical
/// expert p on GPU p / (num_phy / gpus)).
inline std::vector<int> eplb_hierarchical(const std::vector<double>& weight, int num_phy, int groups,
                                          int nodes, int gpus) {
  const int num_log = static_cast<int>(weight.size());
  const int group_size = num_log / groups;
  const int groups_per_node = groups / nodes;
  const int phy_per_gpu = num_phy / gpus;
  // Step 1: groups onto nodes; mlog = node-major logical id.
  std::vector<double> group_tokens(groups, 0);
  for (int e = 0; e < num_log; ++e) group_tokens[e / group_size] += weight[e];
  std::vector<int> group_rank;
  const std::vector<int> group_pack = eplb_balanced_packing(group_tokens, nodes, group_rank);
  std::vector<int> mlog2log(num_log);
  for (int e = 0; e < num_log; ++e) {
    const int g = e / group_size;
    const int mlog = (group_pack[g] * groups_per_node + group_rank[g]) * group_size + e % group_size;
    mlog2log[mlog] = e;
  }
  // Steps 2 and 3 per node: replicate inside the node, pack onto its GPUs.
  const int log_per_node = num_log / nodes;
  const int phy_per_node = num_phy / nodes;
  std::vector<int> phy2log(num_phy);
  for (int n = 0; n < nodes; ++n) {
    std::vector<double> tokens(log_per_node);
    for (int i = 0; i < log_per_node; ++i) tokens[i] = weight[mlog2log[n * log_per_node + i]];
    std::vector<int> phy_rank, count;
    const std::vector<int> phy2mlog = eplb_replicate(tokens, phy_per_node, phy_rank, count);
    std::vector<double> per_phy(phy_per_node);
    for (int p = 0; p < phy_per_node; ++p) per_phy[p] = tokens[phy2mlog[p]] / count[phy2mlog[p]];
    std::vector<int> rank_in_pack;
    const std::vector<int> pack = eplb_balanced_packing(per_phy, gpus / nodes, rank_in_pack);
    for (int p = 0; p < phy_per_node; ++p) {
      const int slot = pack[p] * phy_per_gpu + rank_in_pack[p];
      phy2log[n * phy_per_node + slot] = mlog2log[n * log_per_node + phy2mlog[p]];
    }
  }
  return phy2log;
}

/// EPLB's global policy: the hierarchical one with one group and one node.
inline std::vector<int> eplb_global(const std::vector<double>& weight, int num_phy, int gpus) {
  return eplb_hierarchical(weight, num_phy, 1, 1, gpus);
}

/// Busiest GPU of a phy2log (tokens split evenly over an expert's replicas;
/// two replicas on one GPU both count there).
inline double phy2log_max_load(const std::vector<double>& weight, const std::vector<int>& phy2log, int gpus) {
  std::vector<int> count(weight.size(), 0);
  for (int e : phy2log) ++count[e];
  const int per = static_cast<int>(phy2log.size()) / gpus;
  double worst = 0;
  for (int g = 0; g < gpus; ++g) {
    double load = 0;
    for (int s = 0; s < per; ++s) load += weight[phy2log[g * per + s]] / count[phy2log[g * per + s]];
    worst = std::max(worst, load);
  }
  return worst;
}

/// True when some GPU holds two replicas of one expert.
inline bool phy2log_has_duplicate(const std::vector<int>& phy2log, int gpus) {
  const int per = static_cast<int>(phy2log.size()) / gpus;
  for (int g = 0; g < gpus; ++g) {
    std::vector<int> slots(phy2log.begin() + g * per, phy2log.begin() + (g + 1) * per);
    std::sort(slots.begin(), slots.end());
    if (std::adjacent_find(slots.begin(), slots.end()) != slots.end()) return true;
  }
  return false;
}

}  // namespace parplan::test
