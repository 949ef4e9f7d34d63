#include "solvers/expert_placement_count_bound.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <utility>

namespace parplan {

namespace {

// Most work for_each_count_vector's callers may do, in vectors x (replicas
// + slots per GPU squared): about a second. A layer of 1,000 replicas on 32
// GPUs at max_vectors (20,000) is 2.2e7.
constexpr double kMaxCountVectorWork = 1e8;

// Count vectors with `extra` replicas beyond one each over `experts`
// experts, each at most cap - 1 extra; saturates at limit + 1.
long count_vectors(int experts, int extra, int cap, long limit) {
  std::vector<long> ways(extra + 1, 0);
  ways[0] = 1;
  for (int e = 0; e < experts; ++e) {
    std::vector<long> next(extra + 1, 0);
    for (int used = 0; used <= extra; ++used) {
      if (ways[used] == 0) continue;
      for (int k = 0; k <= cap - 1 && used + k <= extra; ++k)
        next[used + k] = std::min(limit + 1, next[used + k] + ways[used]);
    }
    ways = std::move(next);
  }
  return ways[extra];
}

// The bound of one count vector's sorted replica loads (descending).
double dealt_bound(const std::vector<double>& x, int gpus, int slots, double mean) {
  const int p = static_cast<int>(x.size());
  // suffix[j]: sum of x[j..p-1] (the smallest p - j replicas).
  static thread_local std::vector<double> suffix;
  suffix.assign(p + 1, 0.0);
  for (int j = p - 1; j >= 0; --j) suffix[j] = suffix[j + 1] + x[j];
  // Sum of the `n` smallest replicas outside positions [from, to).
  const auto smallest_outside = [&](int n, int from, int to) {
    double sum = 0;
    for (int j = p - 1; j >= 0 && n > 0; --j) {
      if (j >= from && j < to) continue;
      sum += x[j];
      --n;
    }
    return sum;
  };
  double bound = mean;
  for (int k = 1; k <= slots; ++k) {
    const int m = (k - 1) * gpus + 1;  // top m replicas: one GPU holds k of them
    if (m > p) break;
    double held = 0;
    for (int j = m - k; j < m; ++j) held += x[j];
    bound = std::max(bound, held + smallest_outside(slots - k, m - k, m));
  }
  if (slots == 2) {
    for (int i = 1; i <= gpus; ++i) bound = std::max(bound, x[i - 1] + x[p - i]);
  } else if (slots >= 3) {
    for (int i = 1; i <= gpus; ++i) {
      const int partners = i * (slots - 1);
      if (i + partners > p) break;
      const double apart = x[i - 1] + (suffix[p - partners] - suffix[p]) / i;
      const double shared = i >= 2 ? x[i - 2] + x[i - 1] + smallest_outside(slots - 2, i - 2, i) : apart;
      bound = std::max(bound, std::min(apart, shared));
    }
  }
  return bound;
}

// Calls `visit(count)` for every count vector (1 <= count[e] <= cap, the
// sum experts + redundant); false when there are more than max_vectors (then
// none is visited) or the slots do not divide among the GPUs.
bool for_each_count_vector(int experts, int gpus, int redundant, int cap, long max_vectors,
                           const std::function<void(const std::vector<int>&)>& visit) {
  const int physical = experts + redundant;
  if (experts == 0 || gpus <= 0 || physical % gpus != 0 || cap < 1) return false;
  // At least C(experts, redundant) vectors give single extra replicas
  // (cap >= 2): a cheap refusal of the large layers before counting.
  if (cap >= 2 && redundant <= experts &&
      std::lgamma(experts + 1.0) - std::lgamma(redundant + 1.0) - std::lgamma(experts - redundant + 1.0) >
          std::log(static_cast<double>(max_vectors)))
    return false;
  const long vectors = count_vectors(experts, redundant, cap, max_vectors);
  if (vectors > max_vectors) return false;
  // Each vector costs its replicas sorted and a bound quadratic in the
  // slots per GPU: a layer of a million experts on a few GPUs took minutes.
  const double slots = static_cast<double>(physical / gpus);
  if (static_cast<double>(vectors) * (physical + slots * slots) > kMaxCountVectorWork) return false;
  // Lexicographic in the extras of experts 0..n-2 (the last takes what is
  // left), as a loop: recursion one level per expert overflowed a worker
  // thread's stack on layers of tens of thousands of experts.
  std::vector<int> count(experts, 1);
  int left = redundant;  // extras not given to experts 0..n-2
  while (true) {
    if (left <= cap - 1) {
      count[experts - 1] = 1 + left;
      visit(count);
    }
    // The last expert (before n-1) that can take one more extra; the ones
    // after it give theirs back.
    int e = experts - 2;
    while (e >= 0 && (left == 0 || count[e] == cap)) {
      left += count[e] - 1;
      count[e] = 1;
      --e;
    }
    if (e < 0) break;
    ++count[e];
    --left;
  }
  return true;
}

// A replica: its load and its expert.
struct DealtReplica {
  double load = 0;
  int expert = 0;
};

// The replicas of `count`, largest first (ties by expert id).
void sorted_replicas(const std::vector<double>& loads, const std::vector<int>& count,
                     std::vector<DealtReplica>& out) {
  out.clear();
  for (std::size_t e = 0; e < loads.size(); ++e)
    for (int r = 0; r < count[e]; ++r) out.push_back({loads[e] / count[e], static_cast<int>(e)});
  std::sort(out.begin(), out.end(), [](const DealtReplica& a, const DealtReplica& b) {
    return a.load != b.load ? a.load > b.load : a.expert < b.expert;
  });
}

}  // namespace

double replica_count_bound(const std::vector<double>& loads, int gpus, int redundant, int cap,
                           long max_vectors, std::chrono::steady_clock::time_point deadline) {
  const int experts = static_cast<int>(loads.size());
  const int slots = gpus > 0 ? (experts + redundant) / gpus : 0;
  const double mean = std::accumulate(loads.begin(), loads.end(), 0.0) / std::max(1, gpus);
  std::vector<DealtReplica> replicas;
  std::vector<double> x;
  double best = std::numeric_limits<double>::infinity();
  bool cut = false;
  long seen = 0;
  const bool visited =
      for_each_count_vector(experts, gpus, redundant, cap, max_vectors, [&](const auto& count) {
        // The clock every 64 vectors: reading it costs about as much as a
        // small vector's bound.
        if (cut || (seen++ % 64 == 0 && std::chrono::steady_clock::now() >= deadline)) {
          cut = true;
          return;
        }
        sorted_replicas(loads, count, replicas);
        x.clear();
        for (const DealtReplica& r : replicas) x.push_back(r.load);
        best = std::min(best, dealt_bound(x, gpus, slots, mean));
      });
  return visited && !cut && std::isfinite(best) ? best : 0;
}

std::vector<std::vector<int>> paired_placement(const std::vector<double>& loads, int gpus, int redundant,
                                               int cap, long max_vectors) {
  const int experts = static_cast<int>(loads.size());
  if (gpus <= 0 || experts + redundant != 2 * gpus) return {};
  std::vector<DealtReplica> replicas;
  std::vector<std::pair<DealtReplica, DealtReplica>> pairs(gpus), best_pairs;
  double best = std::numeric_limits<double>::infinity();
  const auto worst_of = [](const std::vector<std::pair<DealtReplica, DealtReplica>>& dealt) {
    double worst = 0;
    for (const auto& [a, b] : dealt) worst = std::max(worst, a.load + b.load);
    return worst;
  };
  const auto distinct = [](const std::pair<DealtReplica, DealtReplica>& pair) {
    return pair.first.expert != pair.second.expert;
  };
  for_each_count_vector(experts, gpus, redundant, cap, max_vectors, [&](const auto& count) {
    sorted_replicas(loads, count, replicas);
    const int p = static_cast<int>(replicas.size());
    for (int i = 0; i < gpus; ++i) pairs[i] = {replicas[i], replicas[p - 1 - i]};
    // A GPU given two replicas of one expert swaps its smaller one with the
    // smaller one of the pair that keeps the busiest GPU lowest.
    for (int i = 0; i < gpus; ++i) {
      if (distinct(pairs[i])) continue;
      int swap_with = -1;
      double swap_worst = std::numeric_limits<double>::infinity();
      for (int j = 0; j < gpus; ++j) {
        if (j == i) continue;
        std::pair<DealtReplica, DealtReplica> a = {pairs[i].first, pairs[j].second},
                                              b = {pairs[j].first, pairs[i].second};
        if (!distinct(a) || !distinct(b)) continue;
        const double worst = std::max(a.first.load + a.second.load, b.first.load + b.second.load);
        if (worst < swap_worst) swap_worst = worst, swap_with = j;
      }
      if (swap_with < 0) return;
      std::swap(pairs[i].second, pairs[swap_with].second);
    }
    const double worst = worst_of(pairs);
    if (worst < best) best = worst, best_pairs = pairs;
  });
  std::vector<std::vector<int>> gpu_experts;
  for (const auto& [a, b] : best_pairs) gpu_experts.push_back({a.expert, b.expert});
  return gpu_experts;
}

namespace {

// Most replicas one dealing searches: its recursion depth.
constexpr int kMaxDealtReplicas = 4096;

/// One count vector's replicas dealt by depth-first search (ExactDealing).
class Dealer {
 public:
  Dealer(int gpus, int slots, long& nodes_left) : gpus_(gpus), slots_(slots), nodes_left_(nodes_left) {}

  /// Searches below `best`; updates best and `out` on each better dealing.
  /// False when the node budget ran out.
  bool run(const std::vector<DealtReplica>& replicas, double& best, std::vector<std::vector<int>>& out) {
    replicas_ = &replicas;
    best_ = &best;
    out_ = &out;
    const int p = static_cast<int>(replicas.size());
    smallest_.assign(slots_ + 1, 0.0);
    for (int k = 1; k <= slots_ && k <= p; ++k) smallest_[k] = smallest_[k - 1] + replicas[p - k].load;
    load_.assign(gpus_, 0.0);
    free_.assign(gpus_, slots_);
    held_.assign(gpus_, {});
    return deal(0);
  }

 private:
  bool deal(int t) {
    if (--nodes_left_ < 0) return false;
    const std::vector<DealtReplica>& r = *replicas_;
    if (t == static_cast<int>(r.size())) {
      *best_ = *std::max_element(load_.begin(), load_.end());
      *out_ = held_;
      return true;
    }
    const DealtReplica& x = r[t];
    // Lightest GPUs first: good dealings early cut more.
    std::vector<int> order(gpus_);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return load_[a] < load_[b]; });
    bool tried_empty = false;
    for (int g : order) {
      if (free_[g] == 0) continue;
      if (std::find(held_[g].begin(), held_[g].end(), x.expert) != held_[g].end()) continue;
      if (free_[g] == slots_) {
        if (tried_empty) continue;
        tried_empty = true;
      }
      // This GPU ends at least at its load, this replica and the smallest
      // replicas its other free slots must take.
      if (load_[g] + x.load + smallest_[free_[g] - 1] >= *best_ * (1 - 1e-12)) continue;
      load_[g] += x.load;
      --free_[g];
      held_[g].push_back(x.expert);
      const bool finished = deal(t + 1);
      held_[g].pop_back();
      ++free_[g];
      load_[g] -= x.load;
      if (!finished) return false;
    }
    return true;
  }

  int gpus_, slots_;
  long& nodes_left_;
  const std::vector<DealtReplica>* replicas_ = nullptr;
  double* best_ = nullptr;
  std::vector<std::vector<int>>* out_ = nullptr;
  std::vector<double> smallest_, load_;
  std::vector<int> free_;
  std::vector<std::vector<int>> held_;
};

}  // namespace

ExactDealing exact_dealing(const std::vector<double>& loads, int gpus, int redundant, int cap,
                           double incumbent, long max_vectors, long max_nodes) {
  ExactDealing result;
  const int experts = static_cast<int>(loads.size());
  const int slots = gpus > 0 ? (experts + redundant) / gpus : 0;
  const double mean = std::accumulate(loads.begin(), loads.end(), 0.0) / std::max(1, gpus);
  std::vector<std::pair<double, std::vector<int>>> vectors;
  std::vector<DealtReplica> replicas;
  std::vector<double> x;
  const bool visited =
      for_each_count_vector(experts, gpus, redundant, cap, max_vectors, [&](const std::vector<int>& count) {
        sorted_replicas(loads, count, replicas);
        x.clear();
        for (const DealtReplica& r : replicas) x.push_back(r.load);
        vectors.emplace_back(dealt_bound(x, gpus, slots, mean), count);
      });
  if (!visited || slots < 1) return result;
  // Most promising first: the best dealing found early cuts the rest.
  std::stable_sort(vectors.begin(), vectors.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  double best = incumbent;
  long nodes_left = max_nodes;
  Dealer dealer(gpus, slots, nodes_left);
  result.proven = true;
  for (const auto& [bound, count] : vectors) {
    if (bound >= best * (1 - 1e-12)) break;
    // The dealing recurses once per replica: past kMaxDealtReplicas it would
    // outgrow a worker thread's stack (and could not finish in max_nodes).
    if (experts + redundant > kMaxDealtReplicas) {
      result.proven = false;
      break;
    }
    sorted_replicas(loads, count, replicas);
    if (!dealer.run(replicas, best, result.gpu_experts)) {
      result.proven = false;
      break;
    }
  }
  result.max_load = result.gpu_experts.empty() ? incumbent : best;
  return result;
}

}  // namespace parplan
