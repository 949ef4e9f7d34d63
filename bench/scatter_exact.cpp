// Where the gap of `scatter` is: reduced instances cut from the bench's
// steps (the same long tail and FlexSP GPT-7B coefficients, fewer sequences
// on fewer GPUs), solved by the solver as `scatter` runs it and by the
// step's MILP on CBC with a long time limit. Where CBC proves its plan
// optimal, the solver's gap splits into the primal's part (its plan over
// the optimum) and the bound's (the optimum over the bound). Offline
// diagnosis for docs/scatter.md; asserts nothing.
//
//   scatter_exact [--gpus G] [--sequences N] [--scale F] [--round R]
//                 [--instances I] [--seconds S] [--min-size P] [--top T]
//                 [--step-ms T] [--level-lp] [--eject N] [--config-lp] [--pattern-lp] [--short]
//                 [--whole-levels]
//   scatter_exact --plan-subset S M1,M2,...
//
// Instance i: N - 1 sequences drawn from bench step i (without its 192K
// sequence), lengths times F, clipped to [64, 3072 G]; plus one sequence of
// 3072 G tokens, the place the bench's 192K sequence has on 64 GPUs (just
// over G K / 2: only a group of all G GPUs holds it). With --top T instead:
// the step's T longest sequences and N - T others, lengths as they are. With
// R > 1, every length is rounded up to the next power of R (whole tokens):
// fewer distinct lengths keep the MILP (one bucket per length) small
// enough for CBC to close. Group sizes: the bench's powers of two from
// --min-size up to G. Up to 18 sequences the optimum comes from a dynamic
// program over subsets instead of the MILP.
#include <algorithm>
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
#include "bench/scatter_level_patterns.h"
#include "solvers/milp_model.h"
#include "solvers/sequence_scatter.h"
#include "solvers/sequence_scatter_internal.h"
#include "tests/scatter_brute_force.h"

namespace {

using parplan::bench::flexsp_gpt7b;
using parplan::bench::long_tail_steps;

double arg(int argc, char** argv, const char* name, double fallback) {
  for (int a = 1; a + 1 < argc; ++a) {
    if (std::strcmp(argv[a], name) == 0) return std::atof(argv[a + 1]);
  }
  return fallback;
}

// `--plan-subset S M1,M2,...`: bench step S on 64 GPUs as `scatter` solves
// it with the budget lifted (its micro-batches listed), then the sequences of the listed
// micro-batches of its plan as a step of their own: the optimum (the subset
// dynamic program, up to 20 sequences), the solver's plan and bound there.
// Says whether the plan's micro-batches are optimal for their sequences and
// how far the bound lies below that optimum.
int plan_subset(int step, const char* list) {
  using namespace parplan;
  constexpr int kGpus = 64;
  const ScatterCoefficients c = flexsp_gpt7b(kGpus, 1);
  const std::vector<std::int64_t> lengths = long_tail_steps(step + 1)[step];
  // The budget lifted: the same plan whatever the machine's load.
  ScatterOptions options;
  options.step_time_limit_s = 60;
  const ScatterStepResult r = solve_scatter_step(lengths, kGpus, c, options);
  std::printf("bench step %d: plan %.0f ms, bound %.0f ms, gap %.2f %%\n", step, r.plan.time_ms,
              r.certificate.best_bound, 100 * r.certificate.gap);
  for (size_t m = 0; m < r.plan.micro_batches.size(); ++m) {
    const ScatterMicroBatch& mb = r.plan.micro_batches[m];
    std::int64_t longest = 0;
    size_t count = 0;
    for (const ScatterGroup& g : mb.groups) {
      count += g.sequences.size();
      for (int i : g.sequences) longest = std::max(longest, lengths[i]);
    }
    std::printf("  micro-batch %zu: %.0f ms, %zu groups, %zu sequences, longest %lld\n", m, mb.time_ms,
                mb.groups.size(), count, static_cast<long long>(longest));
  }
  std::vector<std::int64_t> sub;
  double plan_ms = 0;
  for (const char* p = list; *p;) {
    char* end = nullptr;
    const long m = std::strtol(p, &end, 10);
    if (end == p || m < 0 || m >= static_cast<long>(r.plan.micro_batches.size())) {
      std::fprintf(stderr, "--plan-subset: micro-batch list '%s' names none of the plan's\n", list);
      return 2;
    }
    plan_ms += r.plan.micro_batches[m].time_ms;
    for (const ScatterGroup& g : r.plan.micro_batches[m].groups)
      for (int i : g.sequences) sub.push_back(lengths[i]);
    p = *end == ',' ? end + 1 : end;
  }
  if (sub.size() > 20) {
    std::fprintf(stderr, "--plan-subset: %zu sequences; the dynamic program takes at most 20\n", sub.size());
    return 2;
  }
  const double optimum = test::subset_dp_step_ms(sub, kGpus, c);
  std::printf("their %zu sequences: plan's micro-batches %.0f ms, optimum %.0f ms (plan %.2f %% above)\n",
              sub.size(), plan_ms, optimum, 100 * (plan_ms / optimum - 1));
  for (double budget_s : {0.05, 60.0}) {
    options.step_time_limit_s = budget_s;
    const ScatterStepResult alone = solve_scatter_step(sub, kGpus, c, options);
    std::printf(
        "  solved alone in %.0f ms at most: %.0f ms, its bound %.0f ms (%.2f %% below the optimum, %s)\n",
        1000 * budget_s, alone.plan.time_ms, alone.certificate.best_bound,
        100 * (1 - alone.certificate.best_bound / optimum), alone.certificate.message.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int a = 1; a + 2 < argc; ++a) {
    if (std::strcmp(argv[a], "--plan-subset") == 0) return plan_subset(std::atoi(argv[a + 1]), argv[a + 2]);
  }
  using namespace parplan;
  using namespace parplan::scatter_detail;
  const int gpus = static_cast<int>(arg(argc, argv, "--gpus", 16));
  const int n = static_cast<int>(arg(argc, argv, "--sequences", 48));
  const double scale = arg(argc, argv, "--scale", 0.5);
  const double round_ratio = arg(argc, argv, "--round", 0);
  const int instances = static_cast<int>(arg(argc, argv, "--instances", 6));
  const double seconds = arg(argc, argv, "--seconds", 60);
  const int min_size = static_cast<int>(arg(argc, argv, "--min-size", 1));
  const int top = static_cast<int>(arg(argc, argv, "--top", 0));
  const double step_ms = arg(argc, argv, "--step-ms", 50);
  const int eject = static_cast<int>(arg(argc, argv, "--eject", 0));
  bool level_lp = false, config_lp = false, short_only = false, pattern_lp = false, whole_levels = false;
  for (int a = 1; a < argc; ++a) {
    whole_levels |= std::strcmp(argv[a], "--whole-levels") == 0;
    pattern_lp |= std::strcmp(argv[a], "--pattern-lp") == 0;
    short_only |= std::strcmp(argv[a], "--short") == 0;
    level_lp |= std::strcmp(argv[a], "--level-lp") == 0;
    config_lp |= std::strcmp(argv[a], "--config-lp") == 0;
  }
  const ScatterCoefficients c = flexsp_gpt7b(gpus, min_size);
  const std::vector<std::vector<std::int64_t>> steps = long_tail_steps(std::max(instances, 1));

  if (top > 0) {
    std::printf("%d GPUs (groups of %d to %d), %d sequences: each step's %d longest and %d others\n", gpus,
                c.group_sizes.front(), gpus, n, top, n - top);
  } else {
    std::printf("%d GPUs (groups of %d to %d), %d sequences, lengths x %.3g%s\n", gpus, c.group_sizes.front(),
                gpus, n, scale, round_ratio > 1 ? " (rounded up to powers)" : "");
  }
  if (n > 18) std::printf("CBC %.0f s per MILP\n", seconds);
  std::printf("%-4s %6s %4s %10s %3s %10s %10s %10s %10s %10s %-10s %8s %8s %7s\n", "inst", "mem mb", "len",
              "solver ms", "mb", "its bound", "comb", "group LP", "best plan", "its bound", "by", "primal%",
              "bound%", "solve");
  std::vector<double> primal_pct, bound_pct, gap_pct, config_below_pct, pattern_below_pct;
  for (int k = 0; k < instances; ++k) {
    parplan::bench::ReducedStep cut;
    cut.sequences = n;
    cut.top = top;
    cut.scale = scale;
    cut.short_only = short_only;
    cut.round_ratio = round_ratio;
    const std::vector<std::int64_t> lengths = parplan::bench::reduced_step(steps[k], k, gpus, c, cut);
    const Instance in = make_instance(lengths, gpus, c);
    double tokens = 0;
    std::vector<std::int64_t> distinct = lengths;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (double t : in.tokens) tokens += t;

    ScatterOptions options;  // the command's defaults: CBC, 50 ms per step
    options.step_time_limit_s = step_ms / 1000;
    options.eject_searches = eject;
    const ScatterStepResult fast = solve_scatter_step(lengths, gpus, c, options);
    const double comb = lower_bound_ms(in);
    const double group_lp =
        group_lp_bound_ms(in, SolverBackend::kCbc, Clock::now() + std::chrono::seconds(30));
    const double proven = std::max(comb, group_lp);

    double opt_plan = fast.plan.time_ms;
    double opt_bound = -kInfinity;
    const char* how = "";
    if (n <= 18) {
      opt_plan = opt_bound = test::subset_dp_step_ms(lengths, gpus, c);
      how = "exact DP";
    } else {
      // Every plan with more micro-batches than m pays (m + 1) d plus its
      // cheapest GPU-ms over G: m as in the solver, without the integer cap.
      double gpu_ms = 0;
      for (double e : in.cheapest_gpu_ms) gpu_ms += e;
      const int m = std::clamp(static_cast<int>(std::floor((fast.plan.time_ms - gpu_ms / gpus) / c.fixed_ms)),
                               1, static_cast<int>(lengths.size()));
      const Clock::time_point deadline =
          Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
      const MilpOutcome milp = milp_path(in, lengths, fast.plan, proven, m, SolverBackend::kCbc, deadline);
      if (!milp.plan.empty()) opt_plan = std::min(opt_plan, milp.plan.time_ms);
      opt_bound = std::min(milp.bound_ms, opt_plan);
      how = !milp.ran                                 ? "not run"
            : opt_plan - opt_bound <= 1e-4 * opt_plan ? "MILP opt"
                                                      : status_name(milp.certificate.status);
    }
    std::printf("%-4d %6.2f %4zu %10.1f %3zu %10.1f %10.1f %10.1f %10.1f %10.1f %-10s %8.2f %8.2f %7.1f\n", k,
                tokens / (gpus * c.token_capacity_per_gpu), distinct.size(), fast.plan.time_ms,
                fast.plan.micro_batches.size(), fast.certificate.best_bound, comb, group_lp, opt_plan,
                opt_bound, how, 100 * (fast.plan.time_ms - opt_plan) / fast.plan.time_ms,
                100 * (opt_bound - fast.certificate.best_bound) / fast.plan.time_ms, fast.solve_ms);
    std::fflush(stdout);
    primal_pct.push_back(100 * (fast.plan.time_ms - opt_plan) / fast.plan.time_ms);
    bound_pct.push_back(100 * (opt_bound - fast.certificate.best_bound) / fast.plan.time_ms);
    if (level_lp) {
      // The duration-level LP (a diagnosis, not used by the solver): how much
      // of the bound's part a relaxation by micro-batch duration recovers.
      LevelLpOptions level;
      level.single_sequences = 8;
      level.whole_counts = whole_levels;
      const double lp =
          level_lp_bound_ms(in, SolverBackend::kCbc, Clock::now() + std::chrono::seconds(60), level);
      std::printf("     level LP %.1f ms: %.2f %% of the step below the optimum\n", lp,
                  100 * (opt_bound - lp) / fast.plan.time_ms);
    }
    if (pattern_lp && n <= 18) {
      // The duration-level LP with whole groups as columns (bench/
      // scatter_level_patterns.h), least over the whole micro-batch counts.
      const int fewest = static_cast<int>(std::ceil(tokens / (gpus * c.token_capacity_per_gpu) - 1e-9));
      double value = kInfinity;
      int rounds = 0;
      for (int m = fewest; m <= fewest + 3 && m <= static_cast<int>(lengths.size()); ++m) {
        const diagnosis::LevelPatternLp lp = diagnosis::level_pattern_lp_ms(lengths, gpus, c, m, 48);
        value = std::min(value, lp.bound_ms);
        rounds = std::max(rounds, lp.rounds);
      }
      std::printf("     level-pattern LP %.1f ms (%d rounds): %.2f %% of the step below the optimum\n", value,
                  rounds, 100 * (opt_bound - value) / fast.plan.time_ms);
      pattern_below_pct.push_back(100 * (opt_bound - value) / fast.plan.time_ms);
    }
    if (config_lp && n <= 18) {
      // The configuration LP (a diagnosis): one column per micro-batch, i.e.
      // per subset of the sequences at its least time, each sequence covered
      // once, x >= 0. Its optimum bounds every plan; how close it comes to
      // the optimum says whether pricing whole micro-batches closes the
      // bound's part.
      const std::vector<double> micro_batch = test::subset_micro_batch_ms(lengths, gpus, c);
      auto lp_with_count = [&](int m) {
        MilpModel model("configuration_lp");
        std::vector<std::vector<MilpTerm>> cover(lengths.size());
        std::vector<MilpTerm> count;
        for (std::uint32_t t = 1; t < micro_batch.size(); ++t) {
          if (!std::isfinite(micro_batch[t])) continue;
          const int x = model.add_continuous("x" + std::to_string(t), 0, 1, micro_batch[t]);
          count.push_back({x, 1.0});
          for (std::uint32_t rest = t; rest != 0; rest &= rest - 1)
            cover[__builtin_ctz(rest)].push_back({x, 1.0});
        }
        for (size_t i = 0; i < cover.size(); ++i) model.add_equal("cover" + std::to_string(i), cover[i], 1.0);
        model.add_equal("count", count, m);
        const SolveResult lp = solve(model, SolverBackend::kCbc);
        if (std::getenv("CONFIG_LP_COLUMNS") && lp.certificate.status == SolveStatus::kOptimal) {
          std::printf("       M %d: %.1f\n", m, lp.certificate.objective);
          int column = 0;
          for (std::uint32_t t = 1; t < micro_batch.size(); ++t) {
            if (!std::isfinite(micro_batch[t])) continue;
            const double x = lp.values[column++];
            if (x < 1e-6) continue;
            std::printf("         x %.3f  %.1f ms:", x, micro_batch[t]);
            for (std::uint32_t rest = t; rest != 0; rest &= rest - 1)
              std::printf(" %lld", static_cast<long long>(lengths[__builtin_ctz(rest)]));
            std::printf("\n");
          }
        }
        return lp.certificate.status == SolveStatus::kOptimal ? lp.certificate.objective : kInfinity;
      };
      // Every plan has a whole number of micro-batches, at least
      // ceil(tokens / (G K)): the least LP over those counts bounds it.
      const int fewest = static_cast<int>(std::ceil(tokens / (gpus * c.token_capacity_per_gpu) - 1e-9));
      double value = kInfinity;
      for (int m = fewest; m <= static_cast<int>(lengths.size()); ++m) {
        value = std::min(value, lp_with_count(m));
        if (m * c.fixed_ms > value) break;  // more micro-batches cost more than the best so far
      }
      std::printf(
          "     configuration LP %.1f ms: %.2f %% of the step below the optimum, %.2f %% above the stated "
          "bound\n",
          value, 100 * (opt_bound - value) / fast.plan.time_ms,
          100 * (value - fast.certificate.best_bound) / fast.plan.time_ms);
      config_below_pct.push_back(100 * (opt_bound - value) / fast.plan.time_ms);
    }
    gap_pct.push_back(100 * fast.certificate.gap);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  std::printf(
      "median: solver's gap %.2f %%, of it the primal's (at least) %.2f %%, the bound's (at least) %.2f %%\n",
      median(gap_pct), median(primal_pct), median(bound_pct));
  if (!pattern_below_pct.empty())
    std::printf("median: level-pattern LP %.2f %% of the step below the optimum\n",
                median(pattern_below_pct));
  if (!config_below_pct.empty())
    std::printf("median: configuration LP %.2f %% of the step below the optimum\n", median(config_below_pct));
  return 0;
}
