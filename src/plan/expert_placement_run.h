// Places the experts of every MoE layer within one time budget: the
// heuristic on all layers in parallel (TBB), then the MILP on the layers left
// furthest above their lower bound while time remains; baselines beside it.
#pragma once

#include <chrono>
#include <vector>

#include "solvers/expert_placement.h"

namespace parplan {

struct ExpertPlacementRequest {
  ExpertPlacementShape shape;
  SolverBackend backend = SolverBackend::kCbc;
  /// Whole placement (heuristic + MILP), from `start`.
  double time_limit_s = 1;
  /// One MILP solve; <= 0: each layer left gets an equal share of what is
  /// left of time_limit_s.
  double solver_time_limit_s = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  /// Reserved at the end of the budget for writing the output.
  double reserve_s = 0.1;
  bool use_milp = true;
};

struct LayerBaselines {
  double static_max_load = 0;
  double greedy_max_load = 0;
};

struct ExpertPlacementRun {
  std::vector<LayerResult> layers;
  std::vector<LayerBaselines> baselines;
  std::vector<double> total_load;  ///< tokens per layer
  double heuristic_s = 0;          ///< wall time of the parallel heuristic phase
  double time_s = 0;               ///< wall time of the whole placement
};

/// `loads[layer][expert]` in tokens (checked by the caller: rectangular,
/// finite, >= 0, every layer with tokens); the shape must be valid.
ExpertPlacementRun run_expert_placement(const std::vector<std::vector<double>>& loads,
                                        const ExpertPlacementRequest& request);

}  // namespace parplan
