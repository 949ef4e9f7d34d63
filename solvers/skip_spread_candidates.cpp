// Load-aware candidate paths: a shortest-path search over the stage
// sequences the rules allow (sequences sharing a prefix share its work),
// each stage cut to the nodes nearest the source, with a penalty on nodes
// that earlier picks already use.
#include "solvers/skip_spread_candidates.h"

#include <algorithm>
#include <limits>

#include "solvers/skip_partition_search.h"
#include "solvers/skip_path_rules.h"

namespace parplan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Seconds of penalty per micro-batch already sent through a node, as a share
// of its task time: sharing a node costs a wait only when two micro-batches
// meet there, so a little under one task.
constexpr double kLoadPenalty = 0.5;

class Search {
 public:
  /// nodes_per_stage: stages are cut to this many nodes nearest the source.
  Search(const SkipNetwork& network, const std::vector<std::vector<int>>& partition, int path_length,
         bool full, int nodes_per_stage, double deadline_s)
      : net_(network),
        partition_(partition),
        length_(full ? static_cast<int>(partition.size()) : path_length),
        full_(full),
        nodes_per_stage_(nodes_per_stage),
        deadline_s_(deadline_s),
        near_(partition.size()),
        cost_s_(length_),
        from_(length_),
        seq_(length_),
        seen_(partition.size(), false) {
    min_task_s_ = kInf;
    for (double f : net_.forward_s) min_task_s_ = std::min(min_task_s_, f * (1 + net_.backward_factor));
  }

  /// The path from `source` of least round trip plus penalty_s of its nodes
  /// (empty when none, or past the deadline). `rotation` breaks ties between
  /// nodes differently per source.
  SkipCandidate best(int source, int rotation, const std::vector<double>& penalty_s) {
    source_ = source;
    penalty_s_ = &penalty_s;
    for (std::size_t s = 1; s < partition_.size(); ++s) pick_near(static_cast<int>(s), rotation);
    best_s_ = kInf;
    found_ = {};
    near_[0] = {source_};
    cost_s_[0] = {net_.forward_s[source_] * (1 + net_.backward_factor + net_.loss_factor)};
    seq_[0] = 0;
    std::fill(seen_.begin(), seen_.end(), false);
    seen_[0] = true;
    stopped_ = false;
    extend(1, 0, 0);
    if (stopped_) found_ = {};
    return found_;
  }

 private:
  double both_ways_s(int a, int b) const { return net_.transfer(a, b) + net_.transfer(b, a); }

  /// Stage s's kSpreadNodesPerStage nodes of least round trip from the source
  /// plus penalty; ties rotate with the source so that sources at one site
  /// start from different nodes.
  void pick_near(int s, int rotation) {
    const std::vector<int>& nodes = partition_[s];
    const int n = static_cast<int>(nodes.size());
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    const auto key = [&](int i) { return both_ways_s(source_, nodes[i]) + (*penalty_s_)[nodes[i]]; };
    const auto less = [&](int a, int b) {
      const double ka = key(a), kb = key(b);
      if (ka != kb) return ka < kb;
      return (a + n - rotation % n) % n < (b + n - rotation % n) % n;
    };
    const int m = std::min(n, nodes_per_stage_);
    std::partial_sort(order.begin(), order.begin() + m, order.end(), less);
    near_[s].resize(m);
    for (int i = 0; i < m; ++i) near_[s][i] = nodes[order[i]];
  }

  void extend(int depth, int frontier, int swaps) {
    if (stopped_ || (stopped_ = steady_now_s() > deadline_s_)) return;
    const int prev_stage = seq_[depth - 1];
    if (depth == length_) {
      const std::vector<int>& last = near_[prev_stage];
      for (std::size_t i = 0; i < last.size(); ++i) {
        const double total_s = cost_s_[depth - 1][i] + both_ways_s(last[i], source_);
        if (total_s < best_s_) best_s_ = total_s, record(depth, static_cast<int>(i));
      }
      return;
    }
    const int stages = static_cast<int>(partition_.size());
    const double rest_s = (length_ - depth - 1) * min_task_s_;
    for (int s = 1; s < stages; ++s) {
      if (seen_[s] || near_[s].empty()) continue;
      const bool advance = full_ ? s == frontier + 1 : s > frontier;
      const bool swap = !full_ && s == frontier - 1 && prev_stage == frontier && swaps < kSkipMaxSwaps;
      if (!advance && !swap) continue;
      const std::vector<int>& prev = near_[prev_stage];
      const std::vector<int>& next = near_[s];
      std::vector<double>& cost_s = cost_s_[depth];
      std::vector<int>& from = from_[depth];
      cost_s.assign(next.size(), kInf);
      from.assign(next.size(), -1);
      double least_s = kInf;
      for (std::size_t j = 0; j < next.size(); ++j) {
        const int node = next[j];
        const double own_s = net_.forward_s[node] * (1 + net_.backward_factor) + (*penalty_s_)[node];
        for (std::size_t i = 0; i < prev.size(); ++i) {
          const double c_s = cost_s_[depth - 1][i] + own_s + both_ways_s(prev[i], node);
          if (c_s < cost_s[j]) cost_s[j] = c_s, from[j] = static_cast<int>(i);
        }
        least_s = std::min(least_s, cost_s[j]);
      }
      if (least_s + rest_s >= best_s_) continue;
      seq_[depth] = s;
      seen_[s] = true;
      extend(depth + 1, advance ? s : frontier, swaps + (advance ? 0 : 1));
      seen_[s] = false;
    }
  }

  void record(int length, int last_index) {
    found_.path.assign(length, 0);
    found_.stages.assign(seq_.begin(), seq_.begin() + length);
    int index = last_index;
    for (int d = length - 1; d >= 0; --d) {
      found_.path[d] = near_[seq_[d]][index];
      if (d > 0) index = from_[d][index];
    }
  }

  const SkipNetwork& net_;
  const std::vector<std::vector<int>>& partition_;
  int length_;
  bool full_;
  int nodes_per_stage_;
  double deadline_s_;
  bool stopped_ = false;
  double min_task_s_ = 0;
  int source_ = 0;
  const std::vector<double>* penalty_s_ = nullptr;
  std::vector<std::vector<int>> near_;
  // Per depth: least cost to each node of near_[seq_[depth]], and the index
  // in the previous depth's nodes it came from.
  std::vector<std::vector<double>> cost_s_;
  std::vector<std::vector<int>> from_;
  std::vector<int> seq_;
  std::vector<bool> seen_;
  double best_s_ = kInf;
  SkipCandidate found_;
};

}  // namespace

std::vector<std::vector<SkipCandidate>> spread_skip_candidates(const SkipNetwork& net,
                                                               const std::vector<std::vector<int>>& partition,
                                                               int path_length, bool full_pipeline,
                                                               int micro_batches_per_source, int keep,
                                                               double deadline_s) {
  const int sources = static_cast<int>(partition[0].size());
  std::vector<std::vector<SkipCandidate>> out(sources);
  keep = std::max(1, keep);
  // A source's micro-batches are expected on its first picks, spread evenly;
  // later picks are alternatives and weigh less.
  const int planned = std::max(1, std::min(micro_batches_per_source, keep));
  const double planned_weight = static_cast<double>(micro_batches_per_source) / planned;
  constexpr double kAlternativeWeight = 0.25;
  std::vector<double> penalty_s(net.nodes, 0.0);
  // Past the deadline a source without a path still gets one: a schedule
  // needs it (each search is short, a few stages of kSpreadNodesPerStage).
  Search search(net, partition, path_length, full_pipeline, kSpreadNodesPerStage,
                std::numeric_limits<double>::infinity());
  for (int round = 0; round < 2 * keep; ++round) {
    bool open = false;
    for (int si = 0; si < sources; ++si) {
      if (static_cast<int>(out[si].size()) >= keep) continue;
      if (!out[si].empty() && steady_now_s() > deadline_s) continue;
      SkipCandidate c = search.best(partition[0][si], si, penalty_s);
      if (c.path.empty()) continue;
      const double weight = round < planned ? planned_weight : kAlternativeWeight;
      for (std::size_t i = 1; i < c.path.size(); ++i) {
        const int node = c.path[i];
        penalty_s[node] += weight * kLoadPenalty *
                           (net.forward_s[node] * (1 + net.backward_factor) + 2 * net.task_overhead_s);
      }
      if (std::none_of(out[si].begin(), out[si].end(),
                       [&](const SkipCandidate& x) { return x.path == c.path; })) {
        c.round_trip_s = skip_round_trip_s(net, c.path);
        out[si].push_back(std::move(c));
      }
      open = open || static_cast<int>(out[si].size()) < keep;
    }
    if (!open || steady_now_s() > deadline_s) break;
  }
  return out;
}

SkipCandidate skip_shortest_path(const SkipNetwork& net, const std::vector<std::vector<int>>& partition,
                                 int source, int path_length, double deadline_s) {
  int widest = 0;
  for (const std::vector<int>& stage : partition) widest = std::max(widest, static_cast<int>(stage.size()));
  Search search(net, partition, path_length, false, widest, deadline_s);
  SkipCandidate c = search.best(source, 0, std::vector<double>(net.nodes, 0.0));
  if (!c.path.empty()) c.round_trip_s = skip_round_trip_s(net, c.path);
  return c;
}

}  // namespace parplan
