// Diagnosis for scatter_exact (not used by the solver): the duration-level
// LP with whole groups as columns, by column generation with exhaustive
// pricing over the subsets of a reduced step's sequences (n <= 18).
//
// Validity (as solvers/sequence_scatter_level_lp.cpp, with groups whole):
// micro-batch m lasts d + tau_m, tau_m its slowest group's time; it is at
// level k when theta_k <= tau_m < theta_{k+1} (theta_0 = 0, the top level
// open). Y_k counts the level-k micro-batches, D_k sums their tau, and
// z(k, j, P) counts their groups of size p_j running exactly the sequences
// P. Then every sequence is in one group; a level's groups are at most
// G Y_k GPUs wide and do at most G D_k GPU-ms; each of its groups lasts
// less than theta_{k+1} and holds at most p_j K tokens; D_k >= theta_k Y_k;
// and sum_k Y_k is the plan's whole number of micro-batches. The step lasts
// sum_k (d Y_k + D_k): the LP over real Y, D, z bounds every plan with that
// many micro-batches. Column generation stops when no column prices out
// (every subset, size and level tried), so its value is the LP's optimum.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cost/scatter_coefficients.h"
#include "solvers/milp_model.h"
#include "solvers/solve.h"

namespace parplan::diagnosis {

struct LevelPatternLp {
  double bound_ms = -std::numeric_limits<double>::infinity();
  int columns = 0;
  int rounds = 0;
};

inline LevelPatternLp level_pattern_lp_ms(const std::vector<std::int64_t>& lengths, int gpus,
                                          const ScatterCoefficients& c, int micro_batches, int levels) {
  const int n = static_cast<int>(lengths.size());
  const int sizes = static_cast<int>(c.group_sizes.size());
  const std::uint32_t all = (std::uint32_t{1} << n) - 1;
  const size_t subsets = size_t{1} << n;
  std::vector<double> tokens(subsets, 0), time(subsets * sizes, 0);
  double longest_time = 0;
  for (std::uint32_t t = 1; t <= all; ++t) {
    const int i = __builtin_ctz(t);
    const std::uint32_t rest = t & (t - 1);
    tokens[t] = tokens[rest] + static_cast<double>(lengths[i]);
    for (int j = 0; j < sizes; ++j) {
      time[t * sizes + j] =
          time[rest * sizes + j] + scatter_sequence_ms(c, j, static_cast<double>(lengths[i]));
      if (tokens[t] <= c.group_sizes[j] * c.token_capacity_per_gpu)
        longest_time = std::max(longest_time, time[t * sizes + j]);
    }
  }
  // Thresholds: geometric from the shortest single-sequence time to the
  // longest group time; the top level is open above.
  double shortest = std::numeric_limits<double>::infinity();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < sizes; ++j) shortest = std::min(shortest, time[(size_t{1} << i) * sizes + j]);
  std::vector<double> theta(levels + 1, 0.0);
  for (int k = 1; k <= levels; ++k)
    theta[k] = shortest * std::pow(longest_time / shortest, static_cast<double>(k - 1) / (levels - 1));
  const auto cap = [&](int k) {
    return k + 1 <= levels ? theta[k + 1] : std::numeric_limits<double>::infinity();
  };
  struct Column {
    int level, size;
    std::uint32_t set;
  };
  std::vector<Column> columns;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < sizes; ++j)
      for (int k = 0; k <= levels; ++k) {
        const std::uint32_t set = std::uint32_t{1} << i;
        if (tokens[set] <= c.group_sizes[j] * c.token_capacity_per_gpu && time[set * sizes + j] < cap(k))
          columns.push_back({k, j, set});
      }
  LevelPatternLp out;
  for (int round = 0; round < 500; ++round) {
    MilpModel model("level_patterns");
    std::vector<int> y(levels + 1), d(levels + 1);
    std::vector<MilpTerm> count;
    for (int k = 0; k <= levels; ++k) {
      y[k] = model.add_continuous("Y" + std::to_string(k), 0, n, c.fixed_ms);
      d[k] = model.add_continuous("D" + std::to_string(k), 0, std::numeric_limits<double>::infinity(), 1.0);
      count.push_back({y[k], 1.0});
    }
    std::vector<std::vector<MilpTerm>> cover(n), width(levels + 1), work(levels + 1);
    // An artificial cover per sequence at a prohibitive price keeps the
    // first rounds feasible; one left above zero at the end means no plan
    // has this many micro-batches.
    const double prohibitive = 1e6 * (c.fixed_ms + longest_time) * n;
    std::vector<int> artificial(n);
    for (int i = 0; i < n; ++i) {
      artificial[i] = model.add_continuous("a", 0, 1, prohibitive);
      cover[i].push_back({artificial[i], 1.0});
    }
    for (const Column& col : columns) {
      const int z = model.add_continuous("z", 0, std::numeric_limits<double>::infinity());
      const double p = c.group_sizes[col.size];
      for (std::uint32_t rest = col.set; rest != 0; rest &= rest - 1)
        cover[__builtin_ctz(rest)].push_back({z, 1.0});
      width[col.level].push_back({z, p});
      work[col.level].push_back({z, p * time[col.set * sizes + col.size]});
    }
    for (int i = 0; i < n; ++i) model.add_equal("cover", cover[i], 1.0);  // rows 0..n-1
    for (int k = 0; k <= levels; ++k) {
      width[k].push_back({y[k], -static_cast<double>(gpus)});
      model.add_less_equal("width", width[k], 0);  // rows n + 2k
      work[k].push_back({d[k], -static_cast<double>(gpus)});
      model.add_less_equal("work", work[k], 0);  // rows n + 2k + 1
    }
    for (int k = 0; k <= levels; ++k) model.add_greater_equal("floor", {{d[k], 1.0}, {y[k], -theta[k]}}, 0);
    model.add_equal("count", count, micro_batches);
    const SolveResult lp = solve(model, SolverBackend::kCbc);
    if (lp.certificate.status != SolveStatus::kOptimal || lp.row_duals.empty()) return out;
    out.bound_ms = lp.certificate.objective;
    out.rounds = round + 1;
    out.columns = static_cast<int>(columns.size());
    // Reduced cost of z(k, j, P): -pi(P) - p_j (sigma_k + rho_k t_j(P)).
    const std::vector<double>& dual = lp.row_duals;
    std::vector<double> pi_sum(subsets, 0);
    for (std::uint32_t t = 1; t <= all; ++t) pi_sum[t] = pi_sum[t & (t - 1)] + dual[__builtin_ctz(t)];
    int added = 0;
    for (int k = 0; k <= levels; ++k) {
      const double sigma = dual[n + 2 * k], rho = dual[n + 2 * k + 1];
      for (int j = 0; j < sizes; ++j) {
        const double p = c.group_sizes[j];
        double best = -1e-7 * std::abs(out.bound_ms);
        std::uint32_t best_set = 0;
        for (std::uint32_t t = 1; t <= all; ++t) {
          if (tokens[t] > p * c.token_capacity_per_gpu || time[t * sizes + j] >= cap(k)) continue;
          const double reduced = -pi_sum[t] - p * (sigma + rho * time[t * sizes + j]);
          if (reduced < best) best = reduced, best_set = t;
        }
        if (best_set != 0) columns.push_back({k, j, best_set}), ++added;
      }
    }
    if (added == 0) {  // no column prices out: the LP's optimum
      for (int i = 0; i < n; ++i)
        if (lp.values[artificial[i]] > 1e-9) out.bound_ms = std::numeric_limits<double>::infinity();
      return out;
    }
  }
  out.bound_ms = -std::numeric_limits<double>::infinity();  // did not converge: no bound
  return out;
}

}  // namespace parplan::diagnosis
