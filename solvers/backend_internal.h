// Internal to solvers/: the minimisation form of a MilpModel that every
// backend receives, and what a backend hands back to solve().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "solvers/certificate.h"
#include "solvers/milp_model.h"
#include "solvers/solve.h"

namespace parplan::detail {

/// A validated model in minimisation form: cost = sense_sign * objective,
/// integer bounds rounded inward, binary treated as integer. Rows are read
/// from `model`; their bounds are consistent (lower <= upper) and so are the
/// variables' bounds.
struct PreparedModel {
  const MilpModel* model = nullptr;
  std::vector<double> lower;
  std::vector<double> upper;
  std::vector<double> cost;
  std::vector<bool> integer;

  int num_variables() const { return static_cast<int>(cost.size()); }
  int num_rows() const { return model->num_rows(); }
  const MilpRow& row(int i) const { return model->rows()[i]; }
  bool pure_lp() const;
};

/// What a backend found. status kOptimal means the backend proved the
/// solution optimal (possibly within the requested gap); kFeasible means it
/// has a solution but stopped early. Values are in model variable order.
/// bound_min is a proven lower bound on min(cost . x) (-inf if unknown).
struct BackendOutcome {
  SolveStatus status = SolveStatus::kError;
  std::vector<double> values;
  /// Pure LPs at their optimum: row duals of the minimisation form.
  std::vector<double> row_duals;
  double bound_min = -kInfinity;
  std::string message;
};

/// A pure LP kept loaded in a backend between solves: bounds change, the
/// next solve starts from the last basis.
class WarmLp {
 public:
  virtual ~WarmLp() = default;
  /// Bounds in minimisation form, +-kInfinity where missing.
  virtual void set_variable_bounds(int var, double lower, double upper) = 0;
  virtual void set_row_bounds(int row, double lower, double upper) = 0;
  virtual BackendOutcome solve(const SolveOptions& options) = 0;
};

/// CBC's Clp only: GLPK frees its whole environment after every solve (see
/// glpk_backend.cpp), so its LPs are loaded afresh each time.
std::unique_ptr<WarmLp> make_warm_clp(const PreparedModel& model);

/// The checked SolveResult of a backend's outcome (solve()'s last step).
SolveResult finish(const MilpModel& model, const BackendOutcome& outcome, const std::vector<bool>& integer,
                   const SolveOptions& options);
/// The minimisation form of a validated model; false (and `failure` set)
/// when a variable's bounds cross.
bool prepare(const MilpModel& model, PreparedModel& prepared, SolveResult& failure);

BackendOutcome solve_cbc(const PreparedModel& model, const SolveOptions& options);
BackendOutcome solve_glpk(const PreparedModel& model, const SolveOptions& options);
BackendOutcome solve_exhaustive(const PreparedModel& model, const SolveOptions& options);

}  // namespace parplan::detail
