// Speed and gap of `scatter`: steps of 512 sequences drawn from a long-tail
// (log-normal, clipped at 192K tokens, one 192K sequence per step) on 64
// GPUs with FlexSP's published GPT-7B coefficients. Target: median <= 20 ms
// per step on 2 cores, gap <= 1 % to the proven bound. Prints medians and
// ratios; asserts nothing. `scatter_bench --level-lp` also prints, for the
// first three steps, the duration-level LP bound (seconds per step; a
// diagnosis of the bound's strength, not used by the solver).
// `scatter_bench --steps FILE --coefficients FILE` runs the same statistics
// on other steps and coefficients, as `parplan scatter` reads them. Without
// --steps it also prints the medians on FlexSP's own batches
// (examples/scatter/flexsp-wikipedia-gbs512-24.txt with
// examples/scatter/flexsp-gpt-7b-64gpu-30gb.json) when run from the
// repository root.
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "bench/scatter_bench_steps.h"
#include "solvers/sequence_scatter.h"
#include "solvers/sequence_scatter_internal.h"
#include "src/io/input_error.h"
#include "src/io/scatter_input.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Median solve time and gaps of `steps` solved on `threads` threads.
void print_summary(const char* label, const std::vector<std::vector<std::int64_t>>& steps, int gpus,
                   const parplan::ScatterCoefficients& c, const parplan::ScatterOptions& options,
                   int threads) {
  using namespace parplan;
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  std::vector<ScatterStepResult> results(steps.size());
  tbb::parallel_for(0, static_cast<int>(steps.size()),
                    [&](int s) { results[s] = solve_scatter_step(steps[s], gpus, c, options); });
  std::vector<double> ms, gap;
  double worst = 0, sum = 0;
  for (const ScatterStepResult& r : results) {
    ms.push_back(r.solve_ms);
    gap.push_back(100 * r.certificate.gap);
    worst = std::max(worst, 100 * r.certificate.gap);
    sum += 100 * r.certificate.gap;
  }
  std::printf(
      "  %-26s %8.2f ms per step (target 20), median gap %.3f %% (target 1), mean %.3f %%, worst %.3f %%\n",
      label, median(ms), median(gap), sum / static_cast<double>(steps.size()), worst);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace parplan;
  ScatterCoefficients c = bench::flexsp_gpt7b();
  constexpr int kGpus = 64;
  std::vector<std::vector<std::int64_t>> steps = bench::long_tail_steps(24);
  const char* steps_source = "long tail, max 192K";
  const char* coefficients_source = "FlexSP GPT-7B coefficients";
  try {
    for (int a = 1; a + 1 < argc; ++a) {
      if (std::strcmp(argv[a], "--steps") == 0) {
        steps = load_scatter_lengths(argv[a + 1]);
        steps_source = argv[a + 1];
      }
      if (std::strcmp(argv[a], "--coefficients") == 0) {
        c = load_scatter_coefficients(argv[a + 1]);
        coefficients_source = argv[a + 1];
      }
    }
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  const int step_count = static_cast<int>(steps.size());

  ScatterOptions options;  // the command's defaults: CBC, 50 ms per step
  // `--step-ms T`: another per-step budget (how far the search goes with
  // more time); `--per-step`: each step's memory minimum of micro-batches
  // (tokens over G K), plan, bound and gap.
  bool per_step = false;
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--step-ms") == 0 && a + 1 < argc)
      options.step_time_limit_s = std::atof(argv[a + 1]) / 1000;
    per_step |= std::strcmp(argv[a], "--per-step") == 0;
    // `--eject N`: the one-for-several swap with N local searches per step.
    if (std::strcmp(argv[a], "--eject") == 0 && a + 1 < argc) options.eject_searches = std::atoi(argv[a + 1]);
    // `--relaxed-m`: the bound without the whole-micro-batch LPs.
    if (std::strcmp(argv[a], "--relaxed-m") == 0) options.whole_micro_batch_bound = false;
    // `--max-tokens L`: the steps without their sequences over L tokens (a
    // diagnosis: how much of the gap the long tail makes).
    if (std::strcmp(argv[a], "--max-tokens") == 0 && a + 1 < argc) {
      const std::int64_t most = std::atoll(argv[a + 1]);
      for (auto& step : steps) std::erase_if(step, [&](std::int64_t s) { return s > most; });
    }
  }
  // `--dump-step S`: print step S's lengths (one line, for `parplan
  // scatter --lengths`) and stop.
  for (int a = 1; a + 1 < argc; ++a) {
    if (std::strcmp(argv[a], "--dump-step") != 0) continue;
    for (std::int64_t s : steps[std::clamp(std::atoi(argv[a + 1]), 0, step_count - 1)])
      std::printf("%lld ", static_cast<long long>(s));
    std::printf("\n");
    return 0;
  }
  std::vector<ScatterStepResult> results(step_count);
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 2);
  const auto start = std::chrono::steady_clock::now();
  tbb::parallel_for(0, step_count,
                    [&](int s) { results[s] = solve_scatter_step(steps[s], kGpus, c, options); });
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  std::vector<double> solve_ms, gap_pct, speedup;
  double worst_gap = 0;
  int micro_batches = 0;
  for (const ScatterStepResult& r : results) {
    solve_ms.push_back(r.solve_ms);
    gap_pct.push_back(100 * r.certificate.gap);
    worst_gap = std::max(worst_gap, 100 * r.certificate.gap);
    speedup.push_back(r.static_time_ms / r.plan.time_ms);
    micro_batches += static_cast<int>(r.plan.micro_batches.size());
  }
  if (per_step) {
    for (int s = 0; s < step_count; ++s) {
      double tok = 0;
      for (auto l : steps[s]) tok += l;
      std::printf("step %d: tokens / (G K) %.2f, %zu micro-batches, %.0f ms, bound %.0f ms, gap %.2f %%\n", s,
                  tok / (kGpus * c.token_capacity_per_gpu), results[s].plan.micro_batches.size(),
                  results[s].plan.time_ms, results[s].certificate.best_bound,
                  100 * results[s].certificate.gap);
    }
  }
  std::printf("steps %d x %zu sequences (%s) on %d GPUs, %s, 2 threads\n", step_count, steps.front().size(),
              steps_source, kGpus, coefficients_source);
  std::printf("%-28s %10.2f  (target 20 ms: %.2fx)\n", "median ms per step", median(solve_ms),
              20.0 / median(solve_ms));
  std::printf("%-28s %10.2f\n", "wall ms / steps (2 cores)", wall_ms / step_count);
  std::printf("%-28s %10.3f  (target 1 %%)\n", "median gap %", median(gap_pct));
  double gap_sum = 0;
  for (double g : gap_pct) gap_sum += g;
  std::printf("%-28s %10.3f\n", "mean gap %", gap_sum / step_count);
  std::printf("%-28s %10.3f\n", "worst gap %", worst_gap);
  std::printf("%-28s %10.3f\n", "median speedup vs static", median(speedup));
  std::printf("%-28s %10.2f\n", "mean micro-batches", static_cast<double>(micro_batches) / step_count);

  // The same steps one at a time on one thread: the per-step figure above
  // includes waiting for the other thread's LP (CBC solves one at a time).
  std::vector<double> alone_ms, alone_gap_pct;
  double alone_gap_sum = 0;
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    for (int s = 0; s < step_count; ++s) {
      const ScatterStepResult r = solve_scatter_step(steps[s], kGpus, c, options);
      alone_ms.push_back(r.solve_ms);
      alone_gap_pct.push_back(100 * r.certificate.gap);
      alone_gap_sum += 100 * r.certificate.gap;
    }
  }
  std::printf("%-28s %10.2f  (target 20 ms: %.2fx)\n", "median ms, one step at a time", median(alone_ms),
              20.0 / median(alone_ms));
  std::printf("%-28s %10.3f\n", "median gap %, one at a time", median(alone_gap_pct));
  std::printf("%-28s %10.3f\n", "mean gap %, one at a time", alone_gap_sum / step_count);

  // With time to improve after the plan search (`parplan scatter
  // --improve-ms`): the anytime ruin and recreate; `--improve-ms T` instead
  // of the default 100.
  double improve_ms = 100;
  for (int a = 1; a + 1 < argc; ++a) {
    if (std::strcmp(argv[a], "--improve-ms") == 0) improve_ms = std::atof(argv[a + 1]);
  }
  if (improve_ms > 0) {
    ScatterOptions improving = options;
    improving.improve_time_s = improve_ms / 1000;
    std::vector<double> improved_ms, improved_gap_pct;
    double improved_gap_sum = 0, improved_worst = 0, plan_ratio_sum = 0;
    std::vector<ScatterStepResult> improved(step_count);
    tbb::parallel_for(0, step_count,
                      [&](int s) { improved[s] = solve_scatter_step(steps[s], kGpus, c, improving); });
    for (int s = 0; s < step_count; ++s) {
      improved_ms.push_back(improved[s].solve_ms);
      improved_gap_pct.push_back(100 * improved[s].certificate.gap);
      improved_gap_sum += 100 * improved[s].certificate.gap;
      improved_worst = std::max(improved_worst, 100 * improved[s].certificate.gap);
      plan_ratio_sum += improved[s].plan.time_ms / results[s].plan.time_ms;
    }
    char label[64];
    std::snprintf(label, sizeof label, "with --improve-ms %g:", improve_ms);
    std::printf("%s\n", label);
    std::printf("%-28s %10.2f\n", "  median ms per step", median(improved_ms));
    std::printf("%-28s %10.3f\n", "  median gap %", median(improved_gap_pct));
    std::printf("%-28s %10.3f\n", "  mean gap %", improved_gap_sum / step_count);
    std::printf("%-28s %10.3f\n", "  worst gap %", improved_worst);
    std::printf("%-28s %10.3f\n", "  plans faster by, mean %", 100 * (1 - plan_ratio_sum / step_count));
  }

  // FlexSP's own data with its coefficients (the setting of the issue's
  // target and of FlexSP's solver's 10 s per step), when the default steps
  // ran and the example files are at hand (run from the repository root).
  bool own_steps = false;
  for (int a = 1; a < argc; ++a) own_steps |= std::strcmp(argv[a], "--steps") == 0;
  if (!own_steps) {
    try {
      const auto wikipedia = load_scatter_lengths("examples/scatter/flexsp-wikipedia-gbs512-24.txt");
      const ScatterCoefficients flexsp =
          load_scatter_coefficients("examples/scatter/flexsp-gpt-7b-64gpu-30gb.json");
      std::printf(
          "FlexSP's wikipedia batches (24 x 512 sequences, at most 192K tokens; its 30 GB coefficients):\n");
      print_summary("2 threads", wikipedia, kGpus, flexsp, options, 2);
      print_summary("one step at a time", wikipedia, kGpus, flexsp, options, 1);
    } catch (const InputError&) {
      std::printf("(FlexSP's wikipedia batches: run from the repository root to include them)\n");
    }
  }

  bool level_lp = false;
  for (int a = 1; a < argc; ++a) level_lp |= std::strcmp(argv[a], "--level-lp") == 0;
  if (level_lp) {
    for (int s = 0; s < std::min(3, step_count); ++s) {
      const scatter_detail::Instance in = scatter_detail::make_instance(steps[s], kGpus, c);
      // 0 and 8 slowest sequences alone; 8 with the groups held for their
      // level's floor (LevelLpOptions::memory_held).
      for (int variant : {0, 1, 2}) {
        scatter_detail::LevelLpOptions level;
        level.single_sequences = variant == 0 ? 0 : 8;
        level.memory_held = variant == 2;
        const auto begin = std::chrono::steady_clock::now();
        const double lp = scatter_detail::level_lp_bound_ms(in, SolverBackend::kCbc,
                                                            begin + std::chrono::seconds(60), level);
        const double took_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
        std::printf(
            "step %d: plan %.0f ms, bound %.0f ms; level LP (%d sequences alone%s) %.0f ms in %.0f ms\n", s,
            results[s].plan.time_ms, results[s].certificate.best_bound, level.single_sequences,
            level.memory_held ? ", groups held" : "", lp, took_ms);
      }
    }
  }
  return 0;
}
