// Depth-first enumeration of rule-abiding paths with a bounded heap: a
// branch stops once its partial round trip plus the cheapest possible rest
// cannot beat the worst path kept.
#include "solvers/skip_candidates.h"

#include <algorithm>
#include <limits>

#include "solvers/skip_path_rules.h"

namespace parplan {

double skip_round_trip_s(const SkipNetwork& net, const std::vector<int>& path) {
  const int src = path.front();
  double total_s = net.forward_s[src] * net.loss_factor;
  for (std::size_t i = 0; i < path.size(); ++i) {
    total_s += net.forward_s[path[i]] * (1 + net.backward_factor);
    const int next = i + 1 < path.size() ? path[i + 1] : src;
    total_s += net.transfer(path[i], next) + net.transfer(next, path[i]);
  }
  return total_s;
}

namespace {

struct Enumerator {
  const SkipNetwork& net;
  const std::vector<std::vector<int>>& partition;
  int path_length;
  bool full_pipeline;
  std::size_t keep;
  double min_task_s;
  std::vector<int> path, stages;
  std::vector<bool> seen;
  std::vector<SkipCandidate> heap;  // max-heap on round_trip_s while full

  static bool worse(const SkipCandidate& a, const SkipCandidate& b) {
    return a.round_trip_s < b.round_trip_s;
  }

  double bound_s() const {
    return keep != 0 && heap.size() == keep ? heap.front().round_trip_s
                                            : std::numeric_limits<double>::infinity();
  }

  void emit(double partial_s) {
    const int src = path.front();
    const double total_s = partial_s + net.transfer(path.back(), src) + net.transfer(src, path.back());
    if (keep == 0) {
      heap.push_back({path, stages, total_s});
      return;
    }
    if (heap.size() < keep) {
      heap.push_back({path, stages, total_s});
      std::push_heap(heap.begin(), heap.end(), worse);
    } else if (total_s < heap.front().round_trip_s) {
      std::pop_heap(heap.begin(), heap.end(), worse);
      heap.back() = {path, stages, total_s};
      std::push_heap(heap.begin(), heap.end(), worse);
    }
  }

  void extend(double partial_s, int frontier, int swaps) {
    const int depth = static_cast<int>(path.size());
    if (depth == path_length) {
      emit(partial_s);
      return;
    }
    const double rest_s = (path_length - depth) * min_task_s;
    const int num_stages = static_cast<int>(partition.size());
    for (int s = 1; s < num_stages; ++s) {
      if (seen[s]) continue;
      const bool advance = full_pipeline ? s == frontier + 1 : s > frontier;
      const bool swap =
          !full_pipeline && s == frontier - 1 && stages.back() == frontier && swaps < kSkipMaxSwaps;
      if (!advance && !swap) continue;
      seen[s] = true;
      for (int node : partition[s]) {
        const int prev = path.back();
        const double step_s = partial_s + net.forward_s[node] * (1 + net.backward_factor) +
                              net.transfer(prev, node) + net.transfer(node, prev);
        if (step_s + rest_s - min_task_s >= bound_s()) continue;
        path.push_back(node);
        stages.push_back(s);
        extend(step_s, advance ? s : frontier, swaps + (advance ? 0 : 1));
        path.pop_back();
        stages.pop_back();
      }
      seen[s] = false;
    }
  }
};

}  // namespace

std::vector<SkipCandidate> skip_candidates(const SkipNetwork& net,
                                           const std::vector<std::vector<int>>& partition, int source,
                                           int path_length, bool full_pipeline, int keep) {
  Enumerator e{net,
               partition,
               full_pipeline ? static_cast<int>(partition.size()) : path_length,
               full_pipeline,
               static_cast<std::size_t>(std::max(0, keep)),
               std::numeric_limits<double>::infinity(),
               {},
               {},
               {},
               {}};
  for (double f : net.forward_s) e.min_task_s = std::min(e.min_task_s, f * (1 + net.backward_factor));
  e.seen.assign(partition.size(), false);
  e.seen[0] = true;
  e.path = {source};
  e.stages = {0};
  e.extend(net.forward_s[source] * (1 + net.backward_factor + net.loss_factor), 0, 0);
  std::sort(e.heap.begin(), e.heap.end(), [](const SkipCandidate& a, const SkipCandidate& b) {
    if (a.round_trip_s != b.round_trip_s) return a.round_trip_s < b.round_trip_s;
    return a.path < b.path;
  });
  return std::move(e.heap);
}

}  // namespace parplan
