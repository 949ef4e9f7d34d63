// Event simulation of SkipPipe partial pipelines (Blagoev et al. 2025): every
// micro-batch runs forward along its own path of nodes, the loss on its source,
// and backward along the same nodes reversed; gives the iteration's makespan.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace parplan {

/// The nodes and the network of a SkipPipe iteration.
struct SkipNetwork {
  int nodes = 0;
  /// Forward of one micro-batch through one stage, per node.
  std::vector<double> forward_s;
  /// nodes x nodes, row = sender: seconds until one micro-batch's activations
  /// (or gradients) sent from i are usable on j.
  std::vector<double> transfer_s;
  /// Backward = backward_factor x forward on the same node (SkipPipe: 1.5).
  double backward_factor = 2;
  /// Loss and head on the source = loss_factor x the source's forward (SkipPipe: 0.25).
  double loss_factor = 0;
  /// Idle time a node needs after each task before the next (SkipPipe: 0.13 s).
  double task_overhead_s = 0;
  /// Idle time after a micro-batch's first forward on its source; below 0:
  /// task_overhead_s. SkipPipe's com_sym.py: 0.09 s (its injected micro-batches
  /// carry tm_receive = 10000 > 1000, which selects 0.09 s instead of 0.13 s).
  double first_forward_overhead_s = -1;
  /// Micro-batches a node may hold between its forward and its backward.
  int memory = 1;

  double transfer(int from, int to) const { return transfer_s[static_cast<std::size_t>(from) * nodes + to]; }
};

/// One micro-batch: its nodes in forward order, source first.
struct SkipMicroBatch {
  int source = 0;
  std::vector<int> path;
  /// When it becomes ready on its source.
  double release_s = 0;
};

enum class SkipTaskKind : std::uint8_t { kForward, kLoss, kBackward };

struct SkipTask {
  int node = 0;
  int micro_batch = 0;
  SkipTaskKind kind = SkipTaskKind::kForward;
  double start_s = 0;
  double end_s = 0;
};

struct SkipSimResult {
  /// End of the last backward; +infinity on a deadlock.
  double makespan_s = 0;
  /// Forwards wait for memory that never frees (a cycle of full nodes).
  bool deadlock = false;
  /// Sum over micro-batches of their last backward's end (a tie-breaker).
  double sum_finish_s = 0;
  bool cut = false;
  /// Most micro-batches each node held at once.
  std::vector<int> peak_memory;
};

/// SkipSimResult without the per-node peaks: what a search needs, with no
/// allocation per call.
struct SkipSimScore {
  double makespan_s = 0;
  double sum_finish_s = 0;
  bool deadlock = false;
  bool cut = false;
};

/// The rules (SkipPipe's `schedulers/com_sym.py` as `create_schedule.py`
/// drives it): a node runs one task at a time; whenever it is free it starts,
/// among the tasks that have arrived, the one that arrived first, except that
/// a micro-batch not yet started on its source (arrival = its release) yields
/// to every arrived loss and backward and to forwards from other nodes, and
/// such micro-batches go in index order; when none has arrived it starts the
/// first to arrive. A forward needs a free memory slot on its node (held until
/// that node's backward of the same micro-batch) and otherwise waits there; a
/// transfer occupies neither node. Reuses its buffers (no allocation per call
/// once warm): keep one simulator per thread.
class SkipSimulator {
 public:
  /// Stops as soon as a task ends after `cutoff_s` (the makespan can only be
  /// larger): then makespan_s is that task's end and `cut` is set.
  SkipSimResult run(const SkipNetwork& network, std::span<const SkipMicroBatch> micro_batches,
                    std::vector<SkipTask>* trace = nullptr,
                    double cutoff_s = std::numeric_limits<double>::infinity());
  /// run() without the trace and the peaks (the search's inner loop).
  SkipSimScore score(const SkipNetwork& network, std::span<const SkipMicroBatch> micro_batches,
                     double cutoff_s = std::numeric_limits<double>::infinity());

  /// Simulates `micro_batches` until micro-batch `m`'s first task (on its
  /// source) is about to start and keeps that state. Everything before it is
  /// the same whatever m's path beyond its source: the rules read a path only
  /// when its task ends. So a search trying several paths for m scores each
  /// with score_from_checkpoint, simulating only what follows.
  void checkpoint(const SkipNetwork& network, std::span<const SkipMicroBatch> micro_batches, int m);
  /// score(network, micro_batches, cutoff_s) where micro_batches differ from
  /// the checkpoint's at most in the path of its micro-batch m, with the same
  /// source and number of nodes. A cut run's makespan_s is some task's end
  /// above cutoff_s (not necessarily the first, as in score()).
  SkipSimScore score_from_checkpoint(const SkipNetwork& network,
                                     std::span<const SkipMicroBatch> micro_batches,
                                     double cutoff_s = std::numeric_limits<double>::infinity());

 private:
  // Everything a run changes, so that a checkpoint is one copy (the vectors
  // keep their capacity: no allocation once warm).
  struct State {
    std::vector<int> step;
    std::vector<char> forward;  // the next task is a forward (needs a memory slot)
    std::vector<double> ready_s;
    std::vector<double> free_at_s;
    std::vector<int> held;
    std::vector<int> peak;
    std::vector<int> best_mb;
    // Start of each node's best waiting task (infinity when none; padded to
    // a power of two). The next task to start is the least of these, earliest
    // node id on a tie: a tournament tree over the nodes keeps it, winner[1]
    // at the root, leaves at winner[leaves + node].
    std::vector<double> best_start_s;
    std::vector<int> winner;
    // Micro-batches whose next task is on each node, `stride` slots per node
    // (any order: goes_before is a total order).
    std::vector<int> waiting;
    std::vector<int> waiting_count;
    // Order of the micro-batches not yet started on their source.
    std::vector<double> fresh_key_s;
    std::vector<int> fresh_rank;
    int next_rank = 0;
    int unfinished = 0;
    /// Latest task end so far (a checkpoint's cut test).
    double last_end_s = 0;
    SkipSimScore score;
  };
  enum class Stop { kDone, kStopped, kCut, kDeadlock };

  void start(const SkipNetwork& network, std::span<const SkipMicroBatch> micro_batches);
  /// Runs tasks until all end, one ends after cutoff_s, or the next to start
  /// is the first task of micro-batch `stop_mb` (not run; -1: none).
  Stop advance(const SkipNetwork& network, std::span<const SkipMicroBatch> micro_batches,
               std::vector<SkipTask>* trace, double cutoff_s, int stop_mb);
  SkipSimScore finish(Stop stop);
  void pick_candidate(const SkipNetwork& network, int node);
  /// Task of micro-batch m on its node goes before that of micro-batch b.
  bool goes_before(int m, int b) const;
  void sync_fresh(int node, double start_s, double prev_free_s, double free_s, bool blocked);
  void enqueue(int node, int m) {
    s_.waiting[static_cast<std::size_t>(node) * stride_ + s_.waiting_count[node]++] = m;
  }
  void dequeue(int node, int m);
  void update_winner(int node);

  State s_;
  State saved_;
  Stop saved_stop_ = Stop::kDone;
  std::size_t stride_ = 0;
  int leaves_ = 1;
  std::vector<std::pair<double, int>> sync_buf_;
};

/// Node and kind of step `step` (0 .. 2P) of a micro-batch whose path has P nodes.
inline int skip_step_node(const std::vector<int>& path, int step) {
  const int p = static_cast<int>(path.size());
  if (step < p) return path[step];
  if (step == p) return path[0];
  return path[2 * p - step];
}
inline SkipTaskKind skip_step_kind(int path_nodes, int step) {
  if (step < path_nodes) return SkipTaskKind::kForward;
  return step == path_nodes ? SkipTaskKind::kLoss : SkipTaskKind::kBackward;
}

}  // namespace parplan
