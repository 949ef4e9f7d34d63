// solve(): validation, minimisation form, backend dispatch and certification.
#include "solvers/solve.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "solvers/backend_internal.h"

namespace parplan {

namespace detail {

bool PreparedModel::pure_lp() const {
  return std::none_of(integer.begin(), integer.end(), [](bool b) { return b; });
}

namespace {

constexpr double kIntegerBoundTolerance = 1e-9;
constexpr double kFeasibilityTolerance = 1e-5;

double relative_gap(double objective, double bound) {
  if (std::isinf(bound)) return kInfinity;
  return std::abs(objective - bound) / std::max(std::abs(objective), 1e-9);
}

}  // namespace

SolveResult finish(const MilpModel& model, const BackendOutcome& outcome, const std::vector<bool>& integer,
                   const SolveOptions& options) {
  SolveResult result;
  SolverCertificate& cert = result.certificate;
  cert.status = outcome.status;
  cert.message = outcome.message;
  const double sign = model.sense() == ObjectiveSense::kMinimize ? 1.0 : -1.0;
  const double offset = model.objective_offset();

  if (!has_solution(outcome.status)) {
    if (outcome.status == SolveStatus::kTimeLimitNoSolution) {
      cert.best_bound = sign * outcome.bound_min + offset;
      if (std::isnan(cert.best_bound)) cert.best_bound = sign * -kInfinity;
    } else if (outcome.status == SolveStatus::kUnbounded) {
      cert.best_bound = sign * -kInfinity;
    }
    return result;
  }

  if (static_cast<int>(outcome.values.size()) != model.num_variables()) {
    cert.status = SolveStatus::kError;
    cert.message = "backend returned a solution of the wrong size";
    return result;
  }
  result.values = outcome.values;
  for (int j = 0; j < model.num_variables(); ++j) {
    if (integer[j]) result.values[j] = std::round(result.values[j]);
  }
  if (!model.is_feasible(result.values, kFeasibilityTolerance)) {
    result.values.clear();
    cert.status = SolveStatus::kError;
    cert.message = "backend returned a solution that violates the model";
    return result;
  }

  const double objective_min = sign * (model.objective_value(result.values) - offset);
  // A bound above the incumbent (in minimisation form) proves nothing more
  // than the incumbent itself.
  double bound_min = std::min(outcome.bound_min, objective_min);
  if (std::isnan(bound_min)) bound_min = -kInfinity;
  double gap = relative_gap(objective_min, bound_min);
  if (outcome.status == SolveStatus::kOptimal && gap > options.relative_gap) {
    // The backend finished its search (e.g. CBC with an integral objective
    // prunes by cutoff increments and reports a looser bound): the search
    // itself is the proof.
    bound_min = objective_min;
    gap = 0;
  }
  cert.status = gap <= options.relative_gap ? SolveStatus::kOptimal : SolveStatus::kFeasible;
  if (cert.status == SolveStatus::kOptimal && model.is_pure_lp() &&
      static_cast<int>(outcome.row_duals.size()) == model.num_rows()) {
    result.row_duals = outcome.row_duals;
    for (double& y : result.row_duals) y *= sign;
  }
  cert.objective = sign * objective_min + offset;
  cert.best_bound = sign * bound_min + offset;
  cert.gap = gap;
  return result;
}

bool prepare(const MilpModel& model, PreparedModel& prepared, SolveResult& failure) {
  prepared.model = &model;
  prepared.lower.clear();
  prepared.upper.clear();
  prepared.cost.clear();
  prepared.integer.clear();
  const double sign = model.sense() == ObjectiveSense::kMinimize ? 1.0 : -1.0;
  for (const MilpVariable& v : model.variables()) {
    double lower = v.lower;
    double upper = v.upper;
    const bool integer = v.type != VarType::kContinuous;
    if (integer) {
      if (std::isfinite(lower)) lower = std::ceil(lower - kIntegerBoundTolerance);
      if (std::isfinite(upper)) upper = std::floor(upper + kIntegerBoundTolerance);
    }
    if (lower > upper) {
      failure.certificate.status = SolveStatus::kInfeasible;
      failure.certificate.message = "variable '" + v.name + "' has an empty domain";
      return false;
    }
    prepared.lower.push_back(lower);
    prepared.upper.push_back(upper);
    prepared.cost.push_back(sign * v.objective);
    prepared.integer.push_back(integer);
  }
  for (const MilpRow& row : model.rows()) {
    if (row.lower > row.upper) {
      failure.certificate.status = SolveStatus::kInfeasible;
      failure.certificate.message = "row '" + row.name + "' has crossed bounds";
      return false;
    }
  }
  return true;
}

}  // namespace detail

namespace {

/// Returns kOptimal/kInfeasible when the model has no variables, kError
/// otherwise (meaning: not decided here).
SolveStatus trivial_status(const MilpModel& model) {
  for (const MilpRow& row : model.rows()) {
    if (row.lower > 0 || row.upper < 0) return SolveStatus::kInfeasible;
  }
  return SolveStatus::kOptimal;
}

}  // namespace

const char* backend_name(SolverBackend backend) {
  switch (backend) {
    case SolverBackend::kCbc:
      return "cbc";
    case SolverBackend::kGlpk:
      return "glpk";
    case SolverBackend::kExhaustive:
      return "exhaustive";
  }
  return "unknown";
}

SolverBackend parse_backend(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (SolverBackend b : {SolverBackend::kCbc, SolverBackend::kGlpk, SolverBackend::kExhaustive}) {
    if (lower == backend_name(b)) return b;
  }
  throw std::invalid_argument("unknown solver backend '" + name + "' (expected cbc, glpk or exhaustive)");
}

SolveResult solve(const MilpModel& model, SolverBackend backend, const SolveOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto stamp = [&](SolveResult result) {
    result.certificate.name = model.name();
    result.certificate.backend = backend_name(backend);
    result.certificate.time_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  };
  auto fail = [&](SolveStatus status, std::string message) {
    SolveResult result;
    result.certificate.status = status;
    result.certificate.message = std::move(message);
    return stamp(std::move(result));
  };

  if (std::string problem = model.validate(); !problem.empty()) {
    return fail(SolveStatus::kError, "invalid model '" + model.name() + "': " + problem);
  }
  if (std::isnan(options.time_limit_s) || options.time_limit_s <= 0 || std::isnan(options.relative_gap) ||
      options.relative_gap < 0) {
    return fail(SolveStatus::kError, "invalid solve options (time limit must be > 0, gap >= 0)");
  }

  detail::PreparedModel prepared;
  if (SolveResult failure; !detail::prepare(model, prepared, failure)) {
    return fail(failure.certificate.status, failure.certificate.message);
  }

  if (model.num_variables() == 0) {
    detail::BackendOutcome outcome;
    outcome.status = trivial_status(model);
    outcome.bound_min = 0;
    return stamp(detail::finish(model, outcome, prepared.integer, options));
  }

  auto run = [&](const detail::PreparedModel& p) {
    switch (backend) {
      case SolverBackend::kCbc:
        return detail::solve_cbc(p, options);
      case SolverBackend::kGlpk:
        return detail::solve_glpk(p, options);
      case SolverBackend::kExhaustive:
        return detail::solve_exhaustive(p, options);
    }
    return detail::BackendOutcome{};
  };
  detail::BackendOutcome outcome;
  try {
    outcome = run(prepared);
    if (outcome.status == SolveStatus::kUnbounded) {
      // Backends see an unbounded LP relaxation, which also happens when the
      // model is infeasible. A feasible model whose relaxation is unbounded is
      // itself unbounded (rational data), so decide feasibility alone.
      detail::PreparedModel feasibility = prepared;
      std::fill(feasibility.cost.begin(), feasibility.cost.end(), 0.0);
      const detail::BackendOutcome check = run(feasibility);
      if (check.status == SolveStatus::kInfeasible) {
        outcome.status = SolveStatus::kInfeasible;
      } else if (!has_solution(check.status)) {
        outcome.status = check.status == SolveStatus::kTimeLimitNoSolution ? SolveStatus::kTimeLimitNoSolution
                                                                           : SolveStatus::kError;
        outcome.message = "unbounded relaxation; feasibility undecided";
        outcome.bound_min = -kInfinity;
      }
    }
  } catch (const std::exception& e) {
    return fail(SolveStatus::kError, std::string("solver failure: ") + e.what());
  }
  return stamp(detail::finish(model, outcome, prepared.integer, options));
}

MakespanSolve solve_makespan(const MilpModel& model, double time_scale, int integer_count,
                             SolverBackend backend, const SolveOptions& options) {
  const SolveResult solved = solve(model, backend, options);
  MakespanSolve out;
  out.certificate = solved.certificate;
  out.certificate.best_bound *= time_scale;
  if (!solved.has_solution()) {
    out.certificate.objective *= time_scale;
    return out;
  }
  for (int i = 0; i < integer_count; ++i)
    out.integers.push_back(static_cast<int>(std::lround(solved.values[i])));
  return out;
}

void set_makespan(SolverCertificate& certificate, double makespan_s) {
  certificate.objective = makespan_s;
  certificate.best_bound = std::min(certificate.best_bound, makespan_s);
}

}  // namespace parplan
