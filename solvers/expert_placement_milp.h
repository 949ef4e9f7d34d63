// The expert-placement MILP over a window of identical GPUs: which GPU
// holds a replica of which expert and how many replicas each expert has,
// minimising the busiest GPU of the window.
#pragma once

#include <optional>
#include <vector>

#include "solvers/milp_model.h"
#include "solvers/solve.h"

namespace parplan {

/// An expert as the window sees it: `outside` replicas sit on GPUs outside
/// the window (fixed), and between min_count and max_count replicas inside.
/// Tokens are split evenly over all outside + inside replicas.
struct WindowExpert {
  double load = 0;
  int outside = 0;
  int min_count = 1;
  int max_count = 1;
};

struct PlacementWindow {
  std::vector<WindowExpert> experts;
  int gpus = 0;
  int slots = 0;
  /// The busiest GPU may not exceed this (tokens): the incumbent's value.
  double upper_bound = kInfinity;
};

/// Variables: x[i][g] (binary: expert i on GPU g), y[i][k] (binary: i has
/// min_count + k replicas in the window, only when min_count < max_count),
/// l[i][g] >= 0 (tokens of i on g), M (busiest GPU). Rows: S slots per GPU,
/// sum_g x = count, l >= share(count) - load * (1 - x), sum_g l >= tokens in
/// the window, M >= sum_i l, M <= upper_bound; the heaviest expert is put on
/// GPU 0 (the GPUs are interchangeable). Tokens are divided by `scale`.
struct PlacementMilp {
  MilpModel model;
  double scale = 1;
};
PlacementMilp build_placement_milp(const PlacementWindow& window);

struct WindowSolution {
  std::vector<int> counts;                   ///< inside replicas per expert
  std::vector<std::vector<int>> gpu_experts;  ///< window expert per slot
};

struct WindowSolve {
  SolverCertificate certificate;  ///< objective and bound in tokens
  std::optional<WindowSolution> solution;
};

WindowSolve solve_placement_window(const PlacementWindow& window, SolverBackend backend,
                                   const SolveOptions& options);

}  // namespace parplan
