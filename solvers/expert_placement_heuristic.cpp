// Greedy replication, balanced packing and local improvement of one flat
// expert-placement problem.
#include "solvers/expert_placement_heuristic.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <numeric>
#include <queue>
#include <utility>

namespace parplan {

namespace {

/// A move must lower the busiest GPU by more than rounding noise.
constexpr double kRelativeStep = 1e-12;

struct Replica {
  int expert;
  double load;
};

/// holds[e * gpus + g]: GPU g has a replica of expert e.
std::vector<char> holding(const FlatProblem& p, const FlatPlacement& placement) {
  std::vector<char> holds(p.loads.size() * p.gpus, 0);
  for (int g = 0; g < p.gpus; ++g) {
    for (int e : placement.gpu_experts[g]) holds[static_cast<size_t>(e) * p.gpus + g] = 1;
  }
  return holds;
}

/// One swap or transfer that lowers the busiest GPU.
struct Move {
  double new_max = 0;
  int kind = 0;  // 1 swap, 2 transfer, 3 pair repartition, 4 relief
  int slot = 0, other_gpu = 0, other_slot = 0, to_expert = 0;
  unsigned mask = 0;  ///< pair repartition: which of the 2S items go to the busiest GPU
};

/// Pair repartition enumerates C(2S, S) splits; above this it is skipped
/// (S <= 6) and single swaps remain.
constexpr long kMaxPairSplits = 1000;

long binomial(int n, int k) {
  long r = 1;
  for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

class Improver {
 public:
  Improver(const FlatProblem& p, FlatPlacement& placement, Deadline deadline)
      : deadline_(deadline),
        p_(p),
        pl_(placement),
        holds_(holding(p, placement)),
        load_(flat_gpu_loads(p, placement)),
        pair_splits_(p.slots <= 15 && binomial(2 * p.slots, p.slots) <= kMaxPairSplits) {
    if (!pair_splits_) return;
    by_size_.resize(p.slots + 1);
    for (unsigned mask = 0; mask < (1u << p.slots); ++mask) by_size_[std::popcount(mask)].push_back(mask);
  }

  void run() {
    // Descend on the busiest GPU; when stuck, balance pairs of other GPUs
    // (which changes what the busiest GPU can trade with) and descend again,
    // until two rounds in a row gain nothing, the bound is reached or time
    // is up.
    const double bound = flat_lower_bound(p_) * (1 + 1e-9);
    int stalled = 0;
    for (int round = 0; round < 50 && stalled < 2; ++round) {
      const double before = max_load();
      descend(bound);
      if (!pair_splits_ || max_load() <= bound || out_of_time()) return;
      stalled = max_load() < before * (1 - kRelativeStep) ? 0 : stalled + 1;
      if (!balance_pairs()) return;
    }
  }

 private:
  double max_load() const { return *std::max_element(load_.begin(), load_.end()); }
  bool out_of_time() const {
    return deadline_ != Deadline::max() && std::chrono::steady_clock::now() >= deadline_;
  }

  void descend(double bound) {
    // Every accepted move lowers the sorted load vector lexicographically,
    // so this ends; the cap only guards against floating-point cycling.
    const int max_moves = 20 * p_.gpus * p_.slots + 100;
    for (int moves = 0; moves < max_moves && max_load() > bound && !out_of_time(); ++moves) {
      const int g = static_cast<int>(std::max_element(load_.begin(), load_.end()) - load_.begin());
      const double limit = load_[g] * (1 - kRelativeStep);
      Move best;
      best.new_max = limit;
      if (pair_splits_) {
        find_pair(g, best, -1);
      } else {
        find_swap(g, best);
      }
      find_transfer(g, best);
      find_relief(g, best);
      if (best.kind == 0) return;
      apply(g, best);
    }
  }

  /// Re-splits pairs of GPUs (the busiest few against all others) so that
  /// the heavier of the two drops; true when something changed. The global
  /// maximum never rises: a pair's new loads stay below its old maximum.
  bool balance_pairs() {
    const long splits = binomial(2 * p_.slots, p_.slots);
    const int heads = std::max(1, std::min(p_.gpus, static_cast<int>(200000 / (splits * p_.gpus + 1))));
    std::vector<int> order(p_.gpus);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return load_[a] > load_[b]; });
    bool changed = false;
    for (int i = 0; i < heads; ++i) {
      const int g = order[i];
      Move best;
      best.new_max = load_[g] * (1 - 1e-9);
      find_pair(g, best, g);
      if (best.kind == 0) continue;
      apply(g, best);
      changed = true;
    }
    return changed;
  }

  double share(int e) const { return p_.loads[e] / pl_.replicas[e]; }
  bool holds(int e, int g) const { return holds_[static_cast<size_t>(e) * p_.gpus + g] != 0; }
  void set_holds(int e, int g, bool on) { holds_[static_cast<size_t>(e) * p_.gpus + g] = on ? 1 : 0; }

  /// The 2S replicas of the busiest GPU g and another GPU h split anew into
  /// two sets of S (distinct experts on each side). A split keeps subset A
  /// of g's replicas and takes subset B of h's, |A| + |B| = S; subset sums
  /// are tabulated once per GPU. `lighter_than` >= 0: only partners lighter
  /// than that GPU.
  void find_pair(int g, Move& best, int lighter_than) const {
    const int S = p_.slots;
    const unsigned subsets = 1u << S;
    std::vector<double> mine(subsets), theirs(subsets);
    sums(g, mine);
    std::vector<std::pair<int, int>> common;
    for (int h = 0; h < p_.gpus; ++h) {
      if (h == g || (lighter_than >= 0 && load_[h] >= load_[lighter_than])) continue;
      const double both = load_[g] + load_[h];
      if (both / 2 >= best.new_max) continue;
      sums(h, theirs);
      common.clear();
      for (int i = 0; i < S; ++i) {
        for (int j = 0; j < S; ++j) {
          if (pl_.gpu_experts[g][i] == pl_.gpu_experts[h][j]) common.emplace_back(i, j);
        }
      }
      for (unsigned keep = 0; keep < subsets; ++keep) {
        for (unsigned take : by_size_[S - std::popcount(keep)]) {
          const double load = mine[keep] + theirs[take];
          const double worst = std::max(load, both - load);
          if (worst >= best.new_max) continue;
          bool distinct = true;
          for (const auto& [i, j] : common) distinct = distinct && ((keep >> i & 1u) != (take >> j & 1u));
          if (distinct) best = Move{worst, 3, 0, h, 0, 0, keep | take << S};
        }
      }
    }
  }

  /// out[mask] = summed shares of GPU g's replicas in mask.
  void sums(int g, std::vector<double>& out) const {
    out[0] = 0;
    for (unsigned mask = 1; mask < out.size(); ++mask) {
      const int low = std::countr_zero(mask);
      out[mask] = out[mask & (mask - 1)] + share(pl_.gpu_experts[g][low]);
    }
  }

  void find_swap(int g, Move& best) const {
    const std::vector<int>& mine = pl_.gpu_experts[g];
    // One slot's scan is gpus x slots pairs: with thousands of experts per
    // GPU the whole scan outlasts any time limit, so the clock is read per
    // slot and the best move so far is kept.
    for (int s = 0; s < p_.slots && !out_of_time(); ++s) {
      const int a = mine[s];
      const double la = share(a);
      for (int h = 0; h < p_.gpus; ++h) {
        if (h == g || holds(a, h)) continue;
        for (int t = 0; t < p_.slots; ++t) {
          const int b = pl_.gpu_experts[h][t];
          const double lb = share(b);
          if (lb >= la || holds(b, g)) continue;
          const double worst = std::max(load_[g] - la + lb, load_[h] - lb + la);
          if (worst < best.new_max) best = Move{worst, 1, s, h, t, 0, 0u};
        }
      }
    }
  }

  /// Slot s of GPU g gives up its replica of expert a (which keeps at least
  /// one elsewhere) and takes a new replica of another expert b.
  void find_transfer(int g, Move& best) const {
    const int experts = static_cast<int>(p_.loads.size());
    int cheapest = -1;
    double cheapest_share = 0;
    for (int b = 0; b < experts; ++b) {
      if (holds(b, g) || pl_.replicas[b] >= p_.gpus) continue;
      const double next = p_.loads[b] / (pl_.replicas[b] + 1);
      if (cheapest < 0 || next < cheapest_share) {
        cheapest = b;
        cheapest_share = next;
      }
    }
    if (cheapest < 0) return;
    for (int s = 0; s < p_.slots; ++s) {
      const int a = pl_.gpu_experts[g][s];
      const int count = pl_.replicas[a];
      if (count < 2) continue;
      const double rise = p_.loads[a] / (count - 1) - p_.loads[a] / count;
      double worst = load_[g] - share(a) + cheapest_share;
      for (int h = 0; h < p_.gpus && worst < best.new_max; ++h) {
        if (h != g && holds(a, h)) worst = std::max(worst, load_[h] + rise);
      }
      if (worst < best.new_max) best = Move{worst, 2, s, 0, 0, cheapest, 0u};
    }
  }

  /// An expert b of the busiest GPU g gets one more replica, on a GPU x that
  /// gives up a replica of another expert a (which keeps one elsewhere):
  /// every holder of b gets lighter, every other holder of a heavier.
  void find_relief(int g, Move& best) const {
    const int experts = static_cast<int>(p_.loads.size());
    std::vector<std::vector<int>> holders(experts);
    for (int h = 0; h < p_.gpus; ++h) {
      for (int e : pl_.gpu_experts[h]) holders[e].push_back(h);
    }
    for (int b : pl_.gpu_experts[g]) {
      if (out_of_time()) return;
      const int cb = pl_.replicas[b];
      if (cb >= p_.gpus) continue;
      const double drop = p_.loads[b] / cb - p_.loads[b] / (cb + 1);
      for (int x = 0; x < p_.gpus; ++x) {
        if (holds(b, x)) continue;
        for (int t = 0; t < p_.slots; ++t) {
          const int a = pl_.gpu_experts[x][t];
          const int ca = pl_.replicas[a];
          if (ca < 2) continue;
          const double rise = p_.loads[a] / (ca - 1) - p_.loads[a] / ca;
          double worst = load_[x] - share(a) + p_.loads[b] / (cb + 1);
          worst = std::max(worst, load_[g] - drop + (holds(a, g) ? rise : 0.0));
          for (int h : holders[a]) {
            if (h == x || h == g) continue;
            worst = std::max(worst, load_[h] + rise - (holds(b, h) ? drop : 0.0));
            if (worst >= best.new_max) break;
          }
          if (worst < best.new_max) best = Move{worst, 4, 0, x, t, b, 0u};
        }
      }
    }
  }

  void apply(int g, const Move& m) {
    if (m.kind == 4) {
      int& slot = pl_.gpu_experts[m.other_gpu][m.other_slot];
      set_holds(slot, m.other_gpu, false);
      --pl_.replicas[slot];
      ++pl_.replicas[m.to_expert];
      slot = m.to_expert;
      set_holds(slot, m.other_gpu, true);
      load_ = flat_gpu_loads(p_, pl_);
      return;
    }
    if (m.kind == 3) {
      const int h = m.other_gpu;
      std::vector<int> item = pl_.gpu_experts[g];
      item.insert(item.end(), pl_.gpu_experts[h].begin(), pl_.gpu_experts[h].end());
      for (int e : pl_.gpu_experts[g]) set_holds(e, g, false);
      for (int e : pl_.gpu_experts[h]) set_holds(e, h, false);
      pl_.gpu_experts[g].clear();
      pl_.gpu_experts[h].clear();
      for (size_t i = 0; i < item.size(); ++i) {
        const int to = (m.mask >> i & 1u) ? g : h;
        pl_.gpu_experts[to].push_back(item[i]);
        set_holds(item[i], to, true);
      }
      load_[g] = 0;
      load_[h] = 0;
      for (int e : pl_.gpu_experts[g]) load_[g] += share(e);
      for (int e : pl_.gpu_experts[h]) load_[h] += share(e);
      return;
    }
    if (m.kind == 1) {
      int& a = pl_.gpu_experts[g][m.slot];
      int& b = pl_.gpu_experts[m.other_gpu][m.other_slot];
      const double delta = share(a) - share(b);
      load_[g] -= delta;
      load_[m.other_gpu] += delta;
      set_holds(a, g, false);
      set_holds(b, m.other_gpu, false);
      std::swap(a, b);
      set_holds(a, g, true);
      set_holds(b, m.other_gpu, true);
      return;
    }
    const int a = pl_.gpu_experts[g][m.slot];
    const int b = m.to_expert;
    set_holds(a, g, false);
    --pl_.replicas[a];
    ++pl_.replicas[b];
    pl_.gpu_experts[g][m.slot] = b;
    set_holds(b, g, true);
    // Loads of every GPU holding a or b change: recompute them exactly.
    load_ = flat_gpu_loads(p_, pl_);
  }

  Deadline deadline_;
  const FlatProblem& p_;
  FlatPlacement& pl_;
  std::vector<char> holds_;
  std::vector<double> load_;
  bool pair_splits_;
  /// Masks of `slots` bits grouped by how many bits are set.
  std::vector<std::vector<unsigned>> by_size_;
};

}  // namespace

std::vector<int> replicate(const std::vector<double>& loads, int extra, int cap) {
  const int experts = static_cast<int>(loads.size());
  std::vector<int> count(experts, 1);
  auto lighter = [&](int a, int b) {
    const double la = loads[a] / count[a];
    const double lb = loads[b] / count[b];
    return la != lb ? la < lb : a > b;
  };
  std::priority_queue<int, std::vector<int>, decltype(lighter)> heap(lighter);
  for (int e = 0; e < experts; ++e) {
    if (cap > 1) heap.push(e);
  }
  while (extra > 0 && !heap.empty()) {
    const int e = heap.top();
    heap.pop();
    ++count[e];
    --extra;
    if (count[e] < cap) heap.push(e);
  }
  return count;
}

std::vector<int> greedy_replicas(const FlatProblem& p) {
  return replicate(p.loads, p.gpus * p.slots - static_cast<int>(p.loads.size()), p.gpus);
}

FlatPlacement pack_replicas(const FlatProblem& p, const std::vector<int>& replicas) {
  const int experts = static_cast<int>(p.loads.size());
  std::vector<Replica> items;
  for (int e = 0; e < experts; ++e) {
    for (int k = 0; k < replicas[e]; ++k) items.push_back({e, p.loads[e] / replicas[e]});
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const Replica& a, const Replica& b) { return a.load > b.load; });

  FlatPlacement out;
  out.replicas = replicas;
  out.gpu_experts.assign(p.gpus, {});
  std::vector<double> load(p.gpus, 0);
  std::vector<char> holds(static_cast<size_t>(experts) * p.gpus, 0);
  auto at = [&](int e, int g) -> char& { return holds[static_cast<size_t>(e) * p.gpus + g]; };
  // The least-loaded open GPU without the item's expert, lowest index on a
  // tie: a heap of (load, GPU) with stale entries dropped when popped (a
  // linear scan per replica is gpus x replicas, seconds for 10^4 experts on
  // 10^3 GPUs).
  using Entry = std::pair<double, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> open_gpus;
  for (int g = 0; g < p.gpus; ++g) open_gpus.emplace(0.0, g);
  const auto is_open = [&](int g) { return static_cast<int>(out.gpu_experts[g].size()) < p.slots; };
  std::vector<Entry> holding;
  for (const Replica& item : items) {
    int best = -1;
    holding.clear();
    while (!open_gpus.empty()) {
      const Entry top = open_gpus.top();
      open_gpus.pop();
      const int g = top.second;
      if (!is_open(g) || top.first != load[g]) continue;
      if (at(item.expert, g)) {
        holding.push_back(top);
        continue;
      }
      best = g;
      break;
    }
    for (const Entry& e : holding) open_gpus.push(e);
    if (best < 0) {
      // Every GPU with a free slot already holds this expert. A full GPU g
      // without it exists (count <= gpus), and g holds some expert that the
      // open GPU h lacks (h has fewer slots filled than g's distinct experts):
      // move that one to h and take its slot.
      int open = 0;
      while (static_cast<int>(out.gpu_experts[open].size()) >= p.slots) ++open;
      int full = 0;
      while (at(item.expert, full)) ++full;
      std::vector<int>& from = out.gpu_experts[full];
      const auto moved = std::find_if(from.begin(), from.end(), [&](int e) { return !at(e, open); });
      const int e = *moved;
      const double share = p.loads[e] / replicas[e];
      from.erase(moved);
      at(e, full) = 0;
      load[full] -= share;
      out.gpu_experts[open].push_back(e);
      at(e, open) = 1;
      load[open] += share;
      if (is_open(open)) open_gpus.emplace(load[open], open);
      best = full;
    }
    out.gpu_experts[best].push_back(item.expert);
    at(item.expert, best) = 1;
    load[best] += item.load;
    if (is_open(best)) open_gpus.emplace(load[best], best);
  }
  return out;
}

void improve_placement(const FlatProblem& problem, FlatPlacement& placement, Deadline deadline) {
  Improver(problem, placement, deadline).run();
}

std::vector<double> flat_gpu_loads(const FlatProblem& p, const FlatPlacement& placement) {
  std::vector<double> load(p.gpus, 0);
  for (int g = 0; g < p.gpus; ++g) {
    for (int e : placement.gpu_experts[g]) load[g] += p.loads[e] / placement.replicas[e];
  }
  return load;
}

double flat_max_load(const FlatProblem& p, const FlatPlacement& placement) {
  const std::vector<double> load = flat_gpu_loads(p, placement);
  return load.empty() ? 0 : *std::max_element(load.begin(), load.end());
}

double flat_lower_bound(const FlatProblem& p) {
  const std::vector<int> count = greedy_replicas(p);
  double worst_share = 0;
  for (size_t e = 0; e < count.size(); ++e) worst_share = std::max(worst_share, p.loads[e] / count[e]);
  const double total = std::accumulate(p.loads.begin(), p.loads.end(), 0.0);
  return std::max(total / p.gpus, worst_share);
}

}  // namespace parplan
