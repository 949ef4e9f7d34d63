// Collective and point-to-point times on a tiered network. A group is `size`
// ranks spaced `stride` ranks apart in the global rank order (Megatron's
// tp-cp-dp-pp order makes tp stride 1, cp stride tp, dp stride tp*cp, pp
// stride tp*cp*dp); its placement decides which tiers it crosses.
#pragma once

#include <array>

#include "cost/spec/cluster_spec.h"

namespace parplan {

/// How a group spreads over the tiers: members[i] = group ranks inside one
/// domain of tier i (non-decreasing, last = size).
struct GroupSpan {
  static constexpr int kMaxTiers = 6;
  std::array<int, kMaxTiers> members{};
  int tiers = 0;
};

GroupSpan group_span(const ClusterSpec& cluster, int size, int stride);

/// Hierarchical ring all-reduce of `bytes` (reduce-scatter inside each tier,
/// then across the next, all-gather back): each tier moves the share that is
/// left after the tiers inside it (formulas.md, "Collectives").
double all_reduce_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes);
/// All-gather or reduce-scatter; `bytes` is the full (gathered) size.
double all_gather_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes);
/// All-to-all where each rank holds `bytes` and sends (n-1)/n of it away.
double all_to_all_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes);
/// One message of `bytes` between ranks `stride` apart.
double point_to_point_s(const ClusterSpec& cluster, int stride, double bytes);
/// The tier a message between ranks `stride` apart crosses.
const NetworkTier& tier_for_stride(const ClusterSpec& cluster, int stride);

}  // namespace parplan
