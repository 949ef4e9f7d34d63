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

/// Variables: u[i][k][g] (binary: expert i has k replicas in the window and
/// one of them on GPU g), y[i][k] (binary: i has k replicas; only when
/// min_count < max_count), M (busiest GPU). Rows: sum_g u[i][k][g] = k y[i][k],
/// sum_k y[i][k] = 1, at most one replica of i per GPU, S slots per GPU,
/// M >= load(g) = sum (load_i / (outside_i + k)) u[i][k][g], M <= upper_bound,
/// and load(g) >= load(g+1) (the GPUs are interchangeable). No big-M: a
/// GPU's load is linear in u. Tokens are divided by `scale`.
struct PlacementMilp {
  MilpModel model;
  double scale = 1;
};
PlacementMilp build_placement_milp(const PlacementWindow& window);

struct WindowSolution {
  std::vector<int> counts;                    ///< inside replicas per expert
  std::vector<std::vector<int>> gpu_experts;  ///< window expert per slot
};

struct WindowSolve {
  SolverCertificate certificate;  ///< objective and bound in tokens
  std::optional<WindowSolution> solution;
};

WindowSolve solve_placement_window(const PlacementWindow& window, SolverBackend backend,
                                   const SolveOptions& options);

}  // namespace parplan
