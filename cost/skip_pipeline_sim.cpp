// SkipPipe iteration as list scheduling: the globally earliest possible task
// start is decided first. A started task only creates arrivals later than its
// own start (every task and transfer takes time), and a node's memory changes
// only through its own tasks, so no later decision can change an earlier one.
#include "cost/skip_pipeline_sim.h"

#include <algorithm>
#include <limits>

namespace parplan {

SkipSimResult SkipSimulator::run(const SkipNetwork& net, std::span<const SkipMicroBatch> mbs,
                                 std::vector<SkipTask>* trace) {
  const int n_mb = static_cast<int>(mbs.size());
  const int n_nodes = net.nodes;
  step_.assign(n_mb, 0);
  ready_s_.resize(n_mb);
  for (int m = 0; m < n_mb; ++m) ready_s_[m] = mbs[m].release_s;
  free_at_s_.assign(n_nodes, 0.0);
  held_.assign(n_nodes, 0);
  best_mb_.resize(n_nodes);

  SkipSimResult result;
  result.peak_memory.assign(n_nodes, 0);
  if (trace) trace->clear();
  int unfinished = n_mb;
  constexpr double kNever = std::numeric_limits<double>::infinity();
  while (unfinished > 0) {
    std::fill(best_mb_.begin(), best_mb_.end(), -1);
    for (int m = 0; m < n_mb; ++m) {
      const std::vector<int>& path = mbs[m].path;
      const int step = step_[m];
      if (step > 2 * static_cast<int>(path.size())) continue;
      const int node = skip_step_node(path, step);
      if (step < static_cast<int>(path.size()) && held_[node] >= net.memory) continue;
      const int best = best_mb_[node];
      if (best < 0 || ready_s_[m] < ready_s_[best]) best_mb_[node] = m;
    }
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
    free_at_s_[pick_node] = end_s + net.task_overhead_s;
    if (trace) trace->push_back(SkipTask{pick_node, m, kind, pick_start_s, end_s});
    if (step == 2 * p) {
      step_[m] = step + 1;
      --unfinished;
      result.makespan_s = std::max(result.makespan_s, end_s);
      result.sum_finish_s += end_s;
      continue;
    }
    const int next_node = skip_step_node(path, step + 1);
    ready_s_[m] = end_s + (next_node == pick_node ? 0.0 : net.transfer(pick_node, next_node));
    step_[m] = step + 1;
  }
  return result;
}

}  // namespace parplan
