// Exhaustive backend: enumerates every assignment of the integer variables;
// continuous variables (at most one per row) are set in closed form. Exact,
// slow, and the reference the real solvers are tested against.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "solvers/backend_internal.h"

namespace parplan::detail {

namespace {

constexpr double kIntervalTolerance = 1e-9;

struct RowState {
  double activity = 0;  // over the integer variables only
  bool violated = false;
};

}  // namespace

BackendOutcome solve_exhaustive(const PreparedModel& p, const SolveOptions& options) {
  BackendOutcome out;
  const int n = p.num_variables();
  const int m = p.num_rows();

  std::vector<int> ints;
  std::vector<int> conts;
  double assignments = 1;
  for (int j = 0; j < n; ++j) {
    if (p.integer[j]) {
      if (!std::isfinite(p.lower[j]) || !std::isfinite(p.upper[j])) {
        out.message = "exhaustive backend needs finite bounds on integer variable '" +
                      p.model->variables()[j].name + "'";
        return out;
      }
      ints.push_back(j);
      assignments *= p.upper[j] - p.lower[j] + 1;
    } else {
      conts.push_back(j);
    }
  }
  if (assignments > kExhaustiveMaxAssignments) {
    out.message = "exhaustive backend: too many assignments to enumerate";
    return out;
  }

  // Per row: its continuous variable (or -1) and that variable's coefficient.
  std::vector<int> row_cont(m, -1);
  std::vector<double> row_cont_coef(m, 0);
  std::vector<std::vector<int>> cont_rows(n);
  std::vector<std::vector<int>> int_col_rows(n);
  for (int i = 0; i < m; ++i) {
    for (const MilpTerm& t : p.row(i).terms) {
      if (p.integer[t.var]) {
        int_col_rows[t.var].push_back(i);
      } else if (row_cont[i] >= 0) {
        out.message = "exhaustive backend: row '" + p.row(i).name + "' has more than one continuous variable";
        return out;
      } else {
        row_cont[i] = t.var;
        row_cont_coef[i] = t.coef;
        cont_rows[t.var].push_back(i);
      }
    }
  }

  std::vector<double> x(n, 0);
  for (int j : ints) x[j] = p.lower[j];
  std::vector<RowState> rows(m);
  int violated = 0;
  auto refresh = [&](int i) {
    const MilpRow& row = p.row(i);
    double activity = 0;
    for (const MilpTerm& t : row.terms) {
      if (p.integer[t.var]) activity += t.coef * x[t.var];
    }
    rows[i].activity = activity;
    if (row_cont[i] >= 0) return;  // checked with its continuous variable
    const double tol = kIntervalTolerance * std::max(1.0, std::abs(activity));
    const bool now = activity < row.lower - tol || activity > row.upper + tol;
    violated += static_cast<int>(now) - static_cast<int>(rows[i].violated);
    rows[i].violated = now;
  };
  for (int i = 0; i < m; ++i) refresh(i);

  const auto start = std::chrono::steady_clock::now();
  bool found = false;
  double best = kInfinity;
  std::vector<double> best_x;
  long long iterations = 0;

  while (true) {
    if (violated == 0) {
      // Place every continuous variable at its best end of its interval.
      bool feasible = true;
      bool unbounded = false;
      double objective = 0;
      for (int j : ints) objective += p.cost[j] * x[j];
      for (int c : conts) {
        double lo = p.lower[c];
        double hi = p.upper[c];
        for (int i : cont_rows[c]) {
          const MilpRow& row = p.row(i);
          const double a = row_cont_coef[i];
          const double rest = rows[i].activity;
          double from = (row.lower - rest) / a;  // +-inf stays +-inf
          double to = (row.upper - rest) / a;
          if (a < 0) std::swap(from, to);
          lo = std::max(lo, from);
          hi = std::min(hi, to);
        }
        const double tol = kIntervalTolerance * std::max({1.0, std::abs(lo), std::abs(hi)});
        if (lo > hi + tol) {
          feasible = false;
          break;
        }
        hi = std::max(hi, lo);
        double value;
        if (p.cost[c] > 0) {
          value = lo;
        } else if (p.cost[c] < 0) {
          value = hi;
        } else {
          value = std::clamp(0.0, lo, hi);
        }
        if (std::isinf(value)) {
          unbounded = true;  // still check the other continuous variables
          continue;
        }
        x[c] = value;
        objective += p.cost[c] * value;
      }
      if (feasible && unbounded) {
        out.status = SolveStatus::kUnbounded;
        return out;
      }
      if (feasible && (!found || objective < best)) {
        found = true;
        best = objective;
        best_x = x;
      }
    }

    // Next assignment (odometer over the integer variables).
    std::size_t pos = 0;
    for (; pos < ints.size(); ++pos) {
      const int j = ints[pos];
      if (x[j] < p.upper[j]) {
        x[j] += 1;
        for (int i : int_col_rows[j]) refresh(i);
        break;
      }
      x[j] = p.lower[j];
      for (int i : int_col_rows[j]) refresh(i);
    }
    if (pos == ints.size()) break;

    if (++iterations % 4096 == 0) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (elapsed > options.time_limit_s) {
        if (found) {
          out.status = SolveStatus::kFeasible;
          out.values = best_x;
        } else {
          out.status = SolveStatus::kTimeLimitNoSolution;
        }
        return out;  // nothing is proven about the rest: bound stays -inf
      }
    }
  }

  if (!found) {
    out.status = SolveStatus::kInfeasible;
    return out;
  }
  out.status = SolveStatus::kOptimal;
  out.values = best_x;
  out.bound_min = best;
  return out;
}

}  // namespace parplan::detail
