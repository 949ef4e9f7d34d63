#include "solvers/expert_placement_count_bound.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

namespace parplan {

namespace {

// Count vectors with `extra` replicas beyond one each over `experts`
// experts, each at most cap - 1 extra; saturates at limit + 1.
long count_vectors(int experts, int extra, int cap, long limit) {
  std::vector<long> ways(extra + 1, 0);
  ways[0] = 1;
  for (int e = 0; e < experts; ++e) {
    std::vector<long> next(extra + 1, 0);
    for (int used = 0; used <= extra; ++used) {
      if (ways[used] == 0) continue;
      for (int k = 0; k <= cap - 1 && used + k <= extra; ++k)
        next[used + k] = std::min(limit + 1, next[used + k] + ways[used]);
    }
    ways = std::move(next);
  }
  return ways[extra];
}

// The bound of one count vector's sorted replica loads (descending).
double dealt_bound(const std::vector<double>& x, int gpus, int slots, double mean) {
  const int p = static_cast<int>(x.size());
  // suffix[j]: sum of x[j..p-1] (the smallest p - j replicas).
  static thread_local std::vector<double> suffix;
  suffix.assign(p + 1, 0.0);
  for (int j = p - 1; j >= 0; --j) suffix[j] = suffix[j + 1] + x[j];
  // Sum of the `n` smallest replicas outside positions [from, to).
  const auto smallest_outside = [&](int n, int from, int to) {
    double sum = 0;
    for (int j = p - 1; j >= 0 && n > 0; --j) {
      if (j >= from && j < to) continue;
      sum += x[j];
      --n;
    }
    return sum;
  };
  double bound = mean;
  for (int k = 1; k <= slots; ++k) {
    const int m = (k - 1) * gpus + 1;  // top m replicas: one GPU holds k of them
    if (m > p) break;
    double held = 0;
    for (int j = m - k; j < m; ++j) held += x[j];
    bound = std::max(bound, held + smallest_outside(slots - k, m - k, m));
  }
  if (slots == 2) {
    for (int i = 1; i <= gpus; ++i) bound = std::max(bound, x[i - 1] + x[p - i]);
  } else if (slots >= 3) {
    for (int i = 1; i <= gpus; ++i) {
      const int partners = i * (slots - 1);
      if (i + partners > p) break;
      const double apart = x[i - 1] + (suffix[p - partners] - suffix[p]) / i;
      const double shared = i >= 2 ? x[i - 2] + x[i - 1] + smallest_outside(slots - 2, i - 2, i) : apart;
      bound = std::max(bound, std::min(apart, shared));
    }
  }
  return bound;
}

}  // namespace

double replica_count_bound(const std::vector<double>& loads, int gpus, int redundant, int cap,
                           long max_vectors) {
  const int experts = static_cast<int>(loads.size());
  const int physical = experts + redundant;
  if (experts == 0 || gpus <= 0 || physical % gpus != 0 || cap < 1) return 0;
  // At least C(experts, redundant) vectors give single extra replicas
  // (cap >= 2): a cheap refusal of the large layers before counting.
  if (cap >= 2 && redundant <= experts &&
      std::lgamma(experts + 1.0) - std::lgamma(redundant + 1.0) - std::lgamma(experts - redundant + 1.0) >
          std::log(static_cast<double>(max_vectors)))
    return 0;
  if (count_vectors(experts, redundant, cap, max_vectors) > max_vectors) return 0;
  const int slots = physical / gpus;
  const double mean = std::accumulate(loads.begin(), loads.end(), 0.0) / gpus;
  std::vector<int> count(experts, 1);
  std::vector<double> x;
  x.reserve(physical);
  double best = std::numeric_limits<double>::infinity();
  const std::function<void(int, int)> assign = [&](int e, int left) {
    if (e == experts - 1) {
      if (left > cap - 1) return;
      count[e] = 1 + left;
      x.clear();
      for (int i = 0; i < experts; ++i) x.insert(x.end(), count[i], loads[i] / count[i]);
      std::sort(x.begin(), x.end(), std::greater<>());
      best = std::min(best, dealt_bound(x, gpus, slots, mean));
      return;
    }
    for (int k = 0; k <= std::min(cap - 1, left); ++k) {
      count[e] = 1 + k;
      assign(e + 1, left - k);
    }
  };
  assign(0, redundant);
  return std::isfinite(best) ? best : 0;
}

}  // namespace parplan
