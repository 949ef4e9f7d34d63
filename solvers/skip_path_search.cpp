// Greedy insertion: micro-batches one at a time (round-robin over sources),
// each taking the candidate path after which the simulated makespan (then the
// sum of finish times) is least. Improvement passes re-route one micro-batch
// at a time, then shift its release, keeping only strict improvements.
#include "solvers/skip_path_search.h"

#include <algorithm>
#include <limits>
#include <span>

#include "solvers/skip_partition_search.h"

namespace parplan {
namespace {

struct Score {
  double makespan_s = std::numeric_limits<double>::infinity();
  double sum_s = std::numeric_limits<double>::infinity();
};

bool better(const Score& a, const Score& b) {
  constexpr double kEps = 1e-9;
  if (a.makespan_s < b.makespan_s - kEps) return true;
  if (a.makespan_s > b.makespan_s + kEps) return false;
  return a.sum_s < b.sum_s - kEps;
}

/// Simulates no further than `than`'s makespan: a cut run is never better.
Score score(SkipSimulator& sim, const SkipNetwork& net, const std::vector<SkipMicroBatch>& mbs,
            const Score& than = Score{}) {
  const SkipSimScore r = sim.score(net, mbs, than.makespan_s + 1e-9);
  return {r.makespan_s, r.sum_finish_s};
}

/// score() after sim.checkpoint(net, mbs, m) where mbs changed only in m's path.
Score score_resumed(SkipSimulator& sim, const SkipNetwork& net, const std::vector<SkipMicroBatch>& mbs,
                    const Score& than) {
  const SkipSimScore r = sim.score_from_checkpoint(net, mbs, than.makespan_s + 1e-9);
  return {r.makespan_s, r.sum_finish_s};
}

class Capacity {
 public:
  Capacity(std::vector<int> remaining, int path_length)
      : remaining_(std::move(remaining)), mark_(remaining_.size(), 0), visits_(path_length - 1) {}

  bool has_room(const std::vector<int>& stages) const {
    for (std::size_t i = 1; i < stages.size(); ++i)
      if (remaining_[stages[i]] < 1) return false;
    return true;
  }
  /// Taking `stages` still leaves room for `left` more micro-batches: each
  /// needs visits_ distinct stages, so the capacities, each counted at most
  /// `left` times, must cover left * visits_ (greedy filling shows enough).
  bool fits(const std::vector<int>& stages, int left) {
    if (!has_room(stages)) return false;
    for (std::size_t i = 1; i < stages.size(); ++i) mark_[stages[i]] = 1;
    long long total = 0;
    for (std::size_t s = 1; s < remaining_.size(); ++s) total += std::min(remaining_[s] - mark_[s], left);
    for (std::size_t i = 1; i < stages.size(); ++i) mark_[stages[i]] = 0;
    return total >= static_cast<long long>(left) * visits_;
  }
  void take(const std::vector<int>& stages, int delta) {
    for (std::size_t i = 1; i < stages.size(); ++i) remaining_[stages[i]] -= delta;
  }
  /// `partition` with the stages that have no room left emptied.
  std::vector<std::vector<int>> with_room(std::vector<std::vector<int>> partition) const {
    for (std::size_t s = 1; s < partition.size(); ++s)
      if (remaining_[s] < 1) partition[s].clear();
    return partition;
  }
  /// Stages with the most room left, ascending: a path that keeps the rest feasible.
  std::vector<int> roomiest_stages() const {
    std::vector<int> order;
    for (std::size_t s = 1; s < remaining_.size(); ++s) order.push_back(static_cast<int>(s));
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return remaining_[a] > remaining_[b]; });
    order.resize(visits_);
    std::sort(order.begin(), order.end());
    order.insert(order.begin(), 0);
    return order;
  }

 private:
  std::vector<int> remaining_;
  std::vector<int> mark_;
  int visits_;
};

/// Nearest next node in each of `stages` (only used when no candidate fits the capacities).
SkipCandidate fallback_path(const SkipNetwork& net, const std::vector<std::vector<int>>& partition,
                            int source, const std::vector<int>& stages) {
  SkipCandidate c;
  c.path = {source};
  c.stages = stages;
  for (std::size_t i = 1; i < stages.size(); ++i) {
    int best = partition[stages[i]].front();
    for (int node : partition[stages[i]])
      if (net.transfer(c.path.back(), node) + net.forward_s[node] <
          net.transfer(c.path.back(), best) + net.forward_s[best])
        best = node;
    c.path.push_back(best);
  }
  return c;
}

/// Every stage above the one before it: a path without a swap.
bool ascending(const std::vector<int>& stages) {
  for (std::size_t i = 1; i < stages.size(); ++i)
    if (stages[i] <= stages[i - 1]) return false;
  return true;
}

/// Every micro-batch placed as a hurried one is (no scoring): sources take
/// successive candidates, paths without a swap, the first that leaves room.
/// A handful of passes over the candidates and no simulation.
void place_all_hurried(const PathSearchInput& in, std::vector<SkipMicroBatch>& mbs,
                       std::vector<std::vector<int>>& chosen_stages) {
  const std::vector<int>& sources = in.partition[0];
  const int n_src = static_cast<int>(sources.size());
  const int n_mb = n_src * in.micro_batches_per_source;
  Capacity capacity(in.capacity, in.path_length);
  mbs.clear();
  chosen_stages.assign(n_mb, {});
  for (int m = 0; m < n_mb; ++m) {
    const int si = m % n_src;
    const int left = n_mb - m - 1;
    const int n_cand = static_cast<int>(in.candidates[si].size());
    const int first = n_cand > 0 ? (m / n_src) % n_cand : 0;
    SkipCandidate pick;
    bool found = false;
    for (int k = 0; k < n_cand && !found; ++k) {
      const SkipCandidate& cand = in.candidates[si][(first + k) % n_cand];
      if (ascending(cand.stages) && capacity.fits(cand.stages, left)) pick = cand, found = true;
    }
    if (!found) pick = fallback_path(*in.network, in.partition, sources[si], capacity.roomiest_stages());
    mbs.push_back(SkipMicroBatch{sources[si], pick.path, 0});
    chosen_stages[m] = pick.stages;
    capacity.take(pick.stages, 1);
  }
}

}  // namespace

SkipSchedule search_paths(const PathSearchInput& in, const PathSearchEffort& effort, SkipSimulator& sim) {
  const SkipNetwork& net = *in.network;
  const std::vector<int>& sources = in.partition[0];
  const int n_src = static_cast<int>(sources.size());
  const int n_mb = n_src * in.micro_batches_per_source;
  Capacity capacity(in.capacity, in.path_length);
  std::vector<SkipMicroBatch> mbs;
  mbs.reserve(n_mb);
  std::vector<std::vector<int>> chosen_stages(n_mb);

  // Past the deadline every step below is cut short: scoring a path
  // simulates every micro-batch placed so far, so many micro-batches take
  // time quadratic in their number.
  bool late = false;
  int first_hurried = -1;
  const auto past_deadline = [&] { return late = late || steady_now_s() > effort.deadline_s; };
  for (int m = 0; m < n_mb; ++m) {
    const int si = m % n_src;
    const int left = n_mb - m - 1;
    mbs.push_back(SkipMicroBatch{sources[si], {}, 0});
    Score best_score;
    int best = -1, first_fit = -1;
    const bool hurry = past_deadline();
    if (hurry && first_hurried < 0) first_hurried = m;
    const int n_cand = static_cast<int>(in.candidates[si].size());
    // Hurried micro-batches of one source start from successive candidates:
    // all on its first one they would queue at the same nodes.
    const int first = hurry && n_cand > 0 ? (m / n_src) % n_cand : 0;
    for (int k = 0; k < n_cand; ++k) {
      const int c = (first + k) % n_cand;
      const SkipCandidate& cand = in.candidates[si][c];
      // Hurried micro-batches take stages in ascending order (no swap): they
      // then cannot deadlock among themselves (below).
      if (hurry && !ascending(cand.stages)) continue;
      if (!capacity.fits(cand.stages, left)) continue;
      if (hurry) {
        first_fit = c;
        break;
      }
      mbs.back().path = cand.path;
      // Micro-batch m's path matters only from its first task on: simulate
      // what comes before once.
      if (first_fit < 0) first_fit = c, sim.checkpoint(net, mbs, m);
      const Score s = score_resumed(sim, net, mbs, best_score);
      if (better(s, best_score)) best_score = s, best = c;
    }
    SkipCandidate extra;
    Score extra_score;
    bool extra_fits = false;
    if (first_fit < 0 && !hurry) {
      // The shortest paths all use stages without room: search again over the
      // stages with room only.
      const int keep = 4 * std::max<int>(1, static_cast<int>(in.candidates[si].size()));
      for (SkipCandidate& cand : skip_candidates(net, capacity.with_room(in.partition), sources[si],
                                                 in.path_length, false, keep, effort.deadline_s)) {
        if (!capacity.fits(cand.stages, left)) continue;
        if (!extra_fits) extra = cand, extra_fits = true;
        mbs.back().path = cand.path;
        const Score s = score(sim, net, mbs, extra_score);
        if (better(s, extra_score)) extra_score = s, extra = std::move(cand);
      }
    }
    const SkipCandidate* pick = nullptr;
    if (best >= 0) {
      pick = &in.candidates[si][best];
    } else if (extra_fits) {
      pick = &extra;
    } else if (first_fit >= 0) {
      pick = &in.candidates[si][first_fit];
    } else {
      extra = fallback_path(net, in.partition, sources[si], capacity.roomiest_stages());
      pick = &extra;
    }
    mbs.back().path = pick->path;
    // A finite best score already shows the pick does not deadlock.
    if (best < 0 && !hurry && score(sim, net, mbs).makespan_s == std::numeric_limits<double>::infinity()) {
      // Deadlock on every path: release it once every earlier micro-batch has finished.
      mbs.pop_back();
      const double prefix_s = mbs.empty() ? 0.0 : sim.score(net, mbs).makespan_s;
      mbs.push_back(SkipMicroBatch{sources[si], {}, prefix_s});
    }
    mbs.back().path = pick->path;
    chosen_stages[m] = pick->stages;
    capacity.take(pick->stages, 1);
  }

  Score current = score(sim, net, mbs);
  if (first_hurried >= 0 && current.makespan_s == std::numeric_limits<double>::infinity()) {
    // The hurried picks skipped the deadlock check one by one (checking each
    // simulates all before it: quadratic, minutes for thousands). Their paths
    // take stages in ascending order, so a cycle of full nodes needs an
    // earlier micro-batch's swap: released once every earlier micro-batch
    // has finished, they run on empty nodes and cannot deadlock. Two
    // simulations, however many micro-batches.
    const std::span<const SkipMicroBatch> earlier(mbs.data(), first_hurried);
    const double prefix_s = first_hurried == 0 ? 0.0 : sim.score(net, earlier).makespan_s;
    for (int m = first_hurried; m < n_mb; ++m) mbs[m].release_s = std::max(mbs[m].release_s, prefix_s);
    current = score(sim, net, mbs);
  }
  if (first_hurried > 0) {
    // Cut short halfway, the scored picks and the hurried ones can make a
    // slower schedule than hurrying them all (1024 nodes: 72.8 s against
    // 68.9 s when the deadline fell a second later): more time must not
    // give a worse answer, so the all-hurried placement is the floor.
    std::vector<SkipMicroBatch> all_hurried;
    std::vector<std::vector<int>> all_hurried_stages;
    place_all_hurried(in, all_hurried, all_hurried_stages);
    const Score hurried = score(sim, net, all_hurried);
    if (better(hurried, current)) {
      current = hurried;
      mbs = std::move(all_hurried);
      chosen_stages = std::move(all_hurried_stages);
    }
  }
  for (int pass = 0; pass < effort.improve_passes && !past_deadline(); ++pass) {
    bool improved = false;
    for (int m = 0; m < n_mb && !past_deadline(); ++m) {
      const int si = m % n_src;
      capacity.take(chosen_stages[m], -1);
      const std::vector<int> kept_path = mbs[m].path;
      int best = -1;
      sim.checkpoint(net, mbs, m);
      for (int c = 0; c < static_cast<int>(in.candidates[si].size()); ++c) {
        const SkipCandidate& cand = in.candidates[si][c];
        if (cand.path == kept_path || !capacity.has_room(cand.stages)) continue;
        mbs[m].path = cand.path;
        const Score s = score_resumed(sim, net, mbs, current);
        if (better(s, current)) current = s, best = c;
      }
      if (best >= 0) {
        mbs[m].path = in.candidates[si][best].path;
        chosen_stages[m] = in.candidates[si][best].stages;
        improved = true;
      } else {
        mbs[m].path = kept_path;
      }
      capacity.take(chosen_stages[m], 1);
    }
    if (!improved) break;
  }

  if (effort.release_times) {
    constexpr double kShifts[] = {-2, -1, -0.5, 0.5, 1, 2, 4};
    for (int pass = 0; pass < 2 && !past_deadline(); ++pass) {
      bool improved = false;
      for (int m = 0; m < n_mb && !past_deadline(); ++m) {
        const double unit_s = net.forward_s[mbs[m].source];
        const double kept_s = mbs[m].release_s;
        double best_s = kept_s;
        for (double shift : kShifts) {
          mbs[m].release_s = std::max(0.0, kept_s + shift * unit_s);
          if (mbs[m].release_s == kept_s) continue;
          const Score s = score(sim, net, mbs, current);
          if (better(s, current)) current = s, best_s = mbs[m].release_s;
        }
        mbs[m].release_s = best_s;
        improved |= best_s != kept_s;
      }
      if (!improved) break;
    }
  }
  return SkipSchedule{in.partition, std::move(mbs), current.makespan_s, late};
}

}  // namespace parplan
