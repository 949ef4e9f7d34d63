// LpSession: see lp_session.h.
#include "solvers/lp_session.h"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "solvers/backend_internal.h"

namespace parplan {

LpSession::LpSession(MilpModel model, SolverBackend backend) : model_(std::move(model)), backend_(backend) {}

LpSession::~LpSession() = default;

void LpSession::set_variable_bounds(int var, double lower, double upper) {
  model_.set_variable_bounds(var, lower, upper);
  // Bounds are the same in minimisation form (only the objective is
  // negated); a continuous LP's bounds need no rounding.
  if (warm_) warm_->set_variable_bounds(var, lower, upper);
}

void LpSession::set_row_bounds(int row, double lower, double upper) {
  model_.set_row_bounds(row, lower, upper);
  if (warm_) warm_->set_row_bounds(row, lower, upper);
}

SolveResult LpSession::solve(const SolveOptions& options) {
  const bool can_warm = backend_ == SolverBackend::kCbc && !warm_failed_ && model_.is_pure_lp() &&
                        model_.num_variables() > 0 && model_.validate().empty() &&
                        !std::isnan(options.time_limit_s) && options.time_limit_s > 0 &&
                        !std::isnan(options.relative_gap) && options.relative_gap >= 0;
  if (!can_warm) return parplan::solve(model_, backend_, options);
  const auto start = std::chrono::steady_clock::now();
  detail::PreparedModel prepared;
  SolveResult failure;
  if (!detail::prepare(model_, prepared, failure)) return parplan::solve(model_, backend_, options);
  try {
    if (!warm_) warm_ = detail::make_warm_clp(prepared);
    const detail::BackendOutcome outcome = warm_->solve(options);
    // An unbounded relaxation needs solve()'s feasibility check; an error
    // gets a cold solve.
    if (outcome.status == SolveStatus::kUnbounded || outcome.status == SolveStatus::kError) {
      warm_failed_ = outcome.status == SolveStatus::kError;
      return parplan::solve(model_, backend_, options);
    }
    SolveResult result = detail::finish(model_, outcome, prepared.integer, options);
    result.certificate.name = model_.name();
    result.certificate.backend = backend_name(backend_);
    result.certificate.time_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  } catch (const std::exception&) {
    warm_failed_ = true;
    warm_.reset();
    return parplan::solve(model_, backend_, options);
  }
}

}  // namespace parplan
