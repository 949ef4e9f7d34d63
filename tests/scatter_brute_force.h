// Brute force for sequence scattering on tiny steps: every partition of the
// sequences into groups, every size per group, every grouping of the groups
// into micro-batches. The reference the solver is tested against.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "cost/scatter_coefficients.h"

namespace parplan::test {

/// Calls `visit` with each set partition of {0..n-1} (block index per item).
inline void for_each_partition(int n, const std::function<void(const std::vector<int>&, int)>& visit) {
  std::vector<int> block(n, 0);
  std::function<void(int, int)> rec = [&](int i, int blocks) {
    if (i == n) {
      visit(block, blocks);
      return;
    }
    for (int b = 0; b <= blocks; ++b) {
      block[i] = b;
      rec(i + 1, std::max(blocks, b + 1));
    }
  };
  rec(0, 0);
}

/// The optimal step time (ms), +inf when no plan exists.
inline double brute_force_step_ms(const std::vector<std::int64_t>& lengths, int gpus,
                                  const ScatterCoefficients& c) {
  const int n = static_cast<int>(lengths.size());
  const int sizes = static_cast<int>(c.group_sizes.size());
  double best = std::numeric_limits<double>::infinity();
  for_each_partition(n, [&](const std::vector<int>& block, int groups) {
    std::vector<double> tokens(groups, 0);
    for (int i = 0; i < n; ++i) tokens[block[i]] += static_cast<double>(lengths[i]);
    std::vector<int> size_of(groups, 0);
    std::function<void(int)> choose = [&](int g) {
      if (g == groups) {
        std::vector<double> time(groups, c.fixed_ms);
        for (int i = 0; i < n; ++i)
          time[block[i]] += scatter_sequence_ms(c, size_of[block[i]], static_cast<double>(lengths[i]));
        for_each_partition(groups, [&](const std::vector<int>& mb, int mbs) {
          std::vector<int> width(mbs, 0);
          std::vector<double> mb_time(mbs, 0);
          for (int k = 0; k < groups; ++k) {
            width[mb[k]] += c.group_sizes[size_of[k]];
            mb_time[mb[k]] = std::max(mb_time[mb[k]], time[k]);
          }
          double total = 0;
          for (int m = 0; m < mbs; ++m) {
            if (width[m] > gpus) return;
            total += mb_time[m];
          }
          best = std::min(best, total);
        });
        return;
      }
      for (int j = 0; j < sizes; ++j) {
        if (tokens[g] > c.group_sizes[j] * c.token_capacity_per_gpu) continue;
        size_of[g] = j;
        choose(g + 1);
      }
    };
    choose(0);
  });
  return best;
}

}  // namespace parplan::test
