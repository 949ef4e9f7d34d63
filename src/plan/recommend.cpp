#include "src/plan/recommend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

namespace parplan {

namespace {
bool crosses(int size, long long stride, int ranks_per_node) {
  return size > 1 && stride * size > ranks_per_node;
}

bool lossy(const ParallelConfig& c) { return c.qwz || c.qgz; }

double free_fraction(const CostReport& cost) {
  const MemoryBreakdown& m = cost.memory;
  return m.capacity_bytes > 0 ? 1.0 - m.peak_bytes / m.capacity_bytes : 0.0;
}

// Lexicographic preference, smaller is better: lossy last, then free memory
// in whole percent (more first), then fewer node-crossing groups, then time.
auto preference(const ClusterSpec& cluster, const RankedConfig& r) {
  return std::make_tuple(lossy(r.config) ? 1 : 0, -std::floor(100.0 * free_fraction(r.cost)),
                         groups_crossing_nodes(cluster, r.config), r.cost.time.step_s);
}
}  // namespace

int groups_crossing_nodes(const ClusterSpec& cluster, const ParallelConfig& c) {
  const int node = std::max(1, cluster.ranks_per_node);
  const long long tp = c.tp, cp = c.cp, dp = c.dp;
  int count = 0;
  count += crosses(c.tp, 1, node) ? 1 : 0;
  count += crosses(c.cp, tp, node) ? 1 : 0;
  count += crosses(c.dp, tp * cp, node) ? 1 : 0;
  count += crosses(c.pp, tp * cp * dp, node) ? 1 : 0;
  count += crosses(c.ep, c.etp, node) ? 1 : 0;
  return count;
}

Recommendation recommend_plan(const ClusterSpec& cluster, const std::vector<RankedConfig>& ranked) {
  Recommendation out;
  if (cluster.calibration.calibrated())
    out.band = std::min(kMaxRecommendBand, cluster.calibration.mean_step_error);
  if (ranked.empty()) return out;
  const double limit_s = ranked.front().cost.time.step_s * (1.0 + out.band);
  for (std::size_t i = 1; i < ranked.size(); ++i) {
    if (ranked[i].cost.time.step_s > limit_s) continue;
    if (preference(cluster, ranked[i]) < preference(cluster, ranked[static_cast<std::size_t>(out.index)]))
      out.index = static_cast<int>(i);
  }
  if (out.index == 0) return out;
  const RankedConfig& best = ranked.front();
  const RankedConfig& pick = ranked[static_cast<std::size_t>(out.index)];
  char text[320];
  const double slower = 100.0 * (pick.cost.time.step_s / best.cost.time.step_s - 1.0);
  std::string why;
  if (lossy(best.config) && !lossy(pick.config)) why = "exact collectives instead of quantized ones";
  const double best_free = 100.0 * free_fraction(best.cost), pick_free = 100.0 * free_fraction(pick.cost);
  if (std::floor(pick_free) > std::floor(best_free)) {
    char part[96];
    std::snprintf(part, sizeof part, "%.1f %% of memory free instead of %.1f %%", pick_free, best_free);
    why += (why.empty() ? "" : ", ") + std::string(part);
  }
  const int best_groups = groups_crossing_nodes(cluster, best.config);
  const int pick_groups = groups_crossing_nodes(cluster, pick.config);
  if (pick_groups < best_groups) {
    char part[96];
    std::snprintf(part, sizeof part, "%d group kind%s crossing nodes instead of %d", pick_groups,
                  pick_groups == 1 ? "" : "s", best_groups);
    why += (why.empty() ? "" : ", ") + std::string(part);
  }
  std::snprintf(text, sizeof text,
                "the recommended plan differs from the optimum: predicted %.1f %% slower (within the %.1f %% "
                "error band) with %s",
                slower, 100.0 * out.band, why.empty() ? "the same trade-offs" : why.c_str());
  out.reason = text;
  return out;
}

}  // namespace parplan
