// SkipPipe iteration as list scheduling: the globally earliest possible task
// start is decided first. A started task only creates arrivals later than its
// own start (every task and transfer takes time), and a node's memory changes
// only through its own tasks, so no later decision can change an earlier one.
// Each node keeps its best waiting task; a step changes only two nodes' choices.
#include "cost/skip_pipeline_sim.h"

#include <algorithm>
#include <cmath>

namespace parplan {

// com_sym.py sorts a node's waiting tasks by (ready time, tm_receive) where a
// task that arrived while the node was busy has its ready time raised to when
// the node frees, so they tie and tm_receive (arrival; 10000 for a micro-batch
// injected on its source) decides, then the order of the previous sort.
bool SkipSimulator::goes_before(int m, int b) const {
  const bool m_fresh = step_[m] == 0, b_fresh = step_[b] == 0;
  if (m_fresh != b_fresh) return b_fresh;
  if (m_fresh) {
    if (fresh_key_s_[m] != fresh_key_s_[b]) return fresh_key_s_[m] < fresh_key_s_[b];
    return fresh_rank_[m] < fresh_rank_[b];
  }
  if (ready_s_[m] != ready_s_[b]) return ready_s_[m] < ready_s_[b];
  return m < b;
}

// com_sym.py steps time in 1 s units of 15 passes. A forward blocked by memory
// on an idle node has its ready time raised by 0.1 s per pass until it leaves
// the unit, so at the first pass of unit u it reads u + (its start mod 0.1).
// A task that starts at v0 and frees the node at L raises every waiting
// micro-batch to L in the order of those values; the stable sort keeps that
// order afterwards. Only injected micro-batches tie on tm_receive, so only
// their order depends on it.
void SkipSimulator::sync_fresh(int node, double start_s, double prev_free_s, double free_s, bool blocked) {
  sync_buf_.clear();
  const double unit_s = std::floor(start_s);
  const int* waiting = &waiting_[static_cast<std::size_t>(node) * stride_];
  for (int i = 0; i < waiting_count_[node]; ++i) {
    const int m = waiting[i];
    if (step_[m] != 0 || fresh_key_s_[m] >= free_s) continue;
    double value_s = std::max(fresh_key_s_[m], prev_free_s);
    if (blocked && value_s < unit_s) value_s += 0.1 * std::ceil((unit_s - value_s) / 0.1 - 1e-9);
    sync_buf_.push_back({value_s, m});
  }
  if (sync_buf_.empty()) return;
  std::sort(sync_buf_.begin(), sync_buf_.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return fresh_rank_[a.second] < fresh_rank_[b.second];
  });
  for (const auto& [value_s, m] : sync_buf_) {
    fresh_key_s_[m] = free_s;
    fresh_rank_[m] = next_rank_++;
  }
}

void SkipSimulator::dequeue(int node, int m) {
  int* waiting = &waiting_[static_cast<std::size_t>(node) * stride_];
  int& count = waiting_count_[node];
  for (int i = 0; i < count; ++i)
    if (waiting[i] == m) {
      waiting[i] = waiting[--count];
      return;
    }
}

void SkipSimulator::pick_candidate(const SkipNetwork& net, int node) {
  const int* waiting = &waiting_[static_cast<std::size_t>(node) * stride_];
  const int count = waiting_count_[node];
  const bool memory_full = held_[node] >= net.memory;
  double earliest_s = std::numeric_limits<double>::infinity();
  for (int i = 0; i < count; ++i) {
    const int m = waiting[i];
    if (!(forward_[m] && memory_full)) earliest_s = std::min(earliest_s, ready_s_[m]);
  }
  const double start_s = std::max(free_at_s_[node], earliest_s);
  int best = -1;
  for (int i = 0; i < count; ++i) {
    const int m = waiting[i];
    if ((forward_[m] && memory_full) || ready_s_[m] > start_s) continue;
    if (best < 0 || goes_before(m, best)) best = m;
  }
  best_mb_[node] = best;
  best_start_s_[node] = best < 0 ? std::numeric_limits<double>::infinity() : start_s;
  update_winner(node);
}

void SkipSimulator::update_winner(int node) {
  for (int i = (leaves_ + node) / 2; i >= 1; i /= 2) {
    const int a = winner_[2 * i], b = winner_[2 * i + 1];
    // a < b: the left subtree holds the lower node ids.
    winner_[i] = best_start_s_[b] < best_start_s_[a] ? b : a;
  }
}

SkipSimResult SkipSimulator::run(const SkipNetwork& net, std::span<const SkipMicroBatch> mbs,
                                 std::vector<SkipTask>* trace, double cutoff_s) {
  const SkipSimScore s = simulate(net, mbs, trace, cutoff_s);
  SkipSimResult result;
  result.makespan_s = s.makespan_s;
  result.sum_finish_s = s.sum_finish_s;
  result.deadlock = s.deadlock;
  result.cut = s.cut;
  result.peak_memory = peak_;
  return result;
}

SkipSimScore SkipSimulator::score(const SkipNetwork& net, std::span<const SkipMicroBatch> mbs,
                                  double cutoff_s) {
  return simulate(net, mbs, nullptr, cutoff_s);
}

SkipSimScore SkipSimulator::simulate(const SkipNetwork& net, std::span<const SkipMicroBatch> mbs,
                                     std::vector<SkipTask>* trace, double cutoff_s) {
  const int n_mb = static_cast<int>(mbs.size());
  const int n_nodes = net.nodes;
  step_.assign(n_mb, 0);
  node_of_.resize(n_mb);
  forward_.assign(n_mb, 1);
  ready_s_.resize(n_mb);
  fresh_key_s_.resize(n_mb);
  fresh_rank_.resize(n_mb);
  stride_ = static_cast<std::size_t>(std::max(1, n_mb));
  waiting_.resize(stride_ * n_nodes);
  waiting_count_.assign(n_nodes, 0);
  for (int m = 0; m < n_mb; ++m) {
    ready_s_[m] = mbs[m].release_s;
    fresh_key_s_[m] = mbs[m].release_s;
    fresh_rank_[m] = m;
    node_of_[m] = mbs[m].path[0];
    enqueue(node_of_[m], m);
  }
  next_rank_ = n_mb;
  free_at_s_.assign(n_nodes, 0.0);
  held_.assign(n_nodes, 0);
  peak_.assign(n_nodes, 0);
  best_mb_.assign(n_nodes, -1);
  leaves_ = 1;
  while (leaves_ < n_nodes) leaves_ *= 2;
  best_start_s_.assign(leaves_, std::numeric_limits<double>::infinity());
  winner_.resize(2 * static_cast<std::size_t>(leaves_));
  for (int i = 0; i < leaves_; ++i) winner_[leaves_ + i] = i;
  for (int i = leaves_ - 1; i >= 1; --i) winner_[i] = winner_[2 * i];
  for (int node = 0; node < n_nodes; ++node) pick_candidate(net, node);
  const double first_overhead_s =
      net.first_forward_overhead_s < 0 ? net.task_overhead_s : net.first_forward_overhead_s;

  SkipSimScore result;
  if (trace) trace->clear();
  int unfinished = n_mb;
  constexpr double kNever = std::numeric_limits<double>::infinity();
  while (unfinished > 0) {
    const int pick_node = winner_[1];
    const double pick_start_s = best_start_s_[pick_node];
    if (pick_start_s == kNever) {
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
    const bool was_full = held_[pick_node] >= net.memory;
    double duration_s = forward_s;
    if (kind == SkipTaskKind::kForward) {
      peak_[pick_node] = std::max(peak_[pick_node], ++held_[pick_node]);
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
    const double prev_free_s = free_at_s_[pick_node];
    free_at_s_[pick_node] = end_s + (step == 0 ? first_overhead_s : net.task_overhead_s);
    dequeue(pick_node, m);
    sync_fresh(pick_node, pick_start_s, prev_free_s, free_at_s_[pick_node], was_full);
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
    enqueue(next_node, m);
    pick_candidate(net, pick_node);
    if (next_node != pick_node) pick_candidate(net, next_node);
  }
  return result;
}

}  // namespace parplan
