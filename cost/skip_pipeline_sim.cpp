// SkipPipe iteration as list scheduling: the globally earliest possible task
// start is decided first. A started task only creates arrivals later than its
// own start (every task and transfer takes time), and a node's memory changes
// only through its own tasks, so no later decision can change an earlier one.
// Each node keeps its best waiting task; a step changes only two nodes' choices.
#include "cost/skip_pipeline_sim.h"

#include <algorithm>

namespace parplan {

void SkipSimulator::pick_candidate(const SkipNetwork& net, int node) {
  int best = -1;
  const int n_mb = static_cast<int>(node_of_.size());
  const bool memory_full = held_[node] >= net.memory;
  for (int m = 0; m < n_mb; ++m) {
    if (node_of_[m] != node || (forward_[m] && memory_full)) continue;
    if (best < 0 || ready_s_[m] < ready_s_[best]) best = m;
  }
  best_mb_[node] = best;
}

SkipSimResult SkipSimulator::run(const SkipNetwork& net, std::span<const SkipMicroBatch> mbs,
                                 std::vector<SkipTask>* trace, double cutoff_s) {
  const int n_mb = static_cast<int>(mbs.size());
  const int n_nodes = net.nodes;
  step_.assign(n_mb, 0);
  node_of_.resize(n_mb);
  forward_.assign(n_mb, 1);
  ready_s_.resize(n_mb);
  for (int m = 0; m < n_mb; ++m) {
    ready_s_[m] = mbs[m].release_s;
    node_of_[m] = mbs[m].path[0];
  }
  free_at_s_.assign(n_nodes, 0.0);
  held_.assign(n_nodes, 0);
  best_mb_.assign(n_nodes, -1);
  for (int m = 0; m < n_mb; ++m) {
    const int node = node_of_[m];
    const int best = best_mb_[node];
    if (best < 0 || ready_s_[m] < ready_s_[best]) best_mb_[node] = m;
  }

  SkipSimResult result;
  result.peak_memory.assign(n_nodes, 0);
  if (trace) trace->clear();
  int unfinished = n_mb;
  constexpr double kNever = std::numeric_limits<double>::infinity();
  while (unfinished > 0) {
    int pick_node = -1;
    double pick_start_s = kNever;
    for (int node = 0; node < n_nodes; ++node) {
      const int m = best_mb_[node];
      if (m < 0) continue;
      const double start_s = std::max(free_at_s_[node], ready_s_[m]);
      if (start_s < pick_start_s) {
        pick_start_s = start_s;
        pick_node = node;
      }
    }
    if (pick_node < 0) {
      result.deadlock = true;
      result.makespan_s = kNever;
      result.sum_finish_s = kNever;
      return result;
    }
    const int m = best_mb_[pick_node];
    const std::vector<int>& path = mbs[m].path;
    const int p = static_cast<int>(path.size());
    const int step = step_[m];
    const SkipTaskKind kind = skip_step_kind(p, step);
    const double forward_s = net.forward_s[pick_node];
    double duration_s = forward_s;
    if (kind == SkipTaskKind::kForward) {
      result.peak_memory[pick_node] = std::max(result.peak_memory[pick_node], ++held_[pick_node]);
    } else if (kind == SkipTaskKind::kLoss) {
      duration_s = forward_s * net.loss_factor;
    } else {
      duration_s = forward_s * net.backward_factor;
      --held_[pick_node];
    }
    const double end_s = pick_start_s + duration_s;
    if (end_s > cutoff_s) {
      result.cut = true;
      result.makespan_s = end_s;
      result.sum_finish_s = kNever;
      return result;
    }
    free_at_s_[pick_node] = end_s + net.task_overhead_s;
    if (trace) trace->push_back(SkipTask{pick_node, m, kind, pick_start_s, end_s});
    step_[m] = step + 1;
    if (step == 2 * p) {
      node_of_[m] = -1;
      --unfinished;
      result.makespan_s = std::max(result.makespan_s, end_s);
      result.sum_finish_s += end_s;
      pick_candidate(net, pick_node);
      continue;
    }
    const int next_node = skip_step_node(path, step + 1);
    ready_s_[m] = end_s + (next_node == pick_node ? 0.0 : net.transfer(pick_node, next_node));
    node_of_[m] = next_node;
    forward_[m] = step + 1 < p;
    pick_candidate(net, pick_node);
    if (next_node != pick_node) pick_candidate(net, next_node);
  }
  return result;
}

}  // namespace parplan
