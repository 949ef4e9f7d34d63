// The configuration LP of a scatter step at the bench's scale, as a lower
// bound: one column per micro-batch, each sequence covered once, exactly M
// columns, the least over whole M. Its columns are relaxed to "pooled"
// micro-batches: the groups of one size pool their GPU-milliseconds and
// memory (a size-p group of a micro-batch lasting tau holds at most
// p (tau - d) GPU-ms of work and p K tokens, so n_p of them hold n_p times
// that; every sequence whole at one size, its own time within tau; the
// crowding rows of the group-count LP; sizes times counts at most G). Every
// real micro-batch is such a column, no longer than its real time, so the
// LP over pooled columns bounds every plan.
//
// Column generation finds good duals; the bound itself is Lagrangian, valid
// for any duals (pi >= 0 per sequence): LP(M) >= sum pi + M R, R at most
// every pooled column's duration minus its pi, CBC's proven bound on the
// pricing MILP (the duration a variable). Offline diagnosis for
// docs/scatter-exact.md: asserts nothing, takes seconds per reduced step.
//
//   scatter_pooled_config [--step S] [--steps N] [--rounds R] [--pricing-s T]
//                         [--alpha A] [--seed-plans P] [--whole-above T] [--column-s T]
//   scatter_pooled_config --reduced [--gpus G] [--min-size P] [--sequences N]
//                         [--scale F | --top T] [--step S] [--steps N]
//
// Bench steps as bench/scatter_bench.cpp (64 GPUs, FlexSP GPT-7B
// coefficients); --reduced: steps as scatter_exact's A (N - 1 sequences of
// the step times F plus one of 3072 G tokens) or, with --top, its B and C
// (the step's T longest and N - T others), whose optimum the subset dynamic
// program gives. --alpha: the weight of the best bound's duals in the
// smoothed ones priced; --seed-plans: starting columns from the solver's
// plans of P random parts of the step; --whole-above: sequences up to that
// many tokens may be taken in part in the bound's pricing (a relaxation),
// columns then come from a MILP with all whole, limited to --column-s.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench/scatter_bench_steps.h"
#include "solvers/milp_model.h"
#include "solvers/sequence_scatter.h"
#include "solvers/solve.h"
#include "tests/scatter_brute_force.h"

namespace {

using namespace parplan;

double arg(int argc, char** argv, const char* name, double fallback) {
  for (int a = 1; a + 1 < argc; ++a)
    if (std::strcmp(argv[a], name) == 0) return std::atof(argv[a + 1]);
  return fallback;
}

/// The step in the pooled model's terms.
struct Pooled {
  int gpus = 0;
  double d = 0, K = 0;
  std::vector<double> s;  ///< tokens per sequence
  std::vector<int> p;     ///< group size per size index
  /// GPU-ms of sequence i at size j beyond the fixed cost, p_j times its time
  /// there (n x J); +inf where it exceeds p_j K.
  std::vector<double> w;
  int J = 0;
  int n() const { return static_cast<int>(s.size()); }
  double work(int i, int j) const { return w[static_cast<size_t>(i) * J + j]; }
  /// The crowding classes of the group-count LP: sequence longer than p K / t.
  bool crowds(int i, int j, int t) const { return s[i] > p[j] * K / t; }
};

Pooled make_pooled(const std::vector<std::int64_t>& lengths, int gpus, const ScatterCoefficients& c) {
  Pooled q;
  q.gpus = gpus;
  q.d = c.fixed_ms;
  q.K = c.token_capacity_per_gpu;
  q.p = c.group_sizes;
  q.J = static_cast<int>(q.p.size());
  for (std::int64_t l : lengths) q.s.push_back(static_cast<double>(l));
  for (int i = 0; i < q.n(); ++i) {
    const double s = q.s[i];
    for (int j = 0; j < q.J; ++j) {
      const double cap = q.p[j] * q.K;
      q.w.push_back(s > cap
                        ? kInfinity
                        : c.quadratic_ms * s * s + c.linear_ms * s + q.p[j] * c.alltoall_ms_per_token[j] * s);
    }
  }
  return q;
}

/// A column: sequences with their size index; its pooled duration.
struct Column {
  std::vector<std::pair<int, int>> items;
  double duration_ms = 0;
};

/// Least duration at which `items` form a pooled micro-batch (+inf if none).
double pooled_duration(const Pooled& q, const std::vector<std::pair<int, int>>& items) {
  std::vector<double> work(q.J, 0), tokens(q.J, 0);
  std::vector<std::array<int, 3>> crowd(q.J, {0, 0, 0});
  double lowest = q.d;
  for (auto [i, j] : items) {
    work[j] += q.work(i, j);
    tokens[j] += q.s[i];
    lowest = std::max(lowest, q.d + q.work(i, j) / q.p[j]);
    for (int t = 2; t <= 4; ++t) crowd[j][t - 2] += q.crowds(i, j, t);
  }
  auto width_at = [&](double tau) {
    double width = 0;
    for (int j = 0; j < q.J; ++j) {
      if (tokens[j] == 0) continue;
      double groups = std::ceil(tokens[j] / (q.p[j] * q.K) - 1e-9);
      groups = std::max(groups, std::ceil(work[j] / (q.p[j] * (tau - q.d)) - 1e-9));
      for (int t = 2; t <= 4; ++t)
        groups = std::max(groups, std::ceil(crowd[j][t - 2] / double(t - 1) - 1e-9));
      width += groups * q.p[j];
    }
    return width;
  };
  double hi = lowest;
  for (int j = 0; j < q.J; ++j) hi += work[j] / q.p[j];
  if (width_at(hi + 1e-6) > q.gpus) return kInfinity;
  double lo = lowest;
  if (width_at(lo + 1e-9) <= q.gpus) return lo;
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    (width_at(mid) <= q.gpus ? hi : lo) = mid;
  }
  return hi;
}

/// The pricing MILP: the least duration minus collected pi over pooled
/// columns lasting at most tau_max, the duration a variable. The count of
/// size-j groups is one of k = 1..G/p_j (binary y_jk), and z_jk = tau y_jk
/// (z <= tau, z <= tau_max y) turns the pooled work row
/// sum_i w_ij x_ij <= p_j n_j (tau - d) linear. `lower` is CBC's proven
/// bound on that least value, `column` the best column it found.
struct Priced {
  double lower = -kInfinity;
  double found = kInfinity;
  std::vector<std::pair<int, int>> items;
};

Priced price(const Pooled& q, const std::vector<double>& pi, double tau_max, double seconds,
             double whole_above) {
  Priced out;
  MilpModel model("pooled_pricing");
  const int tau = model.add_continuous("tau", q.d, tau_max, 1.0);
  std::vector<std::vector<MilpTerm>> work_row(q.J), mem_row(q.J), count_of(q.J);
  std::vector<std::array<std::vector<MilpTerm>, 3>> crowd_row(q.J);
  std::vector<MilpTerm> width;
  for (int j = 0; j < q.J; ++j) {
    std::vector<MilpTerm> one;
    for (int k = 1; k <= q.gpus / q.p[j]; ++k) {
      const int y = model.add_binary("y", 0);
      const int z = model.add_continuous("z", 0, tau_max, 0);
      model.add_less_equal("z_tau", {{z, 1}, {tau, -1}}, 0);
      model.add_less_equal("z_y", {{z, 1}, {y, -tau_max}}, 0);
      one.push_back({y, 1});
      work_row[j].push_back({z, -double(q.p[j]) * k});
      work_row[j].push_back({y, double(q.p[j]) * k * q.d});
      count_of[j].push_back({y, double(k)});
      width.push_back({y, double(q.p[j]) * k});
    }
    model.add_less_equal("one_count", one, 1);
  }
  model.add_less_equal("width", width, q.gpus);
  std::vector<std::pair<int, int>> var_item;
  std::vector<int> var_index;
  for (int i = 0; i < q.n(); ++i) {
    if (pi[i] < 0) continue;
    std::vector<MilpTerm> one, own_time;
    for (int j = 0; j < q.J; ++j) {
      const double wij = q.work(i, j);
      if (!std::isfinite(wij) || q.d + wij / q.p[j] > tau_max) continue;
      // Sequences up to `whole_above` tokens may be taken in part: a relaxation
      // (the column collects at most what it could), which keeps the MILP's
      // integers to the sequences whose wholeness the bound needs.
      const int x =
          q.s[i] > whole_above ? model.add_binary("x", -pi[i]) : model.add_continuous("x", 0, 1, -pi[i]);
      var_item.push_back({i, j});
      var_index.push_back(x);
      one.push_back({x, 1});
      own_time.push_back({x, q.d + wij / q.p[j]});
      work_row[j].push_back({x, wij});
      mem_row[j].push_back({x, q.s[i]});
      for (int t = 2; t <= 4; ++t)
        if (q.crowds(i, j, t)) crowd_row[j][t - 2].push_back({x, 1});
    }
    if (one.empty()) continue;
    model.add_less_equal("once", one, 1);
    own_time.push_back({tau, -1});
    model.add_less_equal("own_time", own_time, 0);
  }
  // A column holds at least one sequence (a plan's micro-batches do).
  std::vector<MilpTerm> any;
  for (int v : var_index) any.push_back({v, 1});
  model.add_greater_equal("nonempty", any, 1);
  for (int j = 0; j < q.J; ++j) {
    model.add_less_equal("work", work_row[j], 0);
    std::vector<MilpTerm> mem = mem_row[j];
    for (MilpTerm term : count_of[j]) mem.push_back({term.var, -term.coef * q.p[j] * q.K});
    if (mem_row[j].size()) model.add_less_equal("memory", mem, 0);
    for (int t = 2; t <= 4; ++t) {
      if (crowd_row[j][t - 2].empty()) continue;
      std::vector<MilpTerm> crowd = crowd_row[j][t - 2];
      for (MilpTerm term : count_of[j]) crowd.push_back({term.var, -term.coef * (t - 1)});
      model.add_less_equal("crowd", crowd, 0);
    }
  }
  SolveOptions options;
  options.time_limit_s = seconds;
  options.relative_gap = 1e-9;
  const SolveResult r = solve(model, SolverBackend::kCbc, options);
  if (std::isfinite(r.certificate.best_bound)) out.lower = r.certificate.best_bound;
  if (r.certificate.status == SolveStatus::kOptimal) out.lower = std::min(out.lower, r.certificate.objective);
  if (r.has_solution()) {
    out.found = r.certificate.objective;
    for (size_t v = 0; v < var_item.size(); ++v)
      if (r.values[var_index[v]] > 0.5) out.items.push_back(var_item[v]);
  }
  return out;
}

/// The restricted master LP over `columns` with exactly m of them: its value
/// and duals (pi per sequence, mu for the count).
struct Master {
  double value = kInfinity;
  std::vector<double> pi;
  double mu = 0;
};

Master solve_master(const Pooled& q, const std::vector<Column>& columns, int m) {
  MilpModel model("pooled_master");
  std::vector<std::vector<MilpTerm>> cover(q.n());
  std::vector<MilpTerm> count;
  // An artificial column holding every sequence keeps each m feasible; its
  // cost is far above any plan.
  double big = 0;
  for (const Column& col : columns) big += col.duration_ms;
  const int art = model.add_continuous("artificial", 0, kInfinity, 10 * big + 1e6);
  count.push_back({art, 1});
  for (int i = 0; i < q.n(); ++i) cover[i].push_back({art, 1});
  for (const Column& col : columns) {
    const int x = model.add_continuous("x", 0, kInfinity, col.duration_ms);
    count.push_back({x, 1});
    for (auto [i, j] : col.items) cover[i].push_back({x, 1});
  }
  for (int i = 0; i < q.n(); ++i) model.add_greater_equal("cover", cover[i], 1);
  model.add_equal("count", count, m);
  const SolveResult r = solve(model, SolverBackend::kCbc);
  Master out;
  if (r.certificate.status != SolveStatus::kOptimal || r.row_duals.size() != static_cast<size_t>(q.n() + 1))
    return out;
  out.value = r.certificate.objective;
  out.pi.assign(r.row_duals.begin(), r.row_duals.begin() + q.n());
  for (double& v : out.pi) v = std::max(0.0, v);
  out.mu = r.row_duals[q.n()];
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool reduced = false;
  for (int a = 1; a < argc; ++a) reduced |= std::strcmp(argv[a], "--reduced") == 0;
  const int gpus = reduced ? static_cast<int>(arg(argc, argv, "--gpus", 16)) : 64;
  const int first = static_cast<int>(arg(argc, argv, "--step", 0));
  const int count = static_cast<int>(arg(argc, argv, "--steps", 1));
  const double pricing_s = arg(argc, argv, "--pricing-s", 2);
  const int rounds = static_cast<int>(arg(argc, argv, "--rounds", 300));
  const double alpha_center = arg(argc, argv, "--alpha", 0.5);
  const double whole_above = arg(argc, argv, "--whole-above", 0);
  const double column_s = arg(argc, argv, "--column-s", 1);
  const ScatterCoefficients c = bench::flexsp_gpt7b(gpus, static_cast<int>(arg(argc, argv, "--min-size", 1)));
  const auto steps = bench::long_tail_steps(first + count);
  for (int k = first; k < first + count; ++k) {
    std::vector<std::int64_t> lengths;
    if (reduced) {
      bench::ReducedStep how;
      how.sequences = static_cast<int>(arg(argc, argv, "--sequences", 16));
      how.top = static_cast<int>(arg(argc, argv, "--top", 0));
      how.scale = arg(argc, argv, "--scale", 2);
      lengths = bench::reduced_step(steps[k], k, gpus, c, how);
    } else {
      lengths = steps[k];
    }
    const auto t0 = std::chrono::steady_clock::now();
    ScatterOptions options;
    options.step_time_limit_s = 0.05;
    const ScatterStepResult solved = solve_scatter_step(lengths, gpus, c, options);
    const Pooled q = make_pooled(lengths, gpus, c);
    std::vector<Column> columns;
    for (const ScatterMicroBatch& mb : solved.plan.micro_batches) {
      Column col;
      for (const ScatterGroup& g : mb.groups) {
        const int j = static_cast<int>(std::find(q.p.begin(), q.p.end(), g.size) - q.p.begin());
        for (int i : g.sequences) col.items.push_back({i, j});
      }
      col.duration_ms = pooled_duration(q, col.items);
      columns.push_back(col);
    }
    // More real micro-batches as starting columns: the solver's plans of
    // random halves of the step (their micro-batches are real, so valid).
    std::mt19937_64 rng(11 + k);
    const int seeds = static_cast<int>(arg(argc, argv, "--seed-plans", 0));
    for (int r = 0; r < seeds; ++r) {
      std::vector<int> pick;
      for (int i = 0; i < q.n(); ++i)
        if (rng() % 100 < 30 + static_cast<unsigned>(r % 5) * 10) pick.push_back(i);
      if (pick.empty()) continue;
      std::vector<std::int64_t> sub;
      for (int i : pick) sub.push_back(lengths[i]);
      const ScatterStepResult part = solve_scatter_step(sub, gpus, c, options);
      for (const ScatterMicroBatch& mb : part.plan.micro_batches) {
        Column col;
        for (const ScatterGroup& g : mb.groups) {
          const int j = static_cast<int>(std::find(q.p.begin(), q.p.end(), g.size) - q.p.begin());
          for (int i : g.sequences) col.items.push_back({pick[i], j});
        }
        col.duration_ms = pooled_duration(q, col.items);
        columns.push_back(col);
      }
    }
    std::fprintf(stderr, "%zu starting columns\n", columns.size());
    double tokens = 0;
    for (double s : q.s) tokens += s;
    const int fewest = static_cast<int>(std::ceil(tokens / (gpus * q.K) - 1e-9));
    const int plan_m = static_cast<int>(solved.plan.micro_batches.size());
    double best_bound = kInfinity;
    int milps = 0;
    double cheapest_gpu_ms = 0;
    for (int i = 0; i < q.n(); ++i) {
      double least = kInfinity;
      for (int j = 0; j < q.J; ++j) least = std::min(least, q.work(i, j));
      cheapest_gpu_ms += least;
    }
    // Plans with m micro-batches last at least m d plus the cheapest GPU-ms
    // over G: the counts beyond the incumbent's reach need no LP.
    for (int m = fewest; m * q.d + cheapest_gpu_ms / gpus < solved.plan.time_ms; ++m) {
      // Columns lasting more than this cannot be in a plan better than the
      // incumbent: its other m - 1 micro-batches last at least d each.
      const double tau_max = solved.plan.time_ms - (m - 1) * q.d;
      double lb = m * q.d + cheapest_gpu_ms / gpus, value = kInfinity;
      // The duals of the best Lagrangian bound, from the ones of the plain
      // bound: pi_i = sequence i's cheapest GPU-ms over G (then R = d).
      std::vector<double> center(q.n());
      for (int i = 0; i < q.n(); ++i) {
        double least = kInfinity;
        for (int j = 0; j < q.J; ++j) least = std::min(least, q.work(i, j));
        center[i] = least / gpus;
      }
      for (int round = 0; round < rounds; ++round) {
        const Master master = solve_master(q, columns, m);
        if (!std::isfinite(master.value) || master.pi.empty()) break;
        value = master.value;
        // Wentges smoothing: price at a point between the best bound's duals
        // and the master's, which keeps the duals from oscillating; where that
        // point prices no column the master needs (mispricing), price again
        // at the master's duals.
        double here = -kInfinity;
        bool added = false;
        Priced pr;
        for (double alpha : {alpha_center, 0.0}) {
          std::vector<double> pi = master.pi;
          for (int i = 0; i < q.n() && alpha > 0; ++i) pi[i] = alpha * center[i] + (1 - alpha) * master.pi[i];
          ++milps;
          pr = price(q, pi, tau_max, pricing_s, whole_above);
          double total_pi = 0;
          for (double v : pi) total_pi += v;
          here = total_pi + m * pr.lower;
          if (here > lb) {
            lb = here;
            center = pi;
          }
          // With sequences taken in part the bound's MILP gives no column: one
          // from the MILP with every sequence whole, within a short limit.
          if (whole_above > 0) {
            ++milps;
            pr = price(q, pi, tau_max, column_s, 0);
          }
          if (!pr.items.empty()) {
            Column col{pr.items, pooled_duration(q, pr.items)};
            double collected = 0;
            for (auto [i, j] : col.items) collected += master.pi[i];
            added = col.duration_ms - collected - master.mu < -1e-7 * value;
            columns.push_back(std::move(col));
          }
          if (added || alpha == 0.0) break;
        }
        std::fprintf(stderr,
                     "  m %d round %d: master %.1f, Lagrangian %.1f (here %.1f), pricing %.1f/%.1f%s\n", m,
                     round, master.value, lb, here, pr.found, pr.lower, added ? "" : " (mispriced)");
        if (value - lb <= 2e-4 * value || !added) break;
      }
      std::printf("  step %d m %d: master %.1f ms, Lagrangian bound %.1f ms\n", k, m, value, lb);
      std::fflush(stdout);
      best_bound = std::min(best_bound, lb);
    }
    best_bound = std::min(best_bound, solved.plan.time_ms);
    // Plans with more micro-batches than tried pay at least that many d plus
    // the cheapest GPU-ms: the stated bound covers them only if that is higher.
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "step %d: plan %.1f ms (%d mb), stated bound %.1f (gap %.2f %%), pooled config bound %.1f "
        "(gap %.2f %%), %d MILPs, %.0f s",
        k, solved.plan.time_ms, plan_m, solved.certificate.best_bound, 100 * solved.certificate.gap,
        best_bound, 100 * (solved.plan.time_ms - best_bound) / solved.plan.time_ms, milps, seconds);
    if (reduced && lengths.size() <= 18)
      std::printf(", optimum %.1f", test::subset_dp_step_ms(lengths, gpus, c));
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
