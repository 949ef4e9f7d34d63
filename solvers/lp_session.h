// LpSession: one pure LP solved again and again as its bounds change, each
// solve on CBC's Clp warm-started from the last optimal basis (the dual
// simplex goes on from it); other backends solve it afresh. The scatter
// bound solves the same LP with one sequence pinned at each of its sizes and
// then with the micro-batch count fixed, where a cold solve took about a
// millisecond and most of the step's LP time.
#pragma once

#include <memory>

#include "solvers/milp_model.h"
#include "solvers/solve.h"

namespace parplan {

namespace detail {
class WarmLp;
}

class LpSession {
 public:
  /// `model` must be a pure LP (solve() reports kError otherwise).
  LpSession(MilpModel model, SolverBackend backend);
  ~LpSession();
  LpSession(const LpSession&) = delete;
  LpSession& operator=(const LpSession&) = delete;

  /// New bounds for the next solve; throws std::invalid_argument as
  /// MilpModel's setters do.
  void set_variable_bounds(int var, double lower, double upper);
  void set_row_bounds(int row, double lower, double upper);

  /// As solve(model, backend, options) on the model with its current bounds.
  SolveResult solve(const SolveOptions& options);

  const MilpModel& model() const { return model_; }
  SolverBackend backend() const { return backend_; }

 private:
  MilpModel model_;
  SolverBackend backend_;
  std::unique_ptr<detail::WarmLp> warm_;
  bool warm_failed_ = false;
};

}  // namespace parplan
