#include "src/tune/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "src/io/input_error.h"

namespace parplan {

std::string fittable_keys(const ClusterSpec& cluster) {
  std::string out;
  for (const auto& c : fitted_constants(cluster)) out += (out.empty() ? "" : ", ") + c.key;
  return out;
}

CalibrateOutcome calibrate(const ClusterSpec& cluster, const std::vector<FitRun>& runs,
                           const CalibrateOptions& options) {
  CalibrateOutcome outcome;
  const auto all = fitted_constants(cluster);
  int figures = 0;
  for (const auto& run : runs) figures += 1 + (run.measured_peak_bytes > 0 ? 1 : 0);
  if (!options.fit_keys.empty()) {
    for (const auto& key : options.fit_keys) {
      const auto c = find_fitted_constant(cluster, key);
      if (!c)
        throw InputError("--fit: unknown constant '" + key + "'; choose from " + fittable_keys(cluster));
      // A constant named twice would be two free columns of one value.
      if (std::any_of(outcome.fitted.begin(), outcome.fitted.end(),
                      [&](const FittedConstant& f) { return f.key == c->key; }))
        throw InputError("--fit: '" + key + "' is named twice; name each constant once");
      outcome.fitted.push_back(*c);
    }
    if (static_cast<int>(outcome.fitted.size()) > figures)
      throw InputError("--fit: " + std::to_string(outcome.fitted.size()) + " free constants but only " +
                       std::to_string(figures) + " measured figures in " + std::to_string(runs.size()) +
                       " runs; give more runs or fewer --fit keys");
  } else {
    // The runs pin down what the rank check keeps; at most half as many
    // constants as measured figures, so the fit is over-determined and the
    // leave-one-out error says something.
    auto kept = identifiable_constants(cluster, runs, all, 1e-2);
    const std::size_t cap = std::max(1, figures / 2);
    if (kept.size() > cap) kept.resize(cap);
    outcome.fitted = kept;
    if (outcome.fitted.empty())
      throw InputError("--runs: the runs do not depend on any fitted constant; nothing to calibrate");
  }
  for (const auto& c : all) {
    const bool fitted = std::any_of(outcome.fitted.begin(), outcome.fitted.end(),
                                    [&](const FittedConstant& f) { return f.key == c.key; });
    if (!fitted) outcome.not_identified.push_back(c.key);
  }
  if (options.progress)
    options.progress("fitting " + std::to_string(outcome.fitted.size()) + " constants to " +
                     std::to_string(runs.size()) + " runs");
  outcome.fit = fit_profile(cluster, runs, outcome.fitted, options.fit);
  outcome.stopped_at_deadline = outcome.fit.stopped_at_deadline;
  const auto past_deadline = [&] {
    return options.fit.deadline && std::chrono::steady_clock::now() >= *options.fit.deadline;
  };

  outcome.cv_errors.assign(runs.size(), std::nan(""));
  outcome.cv_mean_abs = outcome.cv_max_abs = std::nan("");
  int figures_without_one = figures - 1;
  if (options.cross_validate && runs.size() >= 2 &&
      static_cast<int>(outcome.fitted.size()) <= figures_without_one && !outcome.stopped_at_deadline) {
    double sum = 0, worst = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (past_deadline()) {
        // A partial leave-one-out is not the figure it names: report none.
        outcome.cv_errors.assign(runs.size(), std::nan(""));
        outcome.stopped_at_deadline = true;
        return outcome;
      }
      if (options.progress)
        options.progress("leave-one-out " + std::to_string(i + 1) + "/" + std::to_string(runs.size()));
      std::vector<FitRun> rest;
      for (std::size_t j = 0; j < runs.size(); ++j)
        if (j != i) rest.push_back(runs[j]);
      // Starts from the profile as given, as the full fit did.
      const ProfileFitResult held_out = fit_profile(cluster, rest, outcome.fitted, options.fit);
      if (held_out.stopped_at_deadline) {
        outcome.cv_errors.assign(runs.size(), std::nan(""));
        outcome.stopped_at_deadline = true;
        return outcome;
      }
      const double e = predict_run(runs[i], held_out.cluster).step_s / runs[i].measured_step_s - 1.0;
      outcome.cv_errors[i] = e;
      sum += std::fabs(e);
      worst = std::max(worst, std::fabs(e));
    }
    outcome.cv_mean_abs = sum / runs.size();
    outcome.cv_max_abs = worst;
  }
  return outcome;
}

}  // namespace parplan
