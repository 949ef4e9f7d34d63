// Test helper: the optimal busiest GPU of an expert placement by enumeration
// (small instances only).
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

namespace parplan::test {

/// Optimum by enumeration: every GPU picks S distinct experts (GPUs are
/// interchangeable, so the picks are non-decreasing in combination order);
/// the counts follow from the picks.
inline double brute_force(const std::vector<double>& loads, int gpus, int slots) {
  const int E = static_cast<int>(loads.size());
  std::vector<std::vector<int>> subsets;
  std::vector<int> pick;
  std::function<void(int)> choose = [&](int from) {
    if (static_cast<int>(pick.size()) == slots) {
      subsets.push_back(pick);
      return;
    }
    for (int e = from; e < E; ++e) {
      pick.push_back(e);
      choose(e + 1);
      pick.pop_back();
    }
  };
  choose(0);
  double best = 1e300;
  std::vector<int> chosen(gpus);
  std::function<void(int, int)> place = [&](int g, int first) {
    if (g == gpus) {
      std::vector<int> count(E, 0);
      for (int c : chosen) {
        for (int e : subsets[c]) ++count[e];
      }
      if (std::count(count.begin(), count.end(), 0) > 0) return;
      double worst = 0;
      for (int c : chosen) {
        double load = 0;
        for (int e : subsets[c]) load += loads[e] / count[e];
        worst = std::max(worst, load);
      }
      best = std::min(best, worst);
      return;
    }
    for (int c = first; c < static_cast<int>(subsets.size()); ++c) {
      chosen[g] = c;
      place(g + 1, c);
    }
  };
  place(0, 0);
  return best;
}

}  // namespace parplan::test
