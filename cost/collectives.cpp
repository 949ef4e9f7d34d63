#include "cost/collectives.h"

#include <algorithm>
#include <numeric>

namespace parplan {

namespace {
// How many ranks of each group one domain of `domain` ranks holds. Groups of
// `size` ranks `stride` apart tile a domain when one count divides the
// other; otherwise some group straddles two domains (tp 5 on 8-GPU nodes:
// ranks 5..9) and every group runs at that one's pace, so only the ranks
// every domain holds of each group count (the common divisor; 1 at worst).
// `world` (the job's ranks; 0 = unknown): groups that all lie below the
// first boundary they would straddle never straddle.
int ranks_inside(int size, int stride, int domain, int world) {
  if (stride >= domain) return 1;
  const int per = std::max(1, domain / stride);
  if (per % size == 0 || size % per == 0 || (world > 0 && world <= domain)) return std::min(size, per);
  if (world > 0 && stride == 1) {
    for (long long boundary = domain; boundary < world; boundary += domain)
      if (boundary % size != 0) return std::gcd(size, per);
    return std::min(size, per);
  }
  return std::gcd(size, per);
}
}  // namespace

GroupSpan group_span(const ClusterSpec& cluster, int size, int stride, int world) {
  GroupSpan span;
  const int tiers = std::min<int>(static_cast<int>(cluster.tiers.size()), GroupSpan::kMaxTiers);
  span.tiers = tiers;
  for (int i = 0; i < tiers; ++i) {
    const int domain = cluster.tiers[i].ranks;
    int inside = size;
    if (domain > 0 && i + 1 < tiers) inside = ranks_inside(size, stride, domain, world);
    span.members[i] = i > 0 ? std::max(inside, span.members[i - 1]) : inside;
  }
  if (tiers > 0) span.members[tiers - 1] = size;
  return span;
}

int node_group_of_rank(const ClusterSpec& cluster, int rank) {
  const int groups = static_cast<int>(cluster.groups.size());
  if (groups == 0) return 0;
  const int node = rank / std::max(1, cluster.ranks_per_node);
  int first = 0;
  for (int g = 0; g < groups; ++g) {
    first += cluster.groups[g].nodes;
    if (node < first) return g;
  }
  return groups - 1;
}

GroupSpan group_span_at(const ClusterSpec& cluster, int size, int stride, int first_rank, int world) {
  GroupSpan span = group_span(cluster, size, stride, world);
  if (!cluster.heterogeneous() || size <= 1) return span;
  const int last_rank = first_rank + (size - 1) * stride;
  const int a = node_group_of_rank(cluster, first_rank);
  const int b = node_group_of_rank(cluster, last_rank);
  span.outer = a == b ? &cluster.groups[a].fabric : &cluster.inter_group;
  return span;
}

namespace {
const NetworkTier& span_tier(const ClusterSpec& cluster, const GroupSpan& span, int i) {
  return (span.outer != nullptr && i == span.tiers - 1) ? *span.outer : cluster.tiers[i];
}

// Sum over tiers of factor * (r-1)/r * share / bandwidth, where r is how many
// inner domains the tier joins and share the bytes left after the inner tiers.
double hierarchical_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes, double factor,
                      TierTraffic* traffic, double repeat) {
  double time_s = 0;
  int inner = 1;
  for (int i = 0; i < span.tiers; ++i) {
    const int outer = span.members[i];
    if (outer > inner) {
      const double joined = static_cast<double>(outer) / inner;
      const NetworkTier& tier = span_tier(cluster, span, i);
      const double share = bytes / inner;
      const double moved = factor * (joined - 1.0) / joined * share;
      const double tier_s = moved / tier.effective_bytes_per_s() + factor * (joined - 1.0) * tier.latency_s;
      time_s += tier_s;
      if (traffic != nullptr) {
        traffic->bytes[i] += repeat * moved;
        traffic->seconds[i] += repeat * tier_s;
      }
    }
    inner = outer;
  }
  return time_s;
}
}  // namespace

double ring_latency_s(const ClusterSpec& cluster, const GroupSpan& span) {
  if (span.tiers == 0) return 0;
  const int size = span.members[span.tiers - 1];
  if (size <= 1) return 0;
  // The node tier: the one whose domain is a node (or the innermost).
  int node = 0;
  for (int i = 0; i < span.tiers; ++i)
    if (cluster.tiers[i].ranks == cluster.ranks_per_node) node = i;
  const int per_node = span.members[node];
  const int nodes = size / std::max(1, per_node);
  const int inter_steps = nodes - 1;
  const int intra_steps = size - 1 - inter_steps;
  const double intra_latency = cluster.tiers[node].latency_s;
  const double inter_latency = span_tier(cluster, span, span.tiers - 1).latency_s;
  return cluster.collective_base_latency_s + intra_steps * intra_latency + inter_steps * inter_latency;
}

double bucketed_all_gather_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes, double calls,
                             TierTraffic* traffic, double repeat) {
  if (!cluster.ring_collectives) return all_gather_s(cluster, span, bytes, traffic, repeat);
  // Bandwidth: the same bytes per tier as the hierarchical algorithm (a ring
  // ordered node by node crosses each node boundary once per channel);
  // latency: every call walks the whole ring.
  TierTraffic local;
  const double with_latency = hierarchical_s(cluster, span, bytes, 1.0, &local, 1.0);
  double latency_once = 0;
  for (int i = 0; i < span.tiers; ++i) {
    const int inner = i > 0 ? span.members[i - 1] : 1;
    if (span.members[i] > inner)
      latency_once +=
          (static_cast<double>(span.members[i]) / inner - 1.0) * span_tier(cluster, span, i).latency_s;
  }
  const double bandwidth_s = with_latency - latency_once;
  const double latency_s = std::max(1.0, calls) * ring_latency_s(cluster, span);
  if (traffic != nullptr) {
    int outer = 0;
    for (int i = 0; i < span.tiers; ++i) {
      const int inner = i > 0 ? span.members[i - 1] : 1;
      if (span.members[i] > inner) outer = i;
      traffic->bytes[i] += repeat * local.bytes[i];
      const double tier_latency =
          span.members[i] > inner
              ? (static_cast<double>(span.members[i]) / inner - 1.0) * span_tier(cluster, span, i).latency_s
              : 0.0;
      traffic->seconds[i] += repeat * (local.seconds[i] - tier_latency);
    }
    traffic->seconds[outer] += repeat * latency_s;
  }
  return bandwidth_s + latency_s;
}

double all_reduce_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes, TierTraffic* traffic,
                    double repeat) {
  return hierarchical_s(cluster, span, bytes, 2.0, traffic, repeat);
}

double all_gather_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes, TierTraffic* traffic,
                    double repeat) {
  return hierarchical_s(cluster, span, bytes, 1.0, traffic, repeat);
}

double all_to_all_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes) {
  if (span.tiers == 0) return 0;
  const double size = span.members[span.tiers - 1];
  double time_s = 0;
  int inner = 1;
  for (int i = 0; i < span.tiers; ++i) {
    const int outer = span.members[i];
    if (outer > inner) {
      const NetworkTier& tier = span_tier(cluster, span, i);
      // The destinations reached over this tier and no faster one.
      const double fraction = (outer - inner) / size;
      time_s += bytes * fraction / tier.effective_bytes_per_s() + (outer / inner - 1) * tier.latency_s;
    }
    inner = outer;
  }
  return time_s;
}

const NetworkTier& tier_for_stride(const ClusterSpec& cluster, int stride) {
  const int tiers = static_cast<int>(cluster.tiers.size());
  for (int i = 0; i + 1 < tiers; ++i) {
    if (cluster.tiers[i].ranks > stride) return cluster.tiers[i];
  }
  return cluster.tiers.back();
}

double point_to_point_s(const ClusterSpec& cluster, int stride, double bytes) {
  const NetworkTier& tier = tier_for_stride(cluster, stride);
  return bytes / tier.effective_bytes_per_s() + tier.latency_s;
}

const NetworkTier& tier_between(const ClusterSpec& cluster, int a, int b) {
  const int tiers = static_cast<int>(cluster.tiers.size());
  for (int i = 0; i + 1 < tiers; ++i) {
    const int domain = cluster.tiers[i].ranks;
    if (domain > 0 && a / domain == b / domain) return cluster.tiers[i];
  }
  if (cluster.heterogeneous()) {
    const int ga = node_group_of_rank(cluster, a);
    const int gb = node_group_of_rank(cluster, b);
    return ga == gb ? cluster.groups[ga].fabric : cluster.inter_group;
  }
  return cluster.tiers.back();
}

double point_to_point_between_s(const ClusterSpec& cluster, int a, int b, double bytes) {
  const NetworkTier& tier = tier_between(cluster, a, b);
  return bytes / tier.effective_bytes_per_s() + tier.latency_s;
}

}  // namespace parplan
