// Heuristic phase in parallel, MILP phase on the worst gaps, baselines.
#include "src/plan/expert_placement_run.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <numeric>

namespace parplan {

namespace {

using Clock = std::chrono::steady_clock;

/// Fraction of --time-limit for the heuristic phase.
constexpr double kHeuristicShare = 0.7;

Clock::time_point after(Clock::time_point t, double seconds) {
  return t +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(0.0, seconds)));
}

}  // namespace

ExpertPlacementRun run_expert_placement(const std::vector<std::vector<double>>& loads,
                                        const ExpertPlacementRequest& request) {
  const int layers = static_cast<int>(loads.size());
  ExpertPlacementRun run;
  run.layers.resize(layers);
  run.baselines.resize(layers);
  run.total_load.resize(layers);

  PlacementOptions options;
  options.backend = request.backend;
  options.deadline = after(request.start, request.time_limit_s - request.reserve_s);
  options.bound_deadline = options.deadline;
  options.solver_time_limit_s =
      request.solver_time_limit_s > 0 ? request.solver_time_limit_s : std::max(request.time_limit_s, 1e-3);

  const auto heuristic_start = Clock::now();
  // Each layer's improvement gets an equal share of most of the budget, so
  // that no layer is left with the bare greedy start; the MILP gets the rest.
  const int threads = std::max(1, tbb::this_task_arena::max_concurrency());
  const double per_layer_s =
      kHeuristicShare * request.time_limit_s * std::min(threads, layers) / std::max(1, layers);
  tbb::parallel_for(0, layers, [&](int l) {
    PlacementOptions mine = options;
    mine.deadline = std::min(options.deadline, after(Clock::now(), per_layer_s));
    run.layers[l] = place_layer_heuristic(loads[l], request.shape, mine);
    run.baselines[l].greedy_max_load = run.layers[l].greedy_max_load;
    run.baselines[l].static_max_load = static_placement(loads[l], request.shape.gpus).max_load;
    run.total_load[l] = std::accumulate(loads[l].begin(), loads[l].end(), 0.0);
  });
  run.heuristic_s = std::chrono::duration<double>(Clock::now() - heuristic_start).count();

  if (request.use_milp) {
    // The backends run one solve at a time, so the MILP phase is sequential:
    // the widest gaps first, each as long as the budget allows.
    std::vector<int> order(layers);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return run.layers[a].certificate.gap > run.layers[b].certificate.gap;
    });
    // Each layer left gets an equal share of what remains, so one hard
    // layer cannot take the whole budget (unless --solver-time-limit says
    // how long one MILP may run).
    for (size_t i = 0; i < order.size(); ++i) {
      const auto now = Clock::now();
      if (now >= options.deadline) break;
      const double left_s = std::chrono::duration<double>(options.deadline - now).count();
      const double share_s = left_s / static_cast<double>(order.size() - i);
      PlacementOptions mine = options;
      if (request.solver_time_limit_s <= 0) {
        mine.deadline = std::min(options.deadline, after(now, share_s));
        mine.solver_time_limit_s = share_s;
      }
      improve_layer_with_milp(loads[order[i]], request.shape, mine, run.layers[order[i]]);
    }
  }
  run.time_s = std::chrono::duration<double>(Clock::now() - request.start).count();
  return run;
}

}  // namespace parplan
