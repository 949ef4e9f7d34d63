// The duration-level LP bound of sequence scattering. Proof of validity:
// take any plan; micro-batch m lasts T_m = d + tau_m, tau_m its slowest
// group's work. Fix thresholds 0 = theta_0 < theta_1 < ... < theta_L
// (theta_{L+1} = +inf); micro-batch m is at level k when theta_k <= tau_m <
// theta_{k+1}. Let Y_k be the number of level-k micro-batches, D_k the sum of
// their tau_m, N_jk their groups of size p_j, and x_ijk = 1 when sequence i
// runs at size p_j in a level-k micro-batch. Then:
//  - D_k >= theta_k Y_k, and sum_k Y_k >= ceil(sum_i s_i / (G K));
//  - a level-k micro-batch lasts at least its GPU-ms over G: sum over its
//    sequences of p_j w_j(s_i) = a s_i^2 + (b + p_j c_j) s_i <= G D_k;
//  - its sizes sum to at most G: sum_j p_j N_jk <= G Y_k; a size-p_j group
//    holds at most p_j K tokens and at most t-1 sequences longer than
//    p_j K / t (t = 2, 3, 4), and works at most tau_m < theta_{k+1}, so its
//    GPU-ms is at most p_j theta_{k+1} (summed over the N_jk groups);
//  - x_ijk = 1 needs w_j(s_i) <= tau_m < theta_{k+1}, so x_ijk = 0 where
//    w_j(s_i) >= theta_{k+1}; and for one sequence i, a level holding it
//    has at least one micro-batch: sum_j x_ijk <= Y_k, whose tau is at least
//    its work there: D_k >= sum_j w_j(s_i) x_ijk.
//  - (LevelLpOptions::memory_held) a group of size p_j in micro-batch m
//    holds its p_j GPUs for tau_m, at least its work and at least
//    p_j theta_k; those holds sum to at most G tau_m. Summed over the level:
//    H_jk >= the groups' work, H_jk >= p_j theta_k N_jk, sum_j H_jk <= G D_k.
//    A group full to memory whose sequences are short cannot fill a long
//    micro-batch: its GPUs idle, and the LP now pays for it.
// The step time is d sum_k Y_k + sum_k D_k. Every plan gives a point of the
// LP below (with real instead of whole numbers), so its optimum is a lower
// bound. Sequences other than the slowest ones are aggregated in buckets
// (same crowding at every size, lengths within a ratio): per bucket, level
// and size the LP keeps their count x, tokens y and sum of squares q, with
// lo x <= y <= hi x and lo y <= q <= hi y (true of any subset of the bucket),
// and the bucket's totals; a bucket may enter a level when its shortest
// sequence could. Relaxing only removes constraints, so the bound stays
// valid. What it adds over the fluid bounds: a micro-batch that holds a long
// sequence lasts its time, while memory caps what the rest of its GPUs can
// do in it; the rest idles or the long sequences share micro-batches.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

#include "solvers/milp_model.h"
#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

struct Item {
  std::vector<int> signature;  // crowd level per size, -1 where it does not fit
  double count = 0;
  double tokens = 0;
  double squares = 0;
  double shortest = kInfinity;
  double longest = 0;
  bool single = false;
};

}  // namespace

double level_lp_bound_ms(const Instance& in, SolverBackend backend, Clock::time_point deadline,
                         const LevelLpOptions& options) {
  const int n = in.num_sequences();
  if (n == 0) return 0;
  const ScatterCoefficients& c = *in.coefficients;
  const double g = in.gpus;
  const double k_tokens = c.token_capacity_per_gpu;

  // The slowest sequences are items of their own.
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int x, int y) { return in.fastest_ms[x] > in.fastest_ms[y]; });
  const int singles = std::min(n, options.single_sequences);
  std::vector<Item> items;
  std::map<std::pair<std::vector<int>, int>, int> bucket_of;
  const double log_ratio = std::log(options.bucket_ratio);
  for (int r = 0; r < n; ++r) {
    const int i = order[r];
    const double s = in.tokens[i];
    std::vector<int> signature(in.num_sizes);
    for (int j = 0; j < in.num_sizes; ++j) signature[j] = crowd_level(s, in.capacity_tokens[j]);
    int index;
    if (r < singles) {
      index = static_cast<int>(items.size());
      items.push_back({});
      items.back().single = true;
    } else {
      const int band = static_cast<int>(std::floor(std::log(s) / log_ratio));
      auto [it, fresh] = bucket_of.try_emplace({signature, band}, static_cast<int>(items.size()));
      if (fresh) items.push_back({});
      index = it->second;
    }
    Item& item = items[index];
    item.signature = signature;
    item.count += 1;
    item.tokens += s;
    item.squares += s * s;
    item.shortest = std::min(item.shortest, s);
    item.longest = std::max(item.longest, s);
  }

  // Thresholds: the single sequences' times at their sizes (so that such a
  // sequence's level starts at its own time) and a geometric grid.
  std::vector<double> theta{0};
  double top = 0;
  for (int r = 0; r < singles; ++r) {
    for (int j = 0; j < in.num_sizes; ++j) {
      const double w = in.work(order[r], j);
      if (std::isfinite(w)) theta.push_back(w), top = std::max(top, w);
    }
  }
  top = std::max(top, in.fastest_ms[order[0]]);
  for (double t = top; t > top / options.grid_span; t /= options.grid_ratio) theta.push_back(t);
  std::sort(theta.begin(), theta.end());
  std::vector<double> kept{0};
  for (double t : theta) {
    if (t > kept.back() * (1 + options.merge_ratio)) kept.push_back(t);
  }
  theta = kept;
  const int levels = static_cast<int>(theta.size());
  auto upper = [&](int k) { return k + 1 < levels ? theta[k + 1] : kInfinity; };

  double tokens = 0;
  for (double t : in.tokens) tokens += t;
  const double fewest = std::max(1.0, std::ceil(tokens / (g * k_tokens) - 1e-9));

  // Seconds and thousands of tokens keep the LP's coefficients near 1.
  constexpr double kS = 1e-3;
  constexpr double kKt = 1e-3;
  MilpModel model("scatter_level_lp");
  std::vector<int> y_level(levels), d_level(levels);
  std::vector<MilpTerm> all_micro_batches;
  for (int k = 0; k < levels; ++k) {
    y_level[k] = options.whole_counts
                     ? model.add_integer("Y" + std::to_string(k), 0, static_cast<double>(n), c.fixed_ms * kS)
                     : model.add_continuous("Y" + std::to_string(k), 0, kInfinity, c.fixed_ms * kS);
    d_level[k] = model.add_continuous("D" + std::to_string(k), 0, kInfinity, 1.0);
    all_micro_batches.push_back({y_level[k], 1.0});
    if (theta[k] > 0)
      model.add_greater_equal("floor" + std::to_string(k), {{d_level[k], 1}, {y_level[k], -theta[k] * kS}},
                              0);
  }
  model.add_greater_equal("fewest", all_micro_batches, fewest);

  // Per level: GPU-ms rows; per level and size: memory, crowding, group work.
  std::vector<std::vector<MilpTerm>> level_work(levels);
  std::vector<std::vector<std::vector<MilpTerm>>> memory(levels,
                                                         std::vector<std::vector<MilpTerm>>(in.num_sizes));
  std::vector<std::vector<std::vector<MilpTerm>>> group_work = memory;
  std::vector<std::vector<std::vector<std::vector<MilpTerm>>>> crowd(
      levels,
      std::vector<std::vector<std::vector<MilpTerm>>>(in.num_sizes, std::vector<std::vector<MilpTerm>>(3)));
  for (size_t b = 0; b < items.size(); ++b) {
    const Item& item = items[b];
    std::vector<MilpTerm> counts, token_sum, square_sum;
    for (int k = 0; k < levels; ++k) {
      std::vector<MilpTerm> here;      // single: sum_j x <= Y_k
      std::vector<MilpTerm> own_time;  // single: D_k >= sum_j w x
      for (int j = 0; j < in.num_sizes; ++j) {
        if (item.signature[j] < 0) continue;
        const double w_short = scatter_sequence_ms(c, j, item.shortest);
        if (w_short >= upper(k)) continue;
        const std::string tag = std::to_string(b) + "_" + std::to_string(j) + "_" + std::to_string(k);
        // GPU-seconds per thousand tokens is GPU-ms per token.
        const double per_token = c.linear_ms + in.size[j] * c.alltoall_ms_per_token[j];
        const int x = model.add_continuous("x" + tag, 0, item.count);
        counts.push_back({x, 1});
        for (int q = 0; q < 3; ++q) {
          if (item.signature[j] >= 3 - q) crowd[k][j][q].push_back({x, 1});
        }
        if (item.single) {
          // Tokens and squares are the sequence's own.
          const double s = item.tokens;
          const double gpu_s = (c.quadratic_ms * s * s + per_token * s) * kS;
          level_work[k].push_back({x, gpu_s});
          group_work[k][j].push_back({x, gpu_s});
          memory[k][j].push_back({x, s * kKt});
          here.push_back({x, 1});
          own_time.push_back({x, -in.work(order[b], j) * kS});
          continue;
        }
        // y: thousands of tokens; sq: their a s^2 GPU-seconds.
        const int y = model.add_continuous("y" + tag, 0, item.tokens * kKt);
        const int sq = model.add_continuous("q" + tag, 0, c.quadratic_ms * item.squares * kS);
        token_sum.push_back({y, 1});
        square_sum.push_back({sq, 1});
        model.add_less_equal("ylo" + tag, {{x, item.shortest * kKt}, {y, -1}}, 0);
        model.add_less_equal("yhi" + tag, {{y, 1}, {x, -item.longest * kKt}}, 0);
        // a s^2 kS over y / kKt tokens: between a lo and a hi per thousand.
        model.add_less_equal("qlo" + tag, {{y, c.quadratic_ms * item.shortest}, {sq, -1}}, 0);
        model.add_less_equal("qhi" + tag, {{sq, 1}, {y, -c.quadratic_ms * item.longest}}, 0);
        level_work[k].push_back({sq, 1});
        level_work[k].push_back({y, per_token});
        group_work[k][j].push_back({sq, 1});
        group_work[k][j].push_back({y, per_token});
        memory[k][j].push_back({y, 1});
      }
      if (item.single && !here.empty()) {
        here.push_back({y_level[k], -1});
        model.add_less_equal("one" + std::to_string(b) + "_" + std::to_string(k), here, 0);
        own_time.push_back({d_level[k], 1});
        model.add_greater_equal("own" + std::to_string(b) + "_" + std::to_string(k), own_time, 0);
      }
    }
    const std::string tag = std::to_string(b);
    model.add_equal("count" + tag, counts, item.count);
    if (!item.single) {
      model.add_equal("tokens" + tag, token_sum, item.tokens * kKt);
      model.add_equal("squares" + tag, square_sum, c.quadratic_ms * item.squares * kS);
    }
  }
  for (int k = 0; k < levels; ++k) {
    const std::string lk = std::to_string(k);
    std::vector<MilpTerm> width{{y_level[k], -g}};
    std::vector<MilpTerm> held_sum{{d_level[k], -g}};
    bool any = false;
    for (int j = 0; j < in.num_sizes; ++j) {
      if (memory[k][j].empty()) continue;
      any = true;
      const std::string tag = lk + "_" + std::to_string(j);
      const int groups = model.add_continuous("N" + tag, 0, kInfinity);
      width.push_back({groups, static_cast<double>(in.size[j])});
      memory[k][j].push_back({groups, -in.capacity_tokens[j] * kKt});
      model.add_less_equal("memory" + tag, memory[k][j], 0);
      if (options.memory_held) {
        const int held = model.add_continuous("H" + tag, 0, kInfinity);
        held_sum.push_back({held, 1});
        std::vector<MilpTerm> w = group_work[k][j];
        w.push_back({held, -1});
        model.add_less_equal("hwork" + tag, w, 0);
        model.add_less_equal("hmin" + tag, {{groups, in.size[j] * theta[k] * kS}, {held, -1}}, 0);
      }
      if (std::isfinite(upper(k))) {
        group_work[k][j].push_back({groups, -in.size[j] * upper(k) * kS});
        model.add_less_equal("gwork" + tag, group_work[k][j], 0);
      }
      for (int q = 0; q < 3; ++q) {
        if (crowd[k][j][q].empty()) continue;
        crowd[k][j][q].push_back({groups, -(q + 1.0)});
        model.add_less_equal("crowd" + tag + "_" + std::to_string(q), crowd[k][j][q], 0);
      }
    }
    if (!any) continue;
    model.add_less_equal("width" + lk, width, 0);
    if (options.memory_held) model.add_less_equal("held" + lk, held_sum, 0);
    level_work[k].push_back({d_level[k], -g});
    model.add_less_equal("work" + lk, level_work[k], 0);
  }
  const std::optional<SolveResult> solved = solve_until(model, backend, 1e-7, deadline);
  if (!solved) return -kInfinity;
  if (options.whole_counts) {
    // Branch and bound: its proven bound holds even where it stopped early.
    const double bound = solved->certificate.best_bound;
    return std::isfinite(bound) ? bound / kS * (1 - 1e-9) : -kInfinity;
  }
  // Only a finished LP is a bound; a simplex stopped early is not.
  if (solved->certificate.status != SolveStatus::kOptimal) return -kInfinity;
  return solved->certificate.objective / kS * (1 - 1e-9);
}

}  // namespace parplan::scatter_detail
