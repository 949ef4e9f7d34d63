// Expert placement speed: 58 MoE layers x 256 experts on 64 GPUs (8 nodes)
// with 64 redundant slots (DeepSeek-V3-like lognormal loads), on 2 threads.
// Target: the whole placement within 1 s (the command's default budget).
// Prints medians, per-layer gaps and the greedy balancer's time beside it.
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "solvers/expert_placement.h"
#include "src/plan/expert_placement_run.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  using namespace parplan;
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 2);
  std::mt19937 rng(2026);
  std::lognormal_distribution<double> draw(0.0, 0.5);
  std::vector<std::vector<double>> loads(58, std::vector<double>(256));
  for (auto& row : loads) {
    for (double& x : row) x = std::round(12800 * draw(rng));
  }
  ExpertPlacementShape shape{256, 64, 8, 0, 64};
  const int repeats = 5;

  std::vector<double> greedy_s, heuristic_s, total_s;
  ExpertPlacementRun last;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    for (const auto& row : loads) (void)greedy_layer_placement(row, shape);
    greedy_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());

    ExpertPlacementRequest request;
    request.shape = shape;
    request.time_limit_s = 1.0;
    request.start = Clock::now();
    last = run_expert_placement(loads, request);
    heuristic_s.push_back(last.heuristic_s);
    total_s.push_back(last.time_s);
  }

  std::printf(
      "experts_bench: 58 layers x 256 experts, 64 GPUs / 8 nodes, 64 redundant (5 slots per GPU), 2 "
      "threads\n");
  std::printf("  greedy balancer (replicate + balanced packing, 1 thread): median %.4f s\n",
              median(greedy_s));
  std::printf("  parplan heuristic phase (greedy + swaps/transfers, TBB): median %.4f s (%.1fx greedy)\n",
              median(heuristic_s), median(heuristic_s) / median(greedy_s));
  std::printf(
      "  parplan whole placement, --time-limit 1 (heuristic + cbc MILP windows): median %.4f s (target <= 1 "
      "s)\n",
      median(total_s));

  double mean_imb = 0, mean_greedy = 0, mean_bound = 0, worst_gap = 0;
  int optimal = 0, improved = 0;
  std::printf("  per-layer: layer imbalance (greedy) bound gap%%\n");
  for (size_t l = 0; l < last.layers.size(); ++l) {
    const LayerResult& r = last.layers[l];
    const double total = last.total_load[l];
    const double imb = imbalance(r.placement.max_load, total, 64);
    const double gr = imbalance(r.greedy_max_load, total, 64);
    const double lb = imbalance(r.lower_bound_load, total, 64);
    mean_imb += imb;
    mean_greedy += gr;
    mean_bound += lb;
    worst_gap = std::max(worst_gap, r.certificate.gap);
    optimal += r.certificate.status == SolveStatus::kOptimal;
    improved += r.milp_improved;
    std::printf("    %2zu  %.4f (%.4f) %.4f %5.2f%s\n", l, imb, gr, lb, 100 * r.certificate.gap,
                r.milp_improved ? "  MILP improved" : "");
  }
  const double n = static_cast<double>(last.layers.size());
  std::printf(
      "  mean imbalance %.4f (greedy %.4f, lower bound %.4f); largest gap %.2f%%; %d layers proven optimal, "
      "%d improved by the MILP\n",
      mean_imb / n, mean_greedy / n, mean_bound / n, 100 * worst_gap, optimal, improved);
  return 0;
}
