// Greedy replication, balanced packing and local improvement of one flat
// expert-placement problem.
#include "solvers/expert_placement_heuristic.h"

#include <algorithm>
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
  int kind = 0;  // 1 swap, 2 transfer
  int slot = 0, other_gpu = 0, other_slot = 0, to_expert = 0;
};

class Improver {
 public:
  Improver(const FlatProblem& p, FlatPlacement& placement)
      : p_(p), pl_(placement), holds_(holding(p, placement)), load_(flat_gpu_loads(p, placement)) {}

  void run() {
    // Every accepted move lowers the sorted load vector lexicographically,
    // so this ends; the cap only guards against floating-point cycling.
    const int max_moves = 20 * p_.gpus * p_.slots + 100;
    for (int moves = 0; moves < max_moves; ++moves) {
      const int g = static_cast<int>(std::max_element(load_.begin(), load_.end()) - load_.begin());
      const double limit = load_[g] * (1 - kRelativeStep);
      Move best;
      best.new_max = limit;
      find_swap(g, best);
      find_transfer(g, best);
      if (best.kind == 0) return;
      apply(g, best);
    }
  }

 private:
  double share(int e) const { return p_.loads[e] / pl_.replicas[e]; }
  bool holds(int e, int g) const { return holds_[static_cast<size_t>(e) * p_.gpus + g] != 0; }
  void set_holds(int e, int g, bool on) { holds_[static_cast<size_t>(e) * p_.gpus + g] = on ? 1 : 0; }

  void find_swap(int g, Move& best) const {
    const std::vector<int>& mine = pl_.gpu_experts[g];
    for (int s = 0; s < p_.slots; ++s) {
      const int a = mine[s];
      const double la = share(a);
      for (int h = 0; h < p_.gpus; ++h) {
        if (h == g || holds(a, h)) continue;
        for (int t = 0; t < p_.slots; ++t) {
          const int b = pl_.gpu_experts[h][t];
          const double lb = share(b);
          if (lb >= la || holds(b, g)) continue;
          const double worst = std::max(load_[g] - la + lb, load_[h] - lb + la);
          if (worst < best.new_max) best = Move{worst, 1, s, h, t, 0};
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
      if (worst < best.new_max) best = Move{worst, 2, s, 0, 0, cheapest};
    }
  }

  void apply(int g, const Move& m) {
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

  const FlatProblem& p_;
  FlatPlacement& pl_;
  std::vector<char> holds_;
  std::vector<double> load_;
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
  std::stable_sort(items.begin(), items.end(), [](const Replica& a, const Replica& b) { return a.load > b.load; });

  FlatPlacement out;
  out.replicas = replicas;
  out.gpu_experts.assign(p.gpus, {});
  std::vector<double> load(p.gpus, 0);
  std::vector<char> holds(static_cast<size_t>(experts) * p.gpus, 0);
  auto at = [&](int e, int g) -> char& { return holds[static_cast<size_t>(e) * p.gpus + g]; };
  for (const Replica& item : items) {
    int best = -1;
    for (int g = 0; g < p.gpus; ++g) {
      if (static_cast<int>(out.gpu_experts[g].size()) >= p.slots || at(item.expert, g)) continue;
      if (best < 0 || load[g] < load[best]) best = g;
    }
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
      best = full;
    }
    out.gpu_experts[best].push_back(item.expert);
    at(item.expert, best) = 1;
    load[best] += item.load;
  }
  return out;
}

void improve_placement(const FlatProblem& problem, FlatPlacement& placement) {
  Improver(problem, placement).run();
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
