// Runs the sequence-scattering LPs and MILPs against the step's deadline:
// steps solved in parallel queue here (not inside the backend, whose own
// lock does not count the wait against the time limit) and each solve gets
// what is left of its step's budget.
#include <array>
#include <mutex>

#include "solvers/sequence_scatter_internal.h"

namespace parplan::scatter_detail {

namespace {

// One queue per backend, as solve() runs one solve per backend at a time.
std::timed_mutex& backend_queue(SolverBackend backend) {
  static std::array<std::timed_mutex, 3> queues;
  return queues[static_cast<size_t>(backend) % queues.size()];
}

// CBC checks its clock between nodes and lets each node LP run a quarter
// past its limit; reading the model back also takes a little. Giving the
// backend this share of the time left keeps the step within its budget.
constexpr double kBackendShare = 0.75;
// Below this, no solve is started: loading a model alone takes about this.
constexpr double kMinimumSolveS = 2e-3;

}  // namespace

namespace {

/// Runs `run(options)` once the backend's queue is free, with what is left
/// of the step's budget.
template <class Run>
std::optional<SolveResult> when_queued(SolverBackend backend, double relative_gap, Clock::time_point deadline,
                                       Run run) {
  std::unique_lock<std::timed_mutex> lock(backend_queue(backend), std::defer_lock);
  if (!lock.try_lock_until(deadline)) return std::nullopt;
  const double left_s = std::chrono::duration<double>(deadline - Clock::now()).count();
  if (left_s < kMinimumSolveS) return std::nullopt;
  SolveOptions options;
  options.time_limit_s = kBackendShare * left_s;
  options.relative_gap = relative_gap;
  return run(options);
}

}  // namespace

std::optional<SolveResult> solve_until(const MilpModel& model, SolverBackend backend, double relative_gap,
                                       Clock::time_point deadline) {
  return when_queued(backend, relative_gap, deadline,
                     [&](const SolveOptions& options) { return solve(model, backend, options); });
}

std::optional<SolveResult> solve_until(LpSession& session, double relative_gap, Clock::time_point deadline) {
  return when_queued(session.backend(), relative_gap, deadline,
                     [&](const SolveOptions& options) { return session.solve(options); });
}

}  // namespace parplan::scatter_detail
