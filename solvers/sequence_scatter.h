// Sequence scattering (FlexSP, Wang et al. ASPLOS 2025): per training step,
// split the GPUs of every micro-batch into sequence-parallel groups of
// different sizes and assign each sequence to one group, minimising the
// step time; a fast constructive path, a proven bound, the MILP on CBC/GLPK.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cost/scatter_coefficients.h"
#include "solvers/certificate.h"
#include "solvers/solve.h"

namespace parplan {

/// p GPUs [first_rank, first_rank + size) running `sequences` (0-based
/// indices into the step's list) one after another.
struct ScatterGroup {
  int size = 0;
  int first_rank = 0;
  std::vector<int> sequences;
  double tokens = 0;
  double time_ms = 0;  ///< fixed_ms included
};

/// Groups running side by side; time = the slowest group.
struct ScatterMicroBatch {
  std::vector<ScatterGroup> groups;
  double time_ms = 0;
};

/// Micro-batches run one after another; time = their sum.
struct ScatterPlan {
  std::vector<ScatterMicroBatch> micro_batches;
  double time_ms = std::numeric_limits<double>::infinity();
  bool empty() const { return micro_batches.empty(); }
};

struct ScatterOptions {
  SolverBackend backend = SolverBackend::kCbc;
  /// Wall-clock budget of one step (fast path, static baseline and MILP).
  double step_time_limit_s = 0.05;
  /// false: the fast path alone (its gap is still stated).
  bool use_milp = true;
  /// The MILP runs only while the gap to the bound exceeds this.
  double relative_gap = 1e-4;
  /// The MILP is skipped when it would have more integer variables than
  /// this (it could not improve a large step within a step's budget).
  int max_milp_integers = 6000;
  /// Local searches the one-for-several swap (a long sequence into a larger
  /// group, short ones out) may start per step; 0: off. On the bench, 2
  /// took the mean gap from 3.65 to 3.61 % (median unchanged, 3.71 %) for
  /// about 2 ms more per step, 6 to 3.59 % at the 20 ms share of the budget
  /// it may use: off by default, as it makes the median step slower.
  int eject_searches = 0;
  /// After the plan search, the group-count LP again with the number of
  /// micro-batches fixed at the whole numbers beside its relaxed optimum
  /// (two or three more LPs of about 1 ms on the bench).
  bool whole_micro_batch_bound = true;
  /// Wall-clock seconds beyond step_time_limit_s for the iterated ruin and
  /// recreate after the plan search and MILP (0: none): an anytime search,
  /// the plan it returns depends on the time it gets.
  double improve_time_s = 0;
};

struct ScatterStepResult {
  ScatterPlan plan;
  /// Status, objective (= plan.time_ms), bound, gap and backend. backend is
  /// "cbc"/"glpk" when the MILP ran, "fast-path" when the bound already
  /// closed the gap or the MILP was too large; message says which.
  SolverCertificate certificate;
  /// The best plan in which every group has one size p (G/p groups per
  /// micro-batch); size 0 when no single size holds every sequence.
  int static_size = 0;
  double static_time_ms = std::numeric_limits<double>::quiet_NaN();
  /// Wall-clock milliseconds spent on this step.
  double solve_ms = 0;
};

/// Longest sequence any allowed group can hold: largest size x K.
double scatter_capacity_tokens(const ScatterCoefficients& coefficients);

/// Index of the first sequence longer than scatter_capacity_tokens, or -1.
int first_unplaceable_sequence(const std::vector<std::int64_t>& lengths,
                               const ScatterCoefficients& coefficients);

/// Proven lower bound on the step time of any plan (ms): every micro-batch
/// pays fixed_ms and holds at most G K tokens, and lasts at least its
/// GPU-milliseconds (each sequence at its cheapest allowed size) over G;
/// the step lasts at least its slowest sequence on its fastest group; and,
/// for any one sequence at any one size, both terms with it at that size.
double scatter_lower_bound_ms(const std::vector<std::int64_t>& lengths, int gpus,
                              const ScatterCoefficients& coefficients);

/// Recomputes every group's tokens and time, every micro-batch's time, the
/// step time, and lays the groups of each micro-batch on aligned rank blocks
/// (largest first). Empty groups and micro-batches are dropped.
void finalize_scatter_plan(ScatterPlan& plan, const std::vector<std::int64_t>& lengths,
                           const ScatterCoefficients& coefficients);

/// Empty when `plan` is valid for the step; otherwise the first violated
/// constraint: a sequence missing or placed twice, a size not allowed,
/// ranks outside [0, G) or unaligned or overlapping, memory over K per GPU.
std::string check_scatter_plan(const ScatterPlan& plan, const std::vector<std::int64_t>& lengths, int gpus,
                               const ScatterCoefficients& coefficients);

/// Solves one step. Precondition: first_unplaceable_sequence(...) == -1 and
/// check_scatter_coefficients(...) is empty (otherwise kInfeasible/kError).
ScatterStepResult solve_scatter_step(const std::vector<std::int64_t>& lengths, int gpus,
                                     const ScatterCoefficients& coefficients, const ScatterOptions& options);

}  // namespace parplan
