// Depth-first enumeration of rule-abiding paths with a bounded heap: a
// branch stops once its partial round trip plus the cheapest possible rest
// cannot beat the worst path kept.
#include "solvers/skip_candidates.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "solvers/skip_partition_search.h"
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
  Enumerator(const SkipNetwork& network, const std::vector<std::vector<int>>& stages_nodes, int length,
             bool full, int keep_paths)
      : net(network),
        partition(stages_nodes),
        path_length(full ? static_cast<int>(stages_nodes.size()) : length),
        full_pipeline(full),
        keep(static_cast<std::size_t>(std::max(0, keep_paths))) {}

  const SkipNetwork& net;
  const std::vector<std::vector<int>>& partition;
  int path_length;
  bool full_pipeline;
  std::size_t keep;
  double min_task_s = std::numeric_limits<double>::infinity();
  std::vector<int> path, stages;
  std::vector<bool> seen;
  std::vector<SkipCandidate> heap;  // max-heap on round_trip_s while full
  // Counting mode (count_limit > 0): paths are counted, not stored, and the
  // enumeration stops at the limit: there may be billions of them.
  long long count_limit = 0;
  long long count = 0;
  // Polled every 4096 steps: an enumeration over hundreds of nodes per stage
  // can outlast the caller's time limit.
  double deadline_s = std::numeric_limits<double>::infinity();
  long long steps = 0;
  bool stopped = false;
  // Counting mode: only paths with a round trip up to this bound count.
  double count_bound_s = std::numeric_limits<double>::infinity();
  // Tie mode (tie_s finite): the path with a round trip within tie_tol_s of
  // tie_s, not in `chosen`, whose nodes carry the least `usage`.
  double tie_s = std::numeric_limits<double>::infinity();
  double tie_tol_s = 0;
  std::vector<int> usage;
  const std::vector<SkipCandidate>* chosen = nullptr;
  long long penalty = 0;
  long long best_penalty = std::numeric_limits<long long>::max();
  SkipCandidate best;

  bool stop() {
    if (!stopped && (++steps & 4095) == 0 && steady_now_s() > deadline_s) stopped = true;
    return stopped;
  }

  static bool worse(const SkipCandidate& a, const SkipCandidate& b) {
    return a.round_trip_s < b.round_trip_s;
  }

  /// A branch whose least round trip reaches this is cut.
  double bound_s() const {
    if (tie_s < std::numeric_limits<double>::infinity()) return tie_s + 2 * tie_tol_s;
    if (count_limit > 0) return count_bound_s + 2 * tie_tol_s;
    return keep != 0 && heap.size() == keep ? heap.front().round_trip_s
                                            : std::numeric_limits<double>::infinity();
  }

  bool in_chosen() const {
    for (const SkipCandidate& c : *chosen)
      if (c.path == path) return true;
    return false;
  }

  void emit(double partial_s) {
    const int src = path.front();
    const double total_s = partial_s + net.transfer(path.back(), src) + net.transfer(src, path.back());
    if (count_limit > 0) {
      if (total_s <= count_bound_s + tie_tol_s) stopped = ++count >= count_limit;
      return;
    }
    if (tie_s < std::numeric_limits<double>::infinity()) {
      if (std::abs(total_s - tie_s) <= tie_tol_s && penalty < best_penalty && !in_chosen()) {
        best_penalty = penalty;
        best = {path, stages, total_s};
      }
      return;
    }
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
        if (stop()) break;
        const int prev = path.back();
        const double step_s = partial_s + net.forward_s[node] * (1 + net.backward_factor) +
                              net.transfer(prev, node) + net.transfer(node, prev);
        if (step_s + rest_s - min_task_s >= bound_s()) continue;
        // Tie mode: usage only grows along a path.
        if (!usage.empty() && penalty + usage[node] >= best_penalty) continue;
        path.push_back(node);
        stages.push_back(s);
        if (!usage.empty()) penalty += usage[node];
        extend(step_s, advance ? s : frontier, swaps + (advance ? 0 : 1));
        if (!usage.empty()) penalty -= usage[node];
        path.pop_back();
        stages.pop_back();
      }
      seen[s] = false;
    }
  }
};

/// Runs the depth-first enumeration from `source`; `e` carries the mode.
void enumerate(Enumerator& e, int source) {
  for (double f : e.net.forward_s) e.min_task_s = std::min(e.min_task_s, f * (1 + e.net.backward_factor));
  e.seen.assign(e.partition.size(), false);
  e.seen[0] = true;
  e.path = {source};
  e.stages = {0};
  e.extend(e.net.forward_s[source] * (1 + e.net.backward_factor + e.net.loss_factor), 0, 0);
}

}  // namespace

std::vector<SkipCandidate> skip_candidates(const SkipNetwork& net,
                                           const std::vector<std::vector<int>>& partition, int source,
                                           int path_length, bool full_pipeline, int keep, double deadline_s,
                                           bool* stopped) {
  Enumerator e(net, partition, path_length, full_pipeline, keep);
  e.deadline_s = deadline_s;
  enumerate(e, source);
  if (stopped) *stopped = e.stopped;
  std::sort(e.heap.begin(), e.heap.end(), [](const SkipCandidate& a, const SkipCandidate& b) {
    if (a.round_trip_s != b.round_trip_s) return a.round_trip_s < b.round_trip_s;
    return a.path < b.path;
  });
  std::vector<SkipCandidate> kept = std::move(e.heap);
  if (keep < 1 || static_cast<int>(kept.size()) < keep || e.stopped) return kept;

  // More paths than `keep` may tie with the longest kept round trip (equal
  // links, equal nodes). Kept by path id they would all start through the
  // same few nodes, which would then take every micro-batch while their
  // twins idle. Instead, the tied slots go one at a time to the tied path
  // whose nodes the kept paths use least.
  const double cut_s = kept.back().round_trip_s;
  const double tol_s = 1e-9 * std::max(1.0, cut_s);
  Enumerator count(net, partition, path_length, full_pipeline, 0);
  count.count_limit = keep + 1;
  count.count_bound_s = cut_s;
  count.tie_tol_s = tol_s;
  count.deadline_s = deadline_s;
  enumerate(count, source);
  // (Reaching the limit stops the count too: only the count tells.)
  if (count.count <= keep) return kept;
  const std::vector<SkipCandidate> by_id = kept;
  std::vector<SkipCandidate> spread;
  std::vector<int> usage(net.nodes, 0);
  for (SkipCandidate& c : kept)
    if (c.round_trip_s < cut_s - tol_s) {
      for (std::size_t i = 1; i < c.path.size(); ++i) ++usage[c.path[i]];
      spread.push_back(std::move(c));
    }
  while (static_cast<int>(spread.size()) < keep) {
    Enumerator tie(net, partition, path_length, full_pipeline, 0);
    tie.tie_s = cut_s;
    tie.tie_tol_s = tol_s;
    tie.usage = usage;
    tie.usage[source] = 0;
    tie.chosen = &spread;
    tie.deadline_s = deadline_s;
    enumerate(tie, source);
    if (tie.best.path.empty()) break;
    for (std::size_t i = 1; i < tie.best.path.size(); ++i) ++usage[tie.best.path[i]];
    spread.push_back(std::move(tie.best));
    if (tie.stopped) break;
  }
  // Cut short by the deadline: the rest by path id.
  for (const SkipCandidate& c : by_id) {
    if (static_cast<int>(spread.size()) >= keep) break;
    if (std::none_of(spread.begin(), spread.end(), [&](const SkipCandidate& x) { return x.path == c.path; }))
      spread.push_back(c);
  }
  return spread;
}

long long skip_candidate_count(const SkipNetwork& net, const std::vector<std::vector<int>>& partition,
                               int source, int path_length, bool full_pipeline, long long limit) {
  if (limit < 1) return 0;
  Enumerator e(net, partition, path_length, full_pipeline, 0);
  e.count_limit = limit;
  enumerate(e, source);
  return e.count;
}

}  // namespace parplan
