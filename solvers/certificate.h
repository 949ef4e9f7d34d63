// SolverCertificate: what a solve proves about its answer (status, objective,
// best bound, gap, backend, time), reported with every plan.
#pragma once

#include <limits>
#include <string>

namespace parplan {

enum class SolveStatus {
  /// The objective is within SolveOptions::relative_gap of the proven bound.
  kOptimal,
  /// A solution exists but the solver stopped (time limit) with a larger gap.
  kFeasible,
  /// Proven: no solution exists.
  kInfeasible,
  /// Stopped on the time limit before any solution was found.
  kTimeLimitNoSolution,
  /// The objective can be improved without limit (or the LP relaxation can).
  kUnbounded,
  /// Invalid model, model too large for the backend, or a solver failure.
  kError,
};

/// "optimal", "feasible", "infeasible", "time_limit", "unbounded", "error".
inline const char* status_name(SolveStatus status) {
  switch (status) {
    case SolveStatus::kOptimal:
      return "optimal";
    case SolveStatus::kFeasible:
      return "feasible";
    case SolveStatus::kInfeasible:
      return "infeasible";
    case SolveStatus::kTimeLimitNoSolution:
      return "time_limit";
    case SolveStatus::kUnbounded:
      return "unbounded";
    case SolveStatus::kError:
      return "error";
  }
  return "error";
}

/// True for the statuses that come with a solution (kOptimal, kFeasible).
inline bool has_solution(SolveStatus status) {
  return status == SolveStatus::kOptimal || status == SolveStatus::kFeasible;
}

struct SolverCertificate {
  /// Name of the formulation (MilpModel::name()).
  std::string name;
  SolveStatus status = SolveStatus::kError;
  /// Objective of the returned solution, in the model's sense and units
  /// (NaN without a solution).
  double objective = std::numeric_limits<double>::quiet_NaN();
  /// Proven bound on the optimum: a lower bound when minimising, an upper
  /// bound when maximising (+-inf when nothing is proven, NaN when infeasible).
  double best_bound = std::numeric_limits<double>::quiet_NaN();
  /// |objective - best_bound| / max(|objective|, 1e-9); 0 when optimal to
  /// machine precision, +inf when no bound is known, NaN without a solution.
  double gap = std::numeric_limits<double>::quiet_NaN();
  /// "cbc", "glpk" or "exhaustive".
  std::string backend;
  /// Wall-clock seconds of the solve.
  double time_s = 0;
  /// Why the status is kError (or other detail worth reporting); may be empty.
  std::string message;
};

}  // namespace parplan
