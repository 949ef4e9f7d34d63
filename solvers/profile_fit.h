// Calibration as a sequence of LPs: choose one set of a profile's fitted
// constants (cost/fitted_constants.h) that minimises the mean or the largest
// relative error of the cost model over measured runs, within the constants'
// physical bounds. Step time is not linear in the constants, so each LP
// minimises the error of the model linearised at the current constants
// (efficiencies as reciprocals, where time is linear), inside a trust
// region; the constants move, the model is re-linearised, until it converges.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include "cost/fitted_constants.h"
#include "solvers/certificate.h"
#include "solvers/fit_run.h"
#include "solvers/solve.h"

namespace parplan {

enum class FitObjective { kMean, kMax };

struct ProfileFitOptions {
  FitObjective objective = FitObjective::kMean;
  SolverBackend backend = SolverBackend::kCbc;
  /// Re-linearisations at most.
  int max_iterations = 200;
  /// Stop once the trust region (in units of each constant's bound range)
  /// is smaller than this.
  double step_tolerance = 1e-8;
  /// Time limit of each LP.
  double lp_time_limit_s = 10;
  /// No LP starts after this (and none runs past it): the fit returns the
  /// best point so far with stopped_at_deadline set.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

/// Relative errors (predicted - measured) / measured, one per measured
/// figure: each run's step time, then its peak memory where measured.
struct FitErrors {
  std::vector<double> step;
  /// NaN where the run has no measured peak memory.
  std::vector<double> memory;
  double mean_abs = 0;
  double max_abs = 0;
};
FitErrors fit_errors(const ClusterSpec& cluster, const std::vector<FitRun>& runs);

struct ProfileFitResult {
  ClusterSpec cluster;
  /// One per fitted constant, in the order given.
  std::vector<double> before;
  std::vector<double> after;
  FitErrors errors_before;
  FitErrors errors_after;
  int iterations = 0;
  int lp_solves = 0;
  /// The trust region shrank below step_tolerance (a local optimum of the
  /// non-linear problem) rather than running out of iterations.
  bool converged = false;
  /// The deadline stopped the re-linearisations before convergence.
  bool stopped_at_deadline = false;
  /// Certificate of the last LP solved.
  SolverCertificate last_lp;
};

/// Throws std::invalid_argument on no runs or no constants.
ProfileFitResult fit_profile(const ClusterSpec& start, const std::vector<FitRun>& runs,
                             const std::vector<FittedConstant>& constants,
                             const ProfileFitOptions& options = {});

/// d (relative step-time error) / d (constant over its bound range), one
/// row per run, one column per constant, at the cluster's values (nudged
/// inside the bounds): the design matrix of the runs.
std::vector<std::vector<double>> fit_sensitivities(const ClusterSpec& cluster,
                                                   const std::vector<FitRun>& runs,
                                                   const std::vector<FittedConstant>& constants);

/// The constants among `candidates` that the runs pin down: a rank check of
/// the design (the sensitivity of every measured figure to every constant at
/// the profile's values), taking candidates in order and keeping one when
/// its sensitivity is not (within `tolerance`, relative) a combination of
/// those kept already. At most as many as there are measured figures.
std::vector<FittedConstant> identifiable_constants(const ClusterSpec& cluster,
                                                   const std::vector<FitRun>& runs,
                                                   const std::vector<FittedConstant>& candidates,
                                                   double tolerance = 1e-3);

}  // namespace parplan
