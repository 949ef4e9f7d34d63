#include "solvers/profile_fit.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "solvers/milp_model.h"

namespace parplan {

namespace {

/// A constant's value mapped to [0, 1] over its bounds, through 1 / value
/// for reciprocal constants: the LP's variables live in this space.
struct Coordinate {
  FittedConstant constant;
  double low = 0, high = 1;  // bounds of the transformed value

  explicit Coordinate(const FittedConstant& c) : constant(c) {
    low = c.reciprocal ? 1.0 / c.upper : c.lower;
    high = c.reciprocal ? 1.0 / c.lower : c.upper;
  }
  double to_unit(double value) const {
    const double t = constant.reciprocal ? 1.0 / value : value;
    return std::clamp((t - low) / (high - low), 0.0, 1.0);
  }
  double from_unit(double u) const {
    const double t = low + std::clamp(u, 0.0, 1.0) * (high - low);
    return constant.reciprocal ? 1.0 / t : t;
  }
};

struct Problem {
  ClusterSpec base;
  const std::vector<FitRun>* runs = nullptr;
  std::vector<Coordinate> coords;
  FitObjective objective = FitObjective::kMean;

  ClusterSpec at(const std::vector<double>& unit) const {
    ClusterSpec c = base;
    for (std::size_t j = 0; j < coords.size(); ++j)
      set_fitted_value(c, coords[j].constant, coords[j].from_unit(unit[j]));
    return c;
  }
  /// Relative residuals: every step time, then every measured memory.
  std::vector<double> residuals(const std::vector<double>& unit) const {
    const ClusterSpec c = at(unit);
    std::vector<double> r;
    r.reserve(2 * runs->size());
    std::vector<double> memory;
    for (const auto& run : *runs) {
      const RunPrediction p = predict_run(run, c);
      r.push_back(p.step_s / run.measured_step_s - 1.0);
      if (run.measured_peak_bytes > 0) memory.push_back(p.peak_bytes / run.measured_peak_bytes - 1.0);
    }
    r.insert(r.end(), memory.begin(), memory.end());
    return r;
  }
  double score(const std::vector<double>& r) const {
    double sum = 0, worst = 0;
    for (double x : r) sum += std::fabs(x), worst = std::max(worst, std::fabs(x));
    return objective == FitObjective::kMean ? sum / r.size() : worst;
  }
  /// d residual / d unit coordinate, central differences inside the box.
  std::vector<std::vector<double>> jacobian(const std::vector<double>& unit) const {
    constexpr double kStep = 1e-6;
    std::vector<std::vector<double>> columns;
    for (std::size_t j = 0; j < coords.size(); ++j) {
      std::vector<double> up = unit, down = unit;
      up[j] = std::min(1.0, unit[j] + kStep);
      down[j] = std::max(0.0, unit[j] - kStep);
      const auto r_up = residuals(up);
      const auto r_down = residuals(down);
      std::vector<double> col(r_up.size());
      for (std::size_t i = 0; i < col.size(); ++i) col[i] = (r_up[i] - r_down[i]) / (up[j] - down[j]);
      columns.push_back(std::move(col));
    }
    return columns;
  }
};

/// One LP: minimise the linearised mean (or max) |residual| over steps d
/// with |d_j| <= radius inside the unit box. Returns the step and the LP's
/// predicted objective; empty step when the LP has no solution.
std::vector<double> lp_step(const Problem& p, const std::vector<double>& unit, const std::vector<double>& r,
                            const std::vector<std::vector<double>>& jac, double radius,
                            const ProfileFitOptions& options, double* predicted,
                            SolverCertificate* certificate) {
  const int k = static_cast<int>(unit.size());
  const int n = static_cast<int>(r.size());
  MilpModel lp("profile_fit");
  for (int j = 0; j < k; ++j)
    lp.add_continuous("d_" + p.coords[j].constant.key, std::max(-radius, -unit[j]),
                      std::min(radius, 1.0 - unit[j]));
  int worst = -1;
  if (p.objective == FitObjective::kMax) worst = lp.add_continuous("max_error", 0, kInfinity, 1.0);
  for (int i = 0; i < n; ++i) {
    // Mean: e_i bounds |r_i + J_i d|. Max: every |r_i + J_i d| <= max_error.
    const int e = p.objective == FitObjective::kMean
                      ? lp.add_continuous("e_" + std::to_string(i), 0, kInfinity, 1.0 / n)
                      : worst;
    std::vector<MilpTerm> plus{{e, 1.0}}, minus{{e, 1.0}};
    for (int j = 0; j < k; ++j) {
      if (jac[j][i] == 0) continue;
      plus.push_back({j, -jac[j][i]});
      minus.push_back({j, jac[j][i]});
    }
    lp.add_greater_equal("above_" + std::to_string(i), plus, r[i]);
    lp.add_greater_equal("below_" + std::to_string(i), minus, -r[i]);
  }
  SolveOptions solve_options;
  solve_options.time_limit_s = options.lp_time_limit_s;
  if (options.deadline) {
    const double left_s =
        std::chrono::duration<double>(*options.deadline - std::chrono::steady_clock::now()).count();
    solve_options.time_limit_s = std::max(0.01, std::min(solve_options.time_limit_s, left_s));
  }
  const SolveResult result = solve(lp, options.backend, solve_options);
  *certificate = result.certificate;
  if (!result.has_solution()) return {};
  *predicted = result.certificate.objective;
  return std::vector<double>(result.values.begin(), result.values.begin() + k);
}

}  // namespace

FitErrors fit_errors(const ClusterSpec& cluster, const std::vector<FitRun>& runs) {
  FitErrors e;
  double sum = 0;
  for (const auto& run : runs) {
    const RunPrediction p = predict_run(run, cluster);
    const double step = p.step_s / run.measured_step_s - 1.0;
    e.step.push_back(step);
    e.memory.push_back(run.measured_peak_bytes > 0 ? p.peak_bytes / run.measured_peak_bytes - 1.0
                                                   : std::nan(""));
    sum += std::fabs(step);
    e.max_abs = std::max(e.max_abs, std::fabs(step));
  }
  e.mean_abs = runs.empty() ? 0 : sum / runs.size();
  return e;
}

namespace {
struct Descent {
  std::vector<double> unit;
  double score = 0;
  bool converged = false;
};

// Trust-region steps, each an LP over the linearised residuals, from `unit`
// until the region shrinks below the tolerance (or the iterations or the
// deadline run out); counts go to `result`.
Descent descend(const Problem& p, std::vector<double> unit, const ProfileFitOptions& options,
                ProfileFitResult& result) {
  bool converged = false;
  std::vector<double> r = p.residuals(unit);
  double current = p.score(r);
  double radius = 0.25;
  for (int iteration = 0; iteration < options.max_iterations; ++iteration, ++result.iterations) {
    if (radius < options.step_tolerance || current == 0) {
      converged = true;
      break;
    }
    if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) {
      result.stopped_at_deadline = true;
      break;
    }
    const auto jac = p.jacobian(unit);
    double predicted = current;
    const auto step = lp_step(p, unit, r, jac, radius, options, &predicted, &result.last_lp);
    ++result.lp_solves;
    if (step.empty()) break;
    std::vector<double> trial = unit;
    double step_norm = 0;
    for (std::size_t j = 0; j < unit.size(); ++j) {
      trial[j] = std::clamp(unit[j] + step[j], 0.0, 1.0);
      step_norm = std::max(step_norm, std::fabs(step[j]));
    }
    const double expected = current - predicted;
    if (expected <= 1e-14 * std::max(1.0, current)) {
      // The linear model sees no descent at this radius: a stationary point
      // of the linearisation; shrink to confirm it on the true model.
      radius = std::min(radius, step_norm) / 4.0;
      if (step_norm == 0) radius /= 4.0;
      continue;
    }
    const std::vector<double> r_trial = p.residuals(trial);
    const double actual = p.score(r_trial);
    const double ratio = (current - actual) / expected;
    if (ratio > 0.1) {
      unit = trial;
      r = r_trial;
      current = actual;
      if (ratio > 0.75 && step_norm >= 0.99 * radius) radius = std::min(1.0, 2.0 * radius);
    } else {
      radius = std::min(radius, step_norm) / 4.0;
    }
  }
  return {unit, current, converged};
}
}  // namespace

ProfileFitResult fit_profile(const ClusterSpec& start, const std::vector<FitRun>& runs,
                             const std::vector<FittedConstant>& constants, const ProfileFitOptions& options) {
  if (runs.empty()) throw std::invalid_argument("profile fit: no runs");
  if (constants.empty()) throw std::invalid_argument("profile fit: no constants to fit");
  Problem p;
  p.base = start;
  p.runs = &runs;
  p.objective = options.objective;
  std::vector<double> unit;
  ProfileFitResult result;
  // Named even when the deadline comes before the first LP.
  result.last_lp.backend = backend_name(options.backend);
  for (const auto& c : constants) {
    p.coords.emplace_back(c);
    const double v = std::clamp(fitted_value(start, c), c.lower, c.upper);
    result.before.push_back(fitted_value(start, c));
    unit.push_back(p.coords.back().to_unit(c.reciprocal && v == 0 ? c.upper : v));
  }
  result.errors_before = fit_errors(start, runs);

  // The step time is not convex in the constants: a descent can stop in a
  // local optimum of the linearised fit (seen with trials that mix pipeline
  // and data parallelism, whose exchanges hide behind different windows).
  // Restart from the middle of the bounds and keep the better end.
  Descent best = descend(p, unit, options, result);
  if (!result.stopped_at_deadline && best.score > 0) {
    Descent again = descend(p, std::vector<double>(unit.size(), 0.5), options, result);
    if (again.score < best.score) best = std::move(again);
  }
  unit = best.unit;
  // A restart the deadline cut short leaves the better end unproven, as
  // docs/calibrate.md states: not converged.
  result.converged = best.converged && !result.stopped_at_deadline;
  result.cluster = p.at(unit);
  for (const auto& c : constants) result.after.push_back(fitted_value(result.cluster, c));
  result.errors_after = fit_errors(result.cluster, runs);
  return result;
}

namespace {
std::vector<std::vector<double>> design_columns(const ClusterSpec& cluster, const std::vector<FitRun>& runs,
                                                const std::vector<FittedConstant>& candidates) {
  Problem p;
  p.base = cluster;
  p.runs = &runs;
  std::vector<double> unit;
  for (const auto& c : candidates) {
    p.coords.emplace_back(c);
    const double v = std::clamp(fitted_value(cluster, c), c.lower, c.upper);
    // Sensitivities at a bound of zero (a disabled mechanism) are measured
    // a little inside, where the mechanism acts.
    double u = p.coords.back().to_unit(v);
    if (u < 1e-3) u = 1e-3;
    if (u > 1 - 1e-3) u = 1 - 1e-3;
    unit.push_back(u);
  }
  return p.jacobian(unit);
}
}  // namespace

std::vector<std::vector<double>> fit_sensitivities(const ClusterSpec& cluster,
                                                   const std::vector<FitRun>& runs,
                                                   const std::vector<FittedConstant>& constants) {
  const auto columns = design_columns(cluster, runs, constants);
  std::vector<std::vector<double>> rows(runs.size(), std::vector<double>(constants.size()));
  for (std::size_t j = 0; j < constants.size(); ++j)
    for (std::size_t i = 0; i < runs.size(); ++i) rows[i][j] = columns[j][i];
  return rows;
}

std::vector<FittedConstant> identifiable_constants(const ClusterSpec& cluster,
                                                   const std::vector<FitRun>& runs,
                                                   const std::vector<FittedConstant>& candidates,
                                                   double tolerance) {
  const auto jac = design_columns(cluster, runs, candidates);
  // Gram-Schmidt in the given order: keep a column when what remains of it
  // after removing the kept directions is a real share of its length.
  std::vector<std::vector<double>> basis;
  std::vector<FittedConstant> kept;
  for (std::size_t j = 0; j < candidates.size(); ++j) {
    std::vector<double> v = jac[j];
    double norm0 = 0;
    for (double x : v) norm0 += x * x;
    norm0 = std::sqrt(norm0);
    if (norm0 < 1e-9) continue;
    for (const auto& b : basis) {
      double dot = 0;
      for (std::size_t i = 0; i < v.size(); ++i) dot += v[i] * b[i];
      for (std::size_t i = 0; i < v.size(); ++i) v[i] -= dot * b[i];
    }
    double norm = 0;
    for (double x : v) norm += x * x;
    norm = std::sqrt(norm);
    if (norm <= tolerance * norm0) continue;
    for (double& x : v) x /= norm;
    basis.push_back(std::move(v));
    kept.push_back(candidates[j]);
    if (kept.size() == jac[j].size()) break;
  }
  return kept;
}

}  // namespace parplan
