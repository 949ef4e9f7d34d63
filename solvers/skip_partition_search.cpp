// Partition seeds, enumeration and local search for the SkipPipe solver.
#include "solvers/skip_partition_search.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <random>

namespace parplan {

double steady_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

SkipPartition block_partition(const std::vector<int>& sizes) {
  SkipPartition p(sizes.size());
  int node = 0;
  for (std::size_t s = 0; s < sizes.size(); ++s)
    for (int i = 0; i < sizes[s]; ++i) p[s].push_back(node++);
  return p;
}

SkipPartition chain_partition(const SkipNetwork& net, const std::vector<int>& sizes) {
  const int n = net.nodes;
  auto both_ways = [&](int a, int b) { return net.transfer(a, b) + net.transfer(b, a); };
  std::vector<bool> used(n, false);
  SkipPartition p(sizes.size());
  p[0].push_back(0);
  used[0] = true;
  while (static_cast<int>(p[0].size()) < sizes[0]) {
    int pick = -1;
    double pick_gap = -1;
    for (int c = 0; c < n; ++c) {
      if (used[c]) continue;
      double gap = std::numeric_limits<double>::infinity();
      for (int s : p[0]) gap = std::min(gap, both_ways(s, c));
      if (gap > pick_gap) pick_gap = gap, pick = c;
    }
    p[0].push_back(pick);
    used[pick] = true;
  }
  std::vector<int> head = p[0];
  const int chains = static_cast<int>(head.size());
  int turn = 0;
  for (std::size_t s = 1; s < sizes.size(); ++s) {
    for (int i = 0; i < sizes[s]; ++i, ++turn) {
      const int chain = turn % chains;
      int pick = -1;
      for (int c = 0; c < n; ++c)
        if (!used[c] && (pick < 0 || both_ways(head[chain], c) < both_ways(head[chain], pick))) pick = c;
      p[s].push_back(pick);
      used[pick] = true;
      head[chain] = pick;
    }
  }
  for (auto& stage : p) std::sort(stage.begin(), stage.end());
  return p;
}

double partition_count(const std::vector<int>& sizes) {
  double log_count = 0;
  int total = 0;
  for (int size : sizes) {
    for (int i = 1; i <= size; ++i) log_count += std::log(static_cast<double>(total + i) / i);
    total += size;
  }
  return std::exp(log_count);
}

void for_each_partition(int nodes, const std::vector<int>& sizes,
                        const std::function<bool(const SkipPartition&)>& visit) {
  SkipPartition p(sizes.size());
  bool go_on = true;
  std::function<void(int)> place = [&](int node) {
    if (!go_on) return;
    if (node == nodes) {
      go_on = visit(p);
      return;
    }
    for (std::size_t s = 0; s < sizes.size() && go_on; ++s) {
      if (static_cast<int>(p[s].size()) == sizes[s]) continue;
      p[s].push_back(node);
      place(node + 1);
      p[s].pop_back();
    }
  };
  place(0);
}

PartitionSearchResult local_search_partition(const SkipPartition& start,
                                             const std::function<double(const SkipPartition&)>& score,
                                             int max_evaluations, double start_clock_s, double deadline_s) {
  constexpr int kBatch = 24;
  constexpr int kPatienceRounds = 5;
  PartitionSearchResult r{start, score(start), 1, false};
  std::map<SkipPartition, double> scored{{start, r.makespan_s}};
  std::mt19937 rng(20250101);
  int stale_rounds = 0;
  while (r.evaluations < max_evaluations && stale_rounds < kPatienceRounds) {
    if (steady_now_s() - start_clock_s > deadline_s) {
      r.time_limited = true;
      break;
    }
    std::vector<std::pair<int, int>> slots;
    for (std::size_t s = 0; s < r.best.size(); ++s)
      for (std::size_t i = 0; i < r.best[s].size(); ++i)
        slots.emplace_back(static_cast<int>(s), static_cast<int>(i));
    std::vector<std::pair<int, int>> swaps;
    for (std::size_t a = 0; a < slots.size(); ++a)
      for (std::size_t b = a + 1; b < slots.size(); ++b)
        if (slots[a].first != slots[b].first) swaps.emplace_back(static_cast<int>(a), static_cast<int>(b));
    std::shuffle(swaps.begin(), swaps.end(), rng);
    const int batch =
        std::min<int>({kBatch, static_cast<int>(swaps.size()), max_evaluations - r.evaluations});
    std::vector<SkipPartition> tries(batch, r.best);
    std::vector<double> values(batch);
    for (int t = 0; t < batch; ++t) {
      const auto [sa, ia] = slots[swaps[t].first];
      const auto [sb, ib] = slots[swaps[t].second];
      std::swap(tries[t][sa][ia], tries[t][sb][ib]);
      std::sort(tries[t][sa].begin(), tries[t][sa].end());
      std::sort(tries[t][sb].begin(), tries[t][sb].end());
    }
    // Rounds without gain draw swaps of the same partition again, and a swap
    // back gives an earlier partition: those scores are known (the score is
    // a pure function), so only new partitions are scored. They still count
    // as evaluations, so the search takes the same steps.
    std::vector<int> fresh;
    for (int t = 0; t < batch; ++t) {
      const auto known = scored.find(tries[t]);
      if (known == scored.end()) {
        fresh.push_back(t);
      } else {
        values[t] = known->second;
      }
    }
    tbb::parallel_for(0, static_cast<int>(fresh.size()),
                      [&](int f) { values[fresh[f]] = score(tries[fresh[f]]); });
    for (int t : fresh) scored.emplace(tries[t], values[t]);
    r.evaluations += batch;
    int best = -1;
    for (int t = 0; t < batch; ++t)
      if (values[t] < r.makespan_s - 1e-9 && (best < 0 || values[t] < values[best])) best = t;
    if (best >= 0) {
      r.best = tries[best];
      r.makespan_s = values[best];
      stale_rounds = 0;
    } else {
      ++stale_rounds;
    }
  }
  return r;
}

}  // namespace parplan
