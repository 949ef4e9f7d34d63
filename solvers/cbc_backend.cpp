// COIN-OR backend: Clp for pure LPs, CbcModel branch and bound otherwise.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <coin/CbcModel.hpp>
#include <coin/CoinError.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "solvers/backend_internal.h"

namespace parplan::detail {

namespace {

// One COIN-OR solve at a time: CBC/Clp keep a little global state (message
// catalogues, timers) that is not documented as thread-safe.
std::mutex& cbc_mutex() {
  static std::mutex mutex;
  return mutex;
}

double to_coin(double x, double infinity) {
  if (x == kInfinity) return infinity;
  if (x == -kInfinity) return -infinity;
  return x;
}

void load(const PreparedModel& p, OsiClpSolverInterface& lp) {
  const double inf = lp.getInfinity();
  const int n = p.num_variables();
  // Rows in one compressed block (MilpModel merges each row's duplicate
  // terms): appending them one by one reallocates the matrix every time,
  // most of the load time of a small LP.
  std::vector<CoinBigIndex> starts{0};
  std::vector<int> indices;
  std::vector<double> elements;
  std::vector<double> row_lower;
  std::vector<double> row_upper;
  for (int i = 0; i < p.num_rows(); ++i) {
    const MilpRow& row = p.row(i);
    for (const MilpTerm& t : row.terms) {
      indices.push_back(t.var);
      elements.push_back(t.coef);
    }
    starts.push_back(static_cast<CoinBigIndex>(indices.size()));
    row_lower.push_back(to_coin(row.lower, inf));
    row_upper.push_back(to_coin(row.upper, inf));
  }
  const CoinPackedMatrix matrix(false, n, p.num_rows(), static_cast<CoinBigIndex>(elements.size()),
                                elements.data(), indices.data(), starts.data(), nullptr);
  std::vector<double> col_lower(n);
  std::vector<double> col_upper(n);
  for (int j = 0; j < n; ++j) {
    col_lower[j] = to_coin(p.lower[j], inf);
    col_upper[j] = to_coin(p.upper[j], inf);
  }
  lp.loadProblem(matrix, col_lower.data(), col_upper.data(), p.cost.data(), row_lower.data(),
                 row_upper.data());
  lp.setObjSense(1.0);
  for (int j = 0; j < n; ++j) {
    if (p.integer[j]) lp.setInteger(j);
  }
}

void silence(OsiClpSolverInterface& lp) {
  lp.messageHandler()->setLogLevel(0);
  lp.getModelPtr()->setLogLevel(0);
  lp.setHintParam(OsiDoReducePrint, true, OsiHintTry);
}

// Clp's dual simplex without presolve: on the small LPs solved many times
// (the scatter bound's, about 160 columns and 210 rows) presolve took more
// time than the simplex.
void prefer_dual_without_presolve(OsiClpSolverInterface& lp) {
  lp.setHintParam(OsiDoPresolveInInitial, false, OsiHintDo);
  lp.setHintParam(OsiDoDualInInitial, true, OsiHintDo);
  lp.setHintParam(OsiDoPresolveInResolve, false, OsiHintDo);
  lp.setHintParam(OsiDoDualInResolve, true, OsiHintDo);
}

BackendOutcome lp_outcome(OsiClpSolverInterface& lp) {
  BackendOutcome out;
  if (lp.isProvenOptimal()) {
    out.status = SolveStatus::kOptimal;
    const double* x = lp.getColSolution();
    out.values.assign(x, x + lp.getNumCols());
    const double* y = lp.getRowPrice();
    out.row_duals.assign(y, y + lp.getNumRows());
    out.bound_min = lp.getObjValue();
  } else if (lp.isProvenPrimalInfeasible()) {
    out.status = SolveStatus::kInfeasible;
  } else if (lp.isProvenDualInfeasible()) {
    out.status = SolveStatus::kUnbounded;
  } else if (lp.isIterationLimitReached() || lp.getModelPtr()->hitMaximumIterations()) {
    out.status = SolveStatus::kTimeLimitNoSolution;
  } else {
    out.status = SolveStatus::kError;
    out.message = "Clp abandoned the LP (numerical difficulties)";
  }
  return out;
}

BackendOutcome solve_lp(OsiClpSolverInterface& lp, const SolveOptions& options) {
  lp.getModelPtr()->setMaximumWallSeconds(options.time_limit_s);
  prefer_dual_without_presolve(lp);
  lp.initialSolve();
  return lp_outcome(lp);
}

class WarmClp : public WarmLp {
 public:
  explicit WarmClp(const PreparedModel& model) {
    std::lock_guard<std::mutex> lock(cbc_mutex());
    silence(lp_);
    load(model, lp_);
    silence(lp_);
    prefer_dual_without_presolve(lp_);
  }
  ~WarmClp() override {
    std::lock_guard<std::mutex> lock(cbc_mutex());
    lp_.reset();
  }
  void set_variable_bounds(int var, double lower, double upper) override {
    const double inf = lp_.getInfinity();
    lp_.setColBounds(var, to_coin(lower, inf), to_coin(upper, inf));
  }
  void set_row_bounds(int row, double lower, double upper) override {
    const double inf = lp_.getInfinity();
    lp_.setRowBounds(row, to_coin(lower, inf), to_coin(upper, inf));
  }
  BackendOutcome solve(const SolveOptions& options) override {
    std::lock_guard<std::mutex> lock(cbc_mutex());
    try {
      lp_.getModelPtr()->setMaximumWallSeconds(options.time_limit_s);
      // The last optimal basis stays valid after bound changes: the dual
      // simplex goes on from it.
      if (solved_optimal_) {
        lp_.resolve();
      } else {
        lp_.initialSolve();
      }
      BackendOutcome out = lp_outcome(lp_);
      solved_optimal_ = out.status == SolveStatus::kOptimal;
      return out;
    } catch (const CoinError& e) {
      throw std::runtime_error("CBC: " + e.className() + "::" + e.methodName() + ": " + e.message());
    }
  }

 private:
  OsiClpSolverInterface lp_;
  bool solved_optimal_ = false;
};

BackendOutcome solve_mip(OsiClpSolverInterface& lp, const SolveOptions& options) {
  BackendOutcome out;
  const auto start = std::chrono::steady_clock::now();
  // Clp's default start on a large LP (the Idiot crash) ignores the
  // wall-clock limit; the dual simplex checks it.
  lp.setHintParam(OsiDoDualInInitial, true, OsiHintDo);
  // CbcModel reports an unbounded MILP as infeasible: look at the relaxation
  // first (solve() then decides unbounded vs infeasible).
  lp.getModelPtr()->setMaximumWallSeconds(options.time_limit_s);
  lp.initialSolve();
  if (lp.isProvenDualInfeasible()) {
    out.status = SolveStatus::kUnbounded;
    return out;
  }
  if (lp.isProvenPrimalInfeasible()) {
    out.status = SolveStatus::kInfeasible;
    return out;
  }
  const double left_s =
      options.time_limit_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (left_s <= 0 || lp.isIterationLimitReached()) {
    // The relaxation used up the time limit; its value bounds the MILP only
    // when it was solved to the end.
    out.status = SolveStatus::kTimeLimitNoSolution;
    out.bound_min = lp.isProvenOptimal() ? lp.getObjValue() : -kInfinity;
    return out;
  }
  // CbcModel checks its clock between nodes only, so each LP it solves also
  // gets a limit, a quarter above CbcModel's. CbcModel takes a node LP
  // stopped at that limit for an infeasible node, which voids its bound and
  // optimality claim: a search that ran that long keeps only the root's.
  const double relaxation_min = lp.isProvenOptimal() ? lp.getObjValue() : -kInfinity;
  const double lp_limit_s = 1.25 * left_s;
  lp.getModelPtr()->setMaximumWallSeconds(lp_limit_s);
  const auto search_start = std::chrono::steady_clock::now();

  CbcModel cbc(lp);
  cbc.setLogLevel(0);
  cbc.messageHandler()->setLogLevel(0);
  cbc.solver()->messageHandler()->setLogLevel(0);
  cbc.setUseElapsedTime(true);
  cbc.setMaximumSeconds(left_s);
  cbc.setAllowableFractionGap(options.relative_gap);
  cbc.setAllowableGap(0.0);
  cbc.branchAndBound();
  const bool lp_stopped =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - search_start).count() >= lp_limit_s;

  const double* best = cbc.bestSolution();
  if (best != nullptr) {
    out.values.assign(best, best + cbc.getNumCols());
    out.bound_min = lp_stopped ? relaxation_min : cbc.getBestPossibleObjValue();
    out.status = cbc.isProvenOptimal() && !lp_stopped ? SolveStatus::kOptimal : SolveStatus::kFeasible;
    return out;
  }
  if (lp_stopped) {
    out.status = SolveStatus::kTimeLimitNoSolution;
    out.bound_min = relaxation_min;
    return out;
  }
  if (cbc.isContinuousUnbounded() || cbc.secondaryStatus() == 7) {
    out.status = SolveStatus::kUnbounded;
  } else if (cbc.isProvenInfeasible() || (cbc.status() == 0 && cbc.secondaryStatus() == 1)) {
    out.status = SolveStatus::kInfeasible;
  } else if (cbc.isSecondsLimitReached()) {
    out.status = SolveStatus::kTimeLimitNoSolution;
    const double bound = cbc.getBestPossibleObjValue();
    out.bound_min = std::abs(bound) >= 1e30 ? -kInfinity : bound;
  } else if (cbc.status() == 0) {
    // Search finished without a solution.
    out.status = SolveStatus::kInfeasible;
  } else {
    out.status = SolveStatus::kError;
    out.message = "CBC stopped without a solution (status " + std::to_string(cbc.status()) + ", secondary " +
                  std::to_string(cbc.secondaryStatus()) + ")";
  }
  return out;
}

}  // namespace

std::unique_ptr<WarmLp> make_warm_clp(const PreparedModel& model) {
  try {
    return std::make_unique<WarmClp>(model);
  } catch (const CoinError& e) {
    throw std::runtime_error("CBC: " + e.className() + "::" + e.methodName() + ": " + e.message());
  }
}

BackendOutcome solve_cbc(const PreparedModel& model, const SolveOptions& options) {
  std::lock_guard<std::mutex> lock(cbc_mutex());
  try {
    OsiClpSolverInterface lp;
    silence(lp);
    load(model, lp);
    silence(lp);
    if (model.pure_lp()) return solve_lp(lp, options);
    return solve_mip(lp, options);
  } catch (const CoinError& e) {
    // COIN-OR's exception is not a std::exception: name it here, so solve()
    // needs no catch-all that would also hide our own bugs.
    throw std::runtime_error("CBC: " + e.className() + "::" + e.methodName() + ": " + e.message());
  }
}

}  // namespace parplan::detail
