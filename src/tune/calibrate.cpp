#include "src/tune/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "src/io/input_error.h"
#include "src/report/counted.h"

namespace parplan {

std::string fittable_keys(const ClusterSpec& cluster) {
  std::string out;
  for (const auto& c : fitted_constants(cluster)) out += (out.empty() ? "" : ", ") + c.key;
  return out;
}

namespace {
std::string first_memory_key(const std::vector<FittedConstant>& fitted) {
  for (const auto& f : fitted)
    if (f.memory_only) return f.key;
  return "";
}
}  // namespace

CalibrateOutcome calibrate(const ClusterSpec& cluster, const std::vector<FitRun>& runs,
                           const CalibrateOptions& options) {
  CalibrateOutcome outcome;
  const auto all = fitted_constants(cluster);
  int memory_figures = 0;
  for (const auto& run : runs) memory_figures += run.measured_peak_bytes > 0 ? 1 : 0;
  const int figures = static_cast<int>(runs.size()) + memory_figures;
  if (!options.fit_keys.empty()) {
    for (const auto& key : options.fit_keys) {
      const auto c = find_fitted_constant(cluster, key);
      if (!c)
        throw InputError("--fit: unknown constant '" + key + "'; choose from " + fittable_keys(cluster));
      // A constant named twice would be two free columns of one value.
      if (std::any_of(outcome.fitted.begin(), outcome.fitted.end(),
                      [&](const FittedConstant& f) { return f.key == c->key; }))
        throw InputError("--fit: '" + key + "' is named twice; name each constant once");
      // A constant no prediction depends on would be "fitted" to whatever
      // value it had (and the profile would say so).
      if (!c->memory_only && identifiable_constants(cluster, runs, {*c}, 1e-6).empty())
        throw InputError("--fit: no run's prediction depends on '" + c->key +
                         "' (the runs never use what it prices); drop it from --fit");
      outcome.fitted.push_back(*c);
    }
    // Step times pin down the time constants, measured peaks the memory
    // ones: each kind needs figures of its own.
    const auto memory_keys = std::count_if(outcome.fitted.begin(), outcome.fitted.end(),
                                           [](const FittedConstant& f) { return f.memory_only; });
    if (memory_keys > 0 && memory_figures == 0)
      throw InputError("--fit: only memory predictions depend on '" + first_memory_key(outcome.fitted) +
                       "' and no run gives its measured peak memory (peak_memory_gib); give such runs or "
                       "drop it from --fit");
    const auto time_keys = static_cast<std::ptrdiff_t>(outcome.fitted.size()) - memory_keys;
    if (time_keys > static_cast<std::ptrdiff_t>(runs.size()))
      throw InputError("--fit: " + std::to_string(time_keys) + " step-time constants but only " +
                       std::to_string(runs.size()) + " measured step times (a measured peak memory pins " +
                       "no time constant); give more runs or fewer --fit keys");
    if (memory_keys > memory_figures)
      throw InputError("--fit: " + std::to_string(memory_keys) + " memory constants but only " +
                       std::to_string(memory_figures) +
                       " measured peak memories; give more such runs or fewer --fit keys");
  } else {
    // The runs pin down what the rank check keeps; at most half as many
    // constants of each kind as measured figures of that kind (step times
    // for time constants, peaks for memory ones), so the fit is
    // over-determined and the leave-one-out error says something.
    const auto kept = identifiable_constants(cluster, runs, all, 1e-2);
    std::size_t time_kept = 0, memory_kept = 0;
    const std::size_t time_cap = std::max<std::size_t>(1, runs.size() / 2);
    const std::size_t memory_cap = static_cast<std::size_t>(memory_figures / 2);
    for (const FittedConstant& c : kept)
      if (c.memory_only ? memory_kept++ < memory_cap : time_kept++ < time_cap) outcome.fitted.push_back(c);
    if (outcome.fitted.empty())
      throw InputError("--runs: the runs do not depend on any fitted constant; nothing to calibrate");
  }
  for (const auto& c : all) {
    const bool fitted = std::any_of(outcome.fitted.begin(), outcome.fitted.end(),
                                    [&](const FittedConstant& f) { return f.key == c.key; });
    if (!fitted) outcome.not_identified.push_back(c.key);
  }
  if (options.progress)
    options.progress("fitting " + counted(static_cast<long long>(outcome.fitted.size()), "constant") +
                     " to " + counted(static_cast<long long>(runs.size()), "run"));
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
