// Brute force for sequence scattering on tiny steps: every partition of the
// sequences into groups, every size per group, every grouping of the groups
// into micro-batches. The reference the solver is tested against; and a
// dynamic program over subsets that reaches the optimum of larger steps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "cost/scatter_coefficients.h"
#include "solvers/sequence_scatter_internal.h"

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

/// The least time (ms) of one micro-batch running each subset S of the
/// sequences (index: bit i for sequence i; +inf when none holds S), by
/// dynamic programming over subsets: best(S, w) is the least time of one
/// micro-batch running the sequences S on w units of the smallest group
/// size (the group holding S's first sequence, at each size and over each
/// subset of the others, beside the best of the rest on the units left;
/// every size divides the larger ones, so any sizes summing to at most G lie
/// on aligned blocks).
inline std::vector<double> subset_micro_batch_ms(const std::vector<std::int64_t>& lengths, int gpus,
                                                 const ScatterCoefficients& c) {
  const int n = static_cast<int>(lengths.size());
  const int sizes = static_cast<int>(c.group_sizes.size());
  const std::uint32_t all = (std::uint32_t{1} << n) - 1;
  const size_t subsets = size_t{1} << n;
  std::vector<double> tokens(subsets, 0), work(subsets * sizes, 0);
  for (std::uint32_t t = 1; t <= all; ++t) {
    const int i = __builtin_ctz(t);
    const std::uint32_t rest = t & (t - 1);
    tokens[t] = tokens[rest] + static_cast<double>(lengths[i]);
    for (int j = 0; j < sizes; ++j)
      work[t * sizes + j] =
          work[rest * sizes + j] + scatter_sequence_ms(c, j, static_cast<double>(lengths[i]));
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int unit = c.group_sizes.front();
  const int units = gpus / unit;
  const size_t widths = static_cast<size_t>(units) + 1;
  std::vector<double> best(subsets * widths, kInf);
  for (size_t w = 0; w < widths; ++w) best[w] = 0;
  for (std::uint32_t s = 1; s <= all; ++s) {
    double* row = &best[s * widths];
    const std::uint32_t first = s & (~s + 1);
    const std::uint32_t others = s ^ first;
    for (std::uint32_t sub = others;; sub = (sub - 1) & others) {
      const std::uint32_t t = sub | first;
      const double* rest_row = &best[(s ^ t) * widths];
      for (int j = 0; j < sizes; ++j) {
        if (tokens[t] > c.group_sizes[j] * c.token_capacity_per_gpu) continue;
        const double group_ms = c.fixed_ms + work[t * sizes + j];
        const int p = c.group_sizes[j] / unit;
        for (int w = p; w <= units; ++w) row[w] = std::min(row[w], std::max(group_ms, rest_row[w - p]));
      }
      if (sub == 0) break;
    }
  }
  std::vector<double> micro_batch(subsets);
  for (size_t t = 0; t < subsets; ++t) micro_batch[t] = best[t * widths + units];
  return micro_batch;
}

/// The optimal step time (ms) by dynamic programming over subsets, for up
/// to about 18 sequences (3^n work): the least sum, over the partitions of
/// all sequences into micro-batches, of subset_micro_batch_ms (the
/// solver's least_sum_partition, itself checked against brute force over
/// every set partition in tests/scatter_partition_test.cpp). +inf when no
/// plan exists.
inline double subset_dp_step_ms(const std::vector<std::int64_t>& lengths, int gpus,
                                const ScatterCoefficients& c) {
  const std::vector<double> micro_batch = subset_micro_batch_ms(lengths, gpus, c);
  double step_ms = std::numeric_limits<double>::infinity();
  scatter_detail::least_sum_partition(micro_batch, static_cast<int>(lengths.size()), &step_ms);
  return step_ms;
}

}  // namespace parplan::test
