#include "cost/collectives.h"

#include <algorithm>

namespace parplan {

GroupSpan group_span(const ClusterSpec& cluster, int size, int stride) {
  GroupSpan span;
  const int tiers = std::min<int>(static_cast<int>(cluster.tiers.size()), GroupSpan::kMaxTiers);
  span.tiers = tiers;
  for (int i = 0; i < tiers; ++i) {
    const int domain = cluster.tiers[i].ranks;
    int inside = size;
    if (domain > 0 && i + 1 < tiers) {
      inside = stride >= domain ? 1 : std::min(size, std::max(1, domain / stride));
    }
    span.members[i] = i > 0 ? std::max(inside, span.members[i - 1]) : inside;
  }
  if (tiers > 0) span.members[tiers - 1] = size;
  return span;
}

namespace {
// Sum over tiers of factor * (r-1)/r * share / bandwidth, where r is how many
// inner domains the tier joins and share the bytes left after the inner tiers.
double hierarchical_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes, double factor) {
  double time_s = 0;
  int inner = 1;
  for (int i = 0; i < span.tiers; ++i) {
    const int outer = span.members[i];
    if (outer > inner) {
      const double joined = static_cast<double>(outer) / inner;
      const NetworkTier& tier = cluster.tiers[i];
      const double share = bytes / inner;
      time_s += factor * (joined - 1.0) / joined * share / tier.effective_bytes_per_s() +
                factor * (joined - 1.0) * tier.latency_s;
    }
    inner = outer;
  }
  return time_s;
}
}  // namespace

double all_reduce_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes) {
  return hierarchical_s(cluster, span, bytes, 2.0);
}

double all_gather_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes) {
  return hierarchical_s(cluster, span, bytes, 1.0);
}

double all_to_all_s(const ClusterSpec& cluster, const GroupSpan& span, double bytes) {
  if (span.tiers == 0) return 0;
  const double size = span.members[span.tiers - 1];
  double time_s = 0;
  int inner = 1;
  for (int i = 0; i < span.tiers; ++i) {
    const int outer = span.members[i];
    if (outer > inner) {
      const NetworkTier& tier = cluster.tiers[i];
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

}  // namespace parplan
