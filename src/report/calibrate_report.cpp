#include "src/report/calibrate_report.h"

#include <cmath>
#include <cstdio>

#include "src/report/counted.h"
#include "src/report/json_number.h"

namespace parplan {

namespace {
constexpr double kGib = 1024.0 * 1024.0 * 1024.0;
}  // namespace

namespace {
std::string pct(double x) {
  if (std::isnan(x)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * x);
  return buf;
}
// An absolute error: no sign.
std::string pct_abs(double x) {
  if (std::isnan(x)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * x);
  return buf;
}
// Measured seconds, four significant digits each (0.8000 beside 0.4519).
std::string seconds4(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#.4g", x);
  return buf;
}
std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}
std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}
}  // namespace

const char* bound_reached(const FittedConstant& constant, double value) {
  const double tolerance = 1e-6 * (constant.upper - constant.lower);
  if (value <= constant.lower + tolerance) return "lower";
  if (value >= constant.upper - tolerance) return "upper";
  return nullptr;
}

std::vector<std::string> calibrate_warnings(const std::vector<FitRun>& runs, const CalibrateOutcome& o) {
  std::vector<std::string> warnings;
  std::string at_bound;
  for (std::size_t j = 0; j < o.fitted.size(); ++j) {
    const char* bound = bound_reached(o.fitted[j], o.fit.after[j]);
    if (bound) at_bound += (at_bound.empty() ? "" : ", ") + o.fitted[j].key + " (" + bound + ")";
  }
  // An optimum on a bound means the runs pull the constant past what is
  // physical: the model misprices something these runs share and the
  // constant absorbs part of it, so it may not carry over to other jobs.
  if (!at_bound.empty())
    warnings.push_back("on a bound of its physical range after the fit: " + at_bound +
                       "; the runs pull it further, so the cost model misprices something they share and the "
                       "constant absorbs part of it: trust the left-out error more than the held-in one");
  // With about as many runs as constants any model fits them; the held-in
  // error then says nothing about other jobs.
  if (!o.fitted.empty() && runs.size() <= o.fitted.size() + 1)
    warnings.push_back(
        counted(static_cast<long long>(runs.size()), "run") + " for " +
        counted(static_cast<long long>(o.fitted.size()), "constant") +
        ": that many constants fit about that many runs whatever the model, so the held-in error "
        "says little; add runs" +
        (std::isnan(o.cv_mean_abs) ? std::string(" (the left-out error needs more runs)")
                                   : std::string(", or quote the left-out error")));
  return warnings;
}

std::string calibrate_table(const std::vector<FitRun>& runs, const CalibrateOutcome& o,
                            const std::string& objective, const std::string& out_path) {
  std::string t;
  const auto& fit = o.fit;
  t += "parplan calibrate: " + counted(static_cast<long long>(runs.size()), "run") + ", " +
       counted(static_cast<long long>(o.fitted.size()), "constant") + " fitted (objective " + objective +
       "), " + std::to_string(fit.lp_solves) + " LPs on " + fit.last_lp.backend +
       (fit.converged ? ", converged" : ", stopped at the iteration limit") + "\n\n";
  t += pad("constant", 30) + pad("before", 12) + pad("after", 12) + "change\n";
  for (std::size_t j = 0; j < o.fitted.size(); ++j) {
    const double before = fit.before[j], after = fit.after[j];
    const double change = before != 0 ? after / before - 1.0 : std::nan("");
    const char* bound = bound_reached(o.fitted[j], after);
    t += pad(o.fitted[j].key, 30) + pad(num(before), 12) + pad(num(after), 12) + pct(change) +
         (bound ? std::string("  at its ") + bound + " bound" : std::string()) + "\n";
  }
  if (!o.not_identified.empty()) {
    t += "\nkept at the profile's values (not fitted):";
    for (const auto& k : o.not_identified) t += " " + k;
    t += "\n";
  }
  t += "\n" + pad("run", 34) + pad("measured_s", 12) + pad("err_before", 12) + pad("err_after", 12) +
       "err_left_out\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    t += pad(runs[i].name.size() > 33 ? runs[i].name.substr(runs[i].name.size() - 33) : runs[i].name, 34) +
         pad(seconds4(runs[i].measured_step_s), 12) + pad(pct(fit.errors_before.step[i]), 12) +
         pad(pct(fit.errors_after.step[i]), 12) + pct(o.cv_errors[i]) + "\n";
  }
  t += pad("mean |error|", 46) + pad(pct_abs(fit.errors_before.mean_abs), 12) +
       pad(pct_abs(fit.errors_after.mean_abs), 12) + pct_abs(o.cv_mean_abs) + "\n";
  t += pad("max |error|", 46) + pad(pct_abs(fit.errors_before.max_abs), 12) +
       pad(pct_abs(fit.errors_after.max_abs), 12) + pct_abs(o.cv_max_abs) + "\n";
  // Runs with a measured peak (a run file's peak_memory_gib, torchtitan's
  // memory:, Megatron's max reserved) against the predicted peak per device.
  bool any_peak = false;
  for (const FitRun& run : runs) any_peak = any_peak || run.measured_peak_bytes > 0;
  if (any_peak) {
    t += "\n" + pad("run", 34) + pad("peak_gib", 12) + pad("mem_before", 12) + "mem_after\n";
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (!(runs[i].measured_peak_bytes > 0)) continue;
      char gib[32];
      std::snprintf(gib, sizeof gib, "%.2f", runs[i].measured_peak_bytes / kGib);
      t += pad(runs[i].name.size() > 33 ? runs[i].name.substr(runs[i].name.size() - 33) : runs[i].name, 34) +
           pad(gib, 12) + pad(pct(fit.errors_before.memory[i]), 12) + pct(fit.errors_after.memory[i]) + "\n";
    }
  }
  for (const auto& w : calibrate_warnings(runs, o)) t += "\nnote: " + w + "\n";
  if (!out_path.empty()) t += "\nwrote " + out_path + "\n";
  return t;
}

nlohmann::ordered_json calibrate_json(const std::vector<FitRun>& runs, const CalibrateOutcome& o,
                                      const std::string& objective, const std::string& out_path) {
  nlohmann::ordered_json j;
  j["objective"] = objective;
  j["fit"] = {{"backend", o.fit.last_lp.backend},
              {"lp_solves", o.fit.lp_solves},
              {"iterations", o.fit.iterations},
              {"converged", o.fit.converged}};
  j["constants"] = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < o.fitted.size(); ++k)
    j["constants"].push_back(
        {{"key", o.fitted[k].key},
         {"what", o.fitted[k].what},
         {"before", o.fit.before[k]},
         {"after", o.fit.after[k]},
         {"lower", o.fitted[k].lower},
         {"upper", o.fitted[k].upper},
         {"at_bound", bound_reached(o.fitted[k], o.fit.after[k])
                          ? nlohmann::ordered_json(bound_reached(o.fitted[k], o.fit.after[k]))
                          : nlohmann::ordered_json(nullptr)}});
  j["not_fitted"] = o.not_identified;
  j["runs"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double measured = runs[i].measured_step_s;
    j["runs"].push_back(
        {{"name", runs[i].name},
         {"source", runs[i].source},
         {"measured_step_s", measured},
         {"predicted_before_s", measured * (1 + o.fit.errors_before.step[i])},
         {"predicted_after_s", measured * (1 + o.fit.errors_after.step[i])},
         {"error_before", o.fit.errors_before.step[i]},
         {"error_after", o.fit.errors_after.step[i]},
         {"error_left_out", number_or_null(o.cv_errors[i])},
         {"measured_peak_gib", runs[i].measured_peak_bytes > 0
                                   ? nlohmann::ordered_json(runs[i].measured_peak_bytes / kGib)
                                   : nlohmann::ordered_json(nullptr)},
         {"memory_error_before", number_or_null(o.fit.errors_before.memory[i])},
         {"memory_error_after", number_or_null(o.fit.errors_after.memory[i])}});
  }
  j["summary"] = {
      {"mean_error_before", o.fit.errors_before.mean_abs}, {"max_error_before", o.fit.errors_before.max_abs},
      {"mean_error_after", o.fit.errors_after.mean_abs},   {"max_error_after", o.fit.errors_after.max_abs},
      {"cv_mean_error", number_or_null(o.cv_mean_abs)},    {"cv_max_error", number_or_null(o.cv_max_abs)}};
  j["warnings"] = calibrate_warnings(runs, o);
  j["profile"] = out_path.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(out_path);
  return j;
}

}  // namespace parplan
