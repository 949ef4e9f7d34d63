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
  const bool m_fresh = s_.step[m] == 0, b_fresh = s_.step[b] == 0;
  if (m_fresh != b_fresh) return b_fresh;
  if (m_fresh) {
    if (s_.fresh_key_s[m] != s_.fresh_key_s[b]) return s_.fresh_key_s[m] < s_.fresh_key_s[b];
    return s_.fresh_rank[m] < s_.fresh_rank[b];
  }
  if (s_.ready_s[m] != s_.ready_s[b]) return s_.ready_s[m] < s_.ready_s[b];
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
  const int* waiting = &s_.waiting[static_cast<std::size_t>(node) * stride_];
  for (int i = 0; i < s_.waiting_count[node]; ++i) {
    const int m = waiting[i];
    if (s_.step[m] != 0 || s_.fresh_key_s[m] >= free_s) continue;
    double value_s = std::max(s_.fresh_key_s[m], prev_free_s);
    if (blocked && value_s < unit_s) value_s += 0.1 * std::ceil((unit_s - value_s) / 0.1 - 1e-9);
    sync_buf_.push_back({value_s, m});
  }
  if (sync_buf_.empty()) return;
  std::sort(sync_buf_.begin(), sync_buf_.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return s_.fresh_rank[a.second] < s_.fresh_rank[b.second];
  });
  for (const auto& [value_s, m] : sync_buf_) {
    s_.fresh_key_s[m] = free_s;
    s_.fresh_rank[m] = s_.next_rank++;
  }
}

void SkipSimulator::dequeue(int node, int m) {
  int* waiting = &s_.waiting[static_cast<std::size_t>(node) * stride_];
  int& count = s_.waiting_count[node];
  for (int i = 0; i < count; ++i)
    if (waiting[i] == m) {
      waiting[i] = waiting[--count];
      return;
    }
}

// One pass: when some eligible task arrived by the time the node frees, the
// best of those starts then; otherwise the start is the earliest arrival and
// only the tasks arriving exactly then compete.
void SkipSimulator::pick_candidate(const SkipNetwork& net, int node) {
  const int* waiting = &s_.waiting[static_cast<std::size_t>(node) * stride_];
  const int count = s_.waiting_count[node];
  const bool memory_full = s_.held[node] >= net.memory;
  const double free_s = s_.free_at_s[node];
  double earliest_s = std::numeric_limits<double>::infinity();
  int arrived = -1, first = -1;
  for (int i = 0; i < count; ++i) {
    const int m = waiting[i];
    if (s_.forward[m] && memory_full) continue;
    const double ready_s = s_.ready_s[m];
    if (ready_s <= free_s) {
      if (arrived < 0 || goes_before(m, arrived)) arrived = m;
    } else if (arrived < 0) {
      if (ready_s < earliest_s || (ready_s == earliest_s && goes_before(m, first)))
        earliest_s = ready_s, first = m;
    }
  }
  const int best = arrived >= 0 ? arrived : first;
  s_.best_mb[node] = best;
  s_.best_start_s[node] =
      best < 0 ? std::numeric_limits<double>::infinity() : (arrived >= 0 ? free_s : earliest_s);
  update_winner(node);
}

void SkipSimulator::update_winner(int node) {
  for (int i = (leaves_ + node) / 2; i >= 1; i /= 2) {
    const int a = s_.winner[2 * i], b = s_.winner[2 * i + 1];
    // a < b: the left subtree holds the lower node ids.
    s_.winner[i] = s_.best_start_s[b] < s_.best_start_s[a] ? b : a;
  }
}

SkipSimResult SkipSimulator::run(const SkipNetwork& net, std::span<const SkipMicroBatch> mbs,
                                 std::vector<SkipTask>* trace, double cutoff_s) {
  if (trace) trace->clear();
  start(net, mbs);
  const SkipSimScore s = finish(advance(net, mbs, trace, cutoff_s, -1));
  SkipSimResult result;
  result.makespan_s = s.makespan_s;
  result.sum_finish_s = s.sum_finish_s;
  result.deadlock = s.deadlock;
  result.cut = s.cut;
  result.peak_memory = s_.peak;
  result.peak_memory.resize(net.nodes);
  return result;
}

SkipSimScore SkipSimulator::score(const SkipNetwork& net, std::span<const SkipMicroBatch> mbs,
                                  double cutoff_s) {
  start(net, mbs);
  return finish(advance(net, mbs, nullptr, cutoff_s, -1));
}

void SkipSimulator::checkpoint(const SkipNetwork& net, std::span<const SkipMicroBatch> mbs, int m) {
  start(net, mbs);
  saved_stop_ = advance(net, mbs, nullptr, std::numeric_limits<double>::infinity(), m);
  saved_ = s_;
}

SkipSimScore SkipSimulator::score_from_checkpoint(const SkipNetwork& net, std::span<const SkipMicroBatch> mbs,
                                                  double cutoff_s) {
  s_ = saved_;
  // Not stopped: the run ended (or deadlocked) before m's first task, which
  // then never ran; m's path made no difference.
  if (saved_stop_ != Stop::kStopped) return finish(saved_stop_);
  if (s_.last_end_s > cutoff_s) {
    s_.score.makespan_s = s_.last_end_s;
    return finish(Stop::kCut);
  }
  return finish(advance(net, mbs, nullptr, cutoff_s, -1));
}

void SkipSimulator::start(const SkipNetwork& net, std::span<const SkipMicroBatch> mbs) {
  const int n_mb = static_cast<int>(mbs.size());
  const int n_nodes = net.nodes;
  s_.step.assign(n_mb, 0);
  s_.forward.assign(n_mb, 1);
  s_.ready_s.resize(n_mb);
  s_.fresh_key_s.resize(n_mb);
  s_.fresh_rank.resize(n_mb);
  stride_ = static_cast<std::size_t>(std::max(1, n_mb));
  s_.waiting.resize(stride_ * n_nodes);
  s_.waiting_count.assign(n_nodes, 0);
  for (int m = 0; m < n_mb; ++m) {
    s_.ready_s[m] = mbs[m].release_s;
    s_.fresh_key_s[m] = mbs[m].release_s;
    s_.fresh_rank[m] = m;
    enqueue(mbs[m].path[0], m);
  }
  s_.next_rank = n_mb;
  s_.free_at_s.assign(n_nodes, 0.0);
  s_.held.assign(n_nodes, 0);
  s_.peak.assign(n_nodes, 0);
  s_.best_mb.assign(n_nodes, -1);
  leaves_ = 1;
  while (leaves_ < n_nodes) leaves_ *= 2;
  s_.best_start_s.assign(leaves_, std::numeric_limits<double>::infinity());
  s_.winner.resize(2 * static_cast<std::size_t>(leaves_));
  for (int i = 0; i < leaves_; ++i) s_.winner[leaves_ + i] = i;
  for (int i = leaves_ - 1; i >= 1; --i) s_.winner[i] = s_.winner[2 * i];
  for (int node = 0; node < n_nodes; ++node) pick_candidate(net, node);
  s_.unfinished = n_mb;
  s_.last_end_s = 0;
  s_.score = SkipSimScore{};
}

SkipSimScore SkipSimulator::finish(Stop stop) {
  constexpr double kNever = std::numeric_limits<double>::infinity();
  SkipSimScore r = s_.score;
  if (stop == Stop::kDeadlock) {
    r.deadlock = true;
    r.makespan_s = kNever;
    r.sum_finish_s = kNever;
  } else if (stop == Stop::kCut) {
    r.cut = true;
    r.sum_finish_s = kNever;
  }
  return r;
}

SkipSimulator::Stop SkipSimulator::advance(const SkipNetwork& net, std::span<const SkipMicroBatch> mbs,
                                           std::vector<SkipTask>* trace, double cutoff_s, int stop_mb) {
  const double first_overhead_s =
      net.first_forward_overhead_s < 0 ? net.task_overhead_s : net.first_forward_overhead_s;
  constexpr double kNever = std::numeric_limits<double>::infinity();
  while (s_.unfinished > 0) {
    const int pick_node = s_.winner[1];
    const double pick_start_s = s_.best_start_s[pick_node];
    if (pick_start_s == kNever) return Stop::kDeadlock;
    const int m = s_.best_mb[pick_node];
    const int step = s_.step[m];
    if (m == stop_mb && step == 0) return Stop::kStopped;
    const std::vector<int>& path = mbs[m].path;
    const int p = static_cast<int>(path.size());
    const SkipTaskKind kind = skip_step_kind(p, step);
    const double forward_s = net.forward_s[pick_node];
    const bool was_full = s_.held[pick_node] >= net.memory;
    double duration_s = forward_s;
    if (kind == SkipTaskKind::kForward) {
      s_.peak[pick_node] = std::max(s_.peak[pick_node], ++s_.held[pick_node]);
    } else if (kind == SkipTaskKind::kLoss) {
      duration_s = forward_s * net.loss_factor;
    } else {
      duration_s = forward_s * net.backward_factor;
      --s_.held[pick_node];
    }
    const double end_s = pick_start_s + duration_s;
    if (end_s > cutoff_s) {
      s_.score.makespan_s = end_s;
      return Stop::kCut;
    }
    s_.last_end_s = std::max(s_.last_end_s, end_s);
    const double prev_free_s = s_.free_at_s[pick_node];
    s_.free_at_s[pick_node] = end_s + (step == 0 ? first_overhead_s : net.task_overhead_s);
    dequeue(pick_node, m);
    sync_fresh(pick_node, pick_start_s, prev_free_s, s_.free_at_s[pick_node], was_full);
    if (trace) trace->push_back(SkipTask{pick_node, m, kind, pick_start_s, end_s});
    s_.step[m] = step + 1;
    if (step == 2 * p) {
      --s_.unfinished;
      s_.score.makespan_s = std::max(s_.score.makespan_s, end_s);
      s_.score.sum_finish_s += end_s;
      pick_candidate(net, pick_node);
      continue;
    }
    const int next_node = skip_step_node(path, step + 1);
    s_.ready_s[m] = end_s + (next_node == pick_node ? 0.0 : net.transfer(pick_node, next_node));
    s_.forward[m] = step + 1 < p;
    enqueue(next_node, m);
    pick_candidate(net, pick_node);
    if (next_node != pick_node) pick_candidate(net, next_node);
  }
  return Stop::kDone;
}

}  // namespace parplan
