#include "src/report/calibrate_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "src/report/sweep_plot_axes.h"
#include "src/report/xml_text.h"

namespace parplan {

namespace {

using sweep_plot_detail::Axis;

std::string percent_text(double error) {
  if (!std::isfinite(error)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f %%", 100 * error);
  return buf;
}

double mean_abs(const std::vector<double>& errors) {
  double sum = 0;
  int n = 0;
  for (double e : errors)
    if (std::isfinite(e)) sum += std::abs(e), ++n;
  return n > 0 ? sum / n : std::nan("");
}

}  // namespace

std::string calibrate_svg(const std::vector<FitRun>& runs, const CalibrateOutcome& outcome,
                          const std::string& profile_name) {
  const std::vector<double>& before = outcome.fit.errors_before.step;
  const std::vector<double>& after = outcome.fit.errors_after.step;
  const auto at = [](const std::vector<double>& v, std::size_t i) {
    return i < v.size() ? v[i] : std::nan("");
  };
  double lo_s = std::numeric_limits<double>::infinity(), hi_s = 0, worst = 0.05;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    lo_s = std::min(lo_s, runs[i].measured_step_s);
    hi_s = std::max(hi_s, runs[i].measured_step_s);
    for (double e : {at(before, i), at(after, i), at(outcome.cv_errors, i)})
      if (std::isfinite(e)) worst = std::max(worst, std::abs(e));
  }
  if (!(hi_s > 0)) lo_s = hi_s = 1;
  const Axis x_axis = sweep_plot_detail::log_axis(
      lo_s, hi_s, [](double s) { return sweep_plot_detail::short_number(s) + " s"; });
  // Symmetric about zero: the linear axis of the largest |error|, mirrored.
  const Axis half = sweep_plot_detail::linear_axis(
      100 * worst, [](double p) { return sweep_plot_detail::short_number(p) + " %"; });
  const double y_max = half.hi / 100;

  const int width = 900, height = 520, left = 80, right = 24, top = 64, bottom = 96;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const auto x_of = [&](double s) { return left + plot_w * x_axis.fraction(s); };
  const auto y_of = [&](double e) { return top + plot_h * (0.5 - 0.5 * e / y_max); };

  std::string o = svg_open(width, height);
  char buf[768];
  const double mean_before = mean_abs(before), mean_after = mean_abs(after),
               mean_left_out = mean_abs(outcome.cv_errors);
  std::string title = "calibrate: " + std::to_string(runs.size()) + " runs on " + profile_name +
                      ", mean |step-time error| " + percent_text(mean_before).substr(1) + " before, " +
                      percent_text(mean_after).substr(1) + " after the fit";
  if (std::isfinite(mean_left_out)) title += ", " + percent_text(mean_left_out).substr(1) + " left out";
  std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"24\" font-size=\"14\">", left);
  o += buf + xml_escape(title) + "</text>\n";
  std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"42\" font-size=\"12\">", left);
  o += buf + xml_escape("(predicted - measured) / measured, against the measured step time") + "</text>\n";

  std::snprintf(buf, sizeof buf,
                "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#999\"/>\n",
                left, top, plot_w, plot_h);
  o += buf;
  if (std::isfinite(mean_after)) {
    const double band = std::min(mean_after, y_max);
    std::snprintf(buf, sizeof buf,
                  "<rect x=\"%d\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" fill=\"#2c7fb8\" "
                  "fill-opacity=\"0.12\"><title>the fitted profile's mean |error|: %s</title></rect>\n",
                  left, y_of(band), plot_w, y_of(-band) - y_of(band), percent_text(mean_after).c_str());
    o += buf;
  }
  for (double p : half.ticks) {
    for (double sign : {1.0, -1.0}) {
      if (p == 0 && sign < 0) continue;
      const double y = y_of(sign * p / 100);
      std::snprintf(buf, sizeof buf,
                    "<line x1=\"%d\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" stroke=\"%s\"/>\n"
                    "<text x=\"%d\" y=\"%.2f\" text-anchor=\"end\">",
                    left, y, left + plot_w, y, p == 0 ? "#555" : "#e5e5e5", left - 6, y + 4);
      o += buf + xml_escape((sign < 0 ? "-" : p > 0 ? "+" : "") + half.label(p)) + "</text>\n";
    }
  }
  for (double s : x_axis.ticks) {
    const double x = x_of(s);
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#999\"/>\n"
                  "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">",
                  x, top + plot_h, x, top + plot_h + 5, x, top + plot_h + 18);
    o += buf + xml_escape(x_axis.label(s)) + "</text>\n";
  }
  std::snprintf(buf, sizeof buf,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">measured step time</text>\n",
                left + plot_w / 2, top + plot_h + 36);
  o += buf;

  const auto clamp_error = [&](double e) { return std::clamp(e, -y_max, y_max); };
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double x = x_of(runs[i].measured_step_s);
    const double eb = at(before, i), ea = at(after, i), ecv = at(outcome.cv_errors, i);
    const std::string tip = xml_escape(runs[i].name) + ": measured " +
                            sweep_plot_detail::short_number(runs[i].measured_step_s) + " s, error " +
                            percent_text(eb) + " before, " + percent_text(ea) + " after" +
                            (std::isfinite(ecv) ? ", " + percent_text(ecv) + " left out" : "");
    if (std::isfinite(eb) && std::isfinite(ea)) {
      std::snprintf(buf, sizeof buf,
                    "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#bbb\"/>\n", x,
                    y_of(clamp_error(eb)), x, y_of(clamp_error(ea)));
      o += buf;
    }
    if (std::isfinite(eb)) {
      std::snprintf(buf, sizeof buf,
                    "<circle class=\"before\" cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"white\" stroke=\"#888\">"
                    "<title>%s</title></circle>\n",
                    x, y_of(clamp_error(eb)), tip.c_str());
      o += buf;
    }
    if (std::isfinite(ecv)) {
      const double y = y_of(clamp_error(ecv));
      std::snprintf(buf, sizeof buf,
                    "<path class=\"left-out\" d=\"M%.2f %.2fl8 8M%.2f %.2fl-8 8\" stroke=\"#e6550d\" "
                    "stroke-width=\"1.6\"><title>%s</title></path>\n",
                    x - 4, y - 4, x + 4, y - 4, tip.c_str());
      o += buf;
    }
    if (std::isfinite(ea)) {
      std::snprintf(
          buf, sizeof buf,
          "<circle class=\"after\" cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"#2c7fb8\"><title>%s</title>"
          "</circle>\n",
          x, y_of(clamp_error(ea)), tip.c_str());
      o += buf;
    }
  }

  const double ly = height - 28;
  std::snprintf(
      buf, sizeof buf,
      "<circle cx=\"%d\" cy=\"%.1f\" r=\"4\" fill=\"white\" stroke=\"#888\"/>"
      "<text x=\"%d\" y=\"%.1f\">before the fit</text>\n"
      "<circle cx=\"%d\" cy=\"%.1f\" r=\"4\" fill=\"#2c7fb8\"/>"
      "<text x=\"%d\" y=\"%.1f\">after the fit</text>\n"
      "<rect x=\"%d\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"#2c7fb8\" fill-opacity=\"0.12\"/>"
      "<text x=\"%d\" y=\"%.1f\">the fitted profile's mean |error|</text>\n",
      left + 4, ly - 4, left + 14, ly, left + 124, ly - 4, left + 134, ly, left + 4, ly + 10, left + 20,
      ly + 19);
  o += buf;
  // The cross marker only where a run was left out (not under --no-cross-validate).
  if (std::any_of(outcome.cv_errors.begin(), outcome.cv_errors.end(),
                  [](double e) { return std::isfinite(e); })) {
    std::snprintf(
        buf, sizeof buf,
        "<path d=\"M%d %.1fl8 8M%d %.1fl-8 8\" stroke=\"#e6550d\" stroke-width=\"1.6\"/>"
        "<text x=\"%d\" y=\"%.1f\">left out of the fit (each run predicted by a fit to the others)</text>\n",
        left + 236, ly - 8, left + 244, ly - 8, left + 254, ly);
    o += buf;
  }
  o += "</svg>\n";
  return o;
}

}  // namespace parplan
