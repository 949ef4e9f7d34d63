// parplan calibrate's core: which constants to fit (given or identified by
// the runs), the fit, and the leave-one-out error.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "solvers/profile_fit.h"

namespace parplan {

struct CalibrateOptions {
  /// Constants to fit; empty: the ones the runs identify.
  std::vector<std::string> fit_keys;
  ProfileFitOptions fit;
  bool cross_validate = true;
  /// Progress on stderr for long work (may be empty).
  std::function<void(const std::string&)> progress;
};

struct CalibrateOutcome {
  std::vector<FittedConstant> fitted;
  /// Candidates the runs could not pin down (kept at the profile's values).
  std::vector<std::string> not_identified;
  ProfileFitResult fit;
  /// Leave-one-out: each run predicted by a fit to the others (NaN when
  /// there are not enough runs).
  std::vector<double> cv_errors;
  double cv_mean_abs = 0, cv_max_abs = 0;
  /// options.fit.deadline stopped the fit (the best point so far is kept)
  /// or the leave-one-out fits (their errors stay NaN).
  bool stopped_at_deadline = false;
};

/// Throws InputError: unknown key, fewer runs than free constants.
CalibrateOutcome calibrate(const ClusterSpec& cluster, const std::vector<FitRun>& runs,
                           const CalibrateOptions& options);

/// The constants `--fit` may name, comma-separated.
std::string fittable_keys(const ClusterSpec& cluster);

}  // namespace parplan
