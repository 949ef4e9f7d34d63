// Collective and point-to-point times on a tiered network. A group is `size`
// ranks spaced `stride` ranks apart in the global rank order (Megatron's
// tp-cp-dp-pp order makes tp stride 1, cp stride tp, dp stride tp*cp, pp
// stride tp*cp*dp); its placement decides which tiers it crosses.
#pragma once

#include <array>

#include "cost/cost_report.h"
#include "cost/spec/cluster_spec.h"

namespace parplan {

/// How a group spreads over the tiers: members[i] = group ranks inside one
/// domain of tier i (non-decreasing, last = size).
struct GroupSpan {
  static constexpr int kMaxTiers = TierTraffic::kMaxTiers;
  std::array<int, kMaxTiers> members{};
  int tiers = 0;
  /// Heterogeneous clusters: the tier used in place of the outermost one
  /// (the fabric of the one node group the group lies in, or the link
  /// between groups when it spans several); nullptr = the cluster's own.
  const NetworkTier* outer = nullptr;
};

/// `world`: the job's ranks (0 = unknown), which tells whether a group whose
/// size does not tile a node ever straddles two (then every such group is
/// costed as the straddling one).
GroupSpan group_span(const ClusterSpec& cluster, int size, int stride, int world = 0);
/// group_span for the group whose first rank is `first_rank`: on a
/// heterogeneous cluster it also picks the outer fabric from the node groups
/// the group touches (rank order is group by group, as the profile lists them).
GroupSpan group_span_at(const ClusterSpec& cluster, int size, int stride, int first_rank, int world = 0);

/// Index of the node group holding `rank` (heterogeneous clusters; 0 when
/// the cluster has no groups; the last group for ranks beyond the profile).
int node_group_of_rank(const ClusterSpec& cluster, int rank);
/// The tier that carries traffic between ranks `a` and `b`: the innermost
/// tier whose domain holds both, with the node groups' fabrics and the link
/// between groups on a heterogeneous cluster.
const NetworkTier& tier_between(const ClusterSpec& cluster, int a, int b);

/// Hierarchical ring all-reduce of `bytes` (reduce-scatter inside each tier,
/// then across the next, all-gather back): each tier moves the share that is
/// left after the tiers inside it (formulas.md, "Collectives").
/// With `traffic`, adds `repeat` times the bytes and seconds per tier to it.
double all_reduce_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes,
                    TierTraffic* traffic = nullptr, double repeat = 1.0);
/// All-gather or reduce-scatter; `bytes` is the full (gathered) size.
double all_gather_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes,
                    TierTraffic* traffic = nullptr, double repeat = 1.0);
/// An all-gather or reduce-scatter issued as `calls` collectives of
/// bytes / calls each (ZeRO's parameter and gradient buckets). With the
/// cluster's hierarchical model this is all_gather_s (latency paid once,
/// as calibrated); with ring_collectives every call pays the ring latency.
double bucketed_all_gather_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes, double calls,
                             TierTraffic* traffic = nullptr, double repeat = 1.0);
/// Latency of one ring all-gather / reduce-scatter over the group (RCCL's
/// tuning model: base + intra-node steps x intra latency + inter-node steps x
/// network latency).
double ring_latency_s(const ClusterSpec& cluster, const GroupSpan& span);

/// All-to-all where each rank holds `bytes` and sends (n-1)/n of it away.
double all_to_all_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes);
/// One message of `bytes` between ranks `stride` apart.
double point_to_point_s(const ClusterSpec& cluster, int stride, double bytes);
/// One message of `bytes` between ranks `a` and `b` (placement-aware).
double point_to_point_between_s(const ClusterSpec& cluster, int a, int b, double bytes);
/// The tier a message between ranks `stride` apart crosses.
const NetworkTier& tier_for_stride(const ClusterSpec& cluster, int stride);

}  // namespace parplan
