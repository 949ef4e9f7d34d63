#include "src/report/sweep_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>

#include "src/io/job_loader.h"

namespace parplan {

namespace {

// Tableau 10: distinguishable, colour-blind friendly.
constexpr const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                   "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#7f7f7f"};
constexpr const char* kDashes[] = {"", "8 4", "2 3", "10 3 2 3", "1 5", "14 5"};

// Geometry, pixels.
constexpr double kPanelWidth = 560;
constexpr double kPanelHeight = 380;
constexpr double kPlotLeft = 72, kPlotRight = 540, kPlotTop = 40, kPlotBottom = 320;
constexpr double kTitleHeight = 44;
constexpr double kMargin = 20;
constexpr double kLegendRow = 20;

std::string num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  return buffer;
}

std::string short_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

std::string escape(const std::string& text) {
  std::string out;
  for (char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\t' || ch == '\n') out += ch;
    }
  }
  return out;
}

std::string human_params(double params) {
  char buffer[32];
  if (params >= 1e12)
    std::snprintf(buffer, sizeof buffer, "%gT", std::round(params / 1e10) / 100);
  else if (params >= 1e9)
    std::snprintf(buffer, sizeof buffer, "%gB", std::round(params / 1e7) / 100);
  else
    std::snprintf(buffer, sizeof buffer, "%gM", std::round(params / 1e4) / 100);
  return buffer;
}

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> ticks;
  std::function<std::string(double)> label;

  /// 0 at lo, 1 at hi.
  double fraction(double v) const {
    if (log) return (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
    return (v - lo) / (hi - lo);
  }
};

/// The 1-2-5 values (..., 0.1, 0.2, 0.5, 1, 2, 5, 10, ...) around [lo, hi].
std::vector<double> one_two_five(double lo, double hi) {
  std::vector<double> out;
  const int first = static_cast<int>(std::floor(std::log10(lo))) - 1;
  const int last = static_cast<int>(std::ceil(std::log10(hi))) + 1;
  for (int e = first; e <= last; ++e)
    for (double m : {1.0, 2.0, 5.0}) out.push_back(m * std::pow(10.0, e));
  return out;
}

/// A log axis snapped outward to 1-2-5 values, ticks on them (decades only when crowded).
Axis log_axis(double lo, double hi, std::function<std::string(double)> label) {
  const std::vector<double> steps = one_two_five(lo, hi);
  Axis axis;
  axis.log = true;
  axis.label = std::move(label);
  axis.lo = steps.front();
  axis.hi = steps.back();
  for (double s : steps)
    if (s <= lo * (1 + 1e-9)) axis.lo = s;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it)
    if (*it >= hi * (1 - 1e-9)) axis.hi = *it;
  if (axis.hi <= axis.lo) {
    for (double s : steps)
      if (s > axis.lo) {
        axis.hi = s;
        break;
      }
  }
  for (double s : steps)
    if (s >= axis.lo * (1 - 1e-9) && s <= axis.hi * (1 + 1e-9)) axis.ticks.push_back(s);
  if (axis.ticks.size() > 10) {
    std::vector<double> decades;
    for (double t : axis.ticks) {
      const double mantissa = t / std::pow(10.0, std::floor(std::log10(t) + 1e-9));
      if (std::abs(mantissa - 1) < 1e-6) decades.push_back(t);
    }
    if (decades.size() >= 2) axis.ticks = decades;
  }
  return axis;
}

/// A linear axis from 0 to a round value at or above hi, with about five ticks.
Axis linear_axis(double hi, std::function<std::string(double)> label) {
  Axis axis;
  axis.label = std::move(label);
  if (!(hi > 0)) hi = 1;
  const double raw = hi / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude * 10;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * magnitude >= raw * (1 - 1e-9)) {
      step = m * magnitude;
      break;
    }
  }
  axis.lo = 0;
  axis.hi = std::ceil(hi / step - 1e-9) * step;
  for (int i = 0; i * step <= axis.hi * (1 + 1e-9); ++i) axis.ticks.push_back(i * step);
  return axis;
}

/// The GPU-count axis: log2, a tick at every swept count (powers of two when crowded).
Axis gpus_axis(const std::vector<int>& gpus) {
  Axis axis;
  axis.log = true;
  axis.lo = gpus.front();
  axis.hi = gpus.back();
  axis.label = [](double v) { return short_number(v); };
  if (axis.hi <= axis.lo) {
    axis.lo /= 2;
    axis.hi *= 2;
  }
  if (gpus.size() <= 10) {
    for (int g : gpus) axis.ticks.push_back(g);
  } else {
    for (double p = 1; p <= axis.hi; p *= 2)
      if (p >= axis.lo) axis.ticks.push_back(p);
    while (axis.ticks.size() > 10) {
      std::vector<double> fewer;
      for (std::size_t i = 0; i < axis.ticks.size(); i += 2) fewer.push_back(axis.ticks[i]);
      axis.ticks = fewer;
    }
  }
  return axis;
}

struct Panel {
  std::string title, y_label;
  Axis y;
  std::function<double(const SweepOutcome&)> value;
  std::function<std::string(double)> tooltip_value;
};

}  // namespace

bool sweep_plot_by_model_size(const SweepGrid& grid) { return grid.gpus.size() == 1; }

std::vector<SweepPlotSeries> sweep_plot_series(const SweepGrid& grid,
                                               const std::vector<SweepOutcome>& outcomes) {
  const bool by_size = sweep_plot_by_model_size(grid);
  std::vector<SweepPlotSeries> series;
  // Key -> series index; series in legend order (model-major, then gbs; or gbs).
  const std::size_t n_gbs = grid.gbs.size();
  if (by_size) {
    for (int gbs : grid.gbs) series.push_back({"gbs " + std::to_string(gbs), {}, 0});
  } else {
    for (const ModelSpec& m : grid.models)
      for (int gbs : grid.gbs) series.push_back({m.name + ", gbs " + std::to_string(gbs), {}, 0});
  }
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const SweepOutcome& o = outcomes[i];
    const std::size_t g = static_cast<std::size_t>(
        std::find(grid.gbs.begin(), grid.gbs.end(), o.point.job.gbs) - grid.gbs.begin());
    if (g >= n_gbs) continue;
    const std::size_t s = by_size ? g : static_cast<std::size_t>(o.point.model_index) * n_gbs + g;
    if (s >= series.size()) continue;
    if (o.feasible)
      series[s].points.push_back(i);
    else
      ++series[s].infeasible;
  }
  for (SweepPlotSeries& s : series) {
    std::stable_sort(s.points.begin(), s.points.end(), [&](std::size_t a, std::size_t b) {
      return by_size ? outcomes[a].params < outcomes[b].params
                     : outcomes[a].point.job.gpus < outcomes[b].point.job.gpus;
    });
  }
  return series;
}

std::string sweep_svg(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes) {
  const bool by_size = sweep_plot_by_model_size(grid);
  const std::vector<SweepPlotSeries> series = sweep_plot_series(grid, outcomes);

  // X axis.
  Axis x;
  std::string x_label;
  if (by_size) {
    double lo = std::numeric_limits<double>::max(), hi = 0;
    for (const SweepOutcome& o : outcomes) {
      lo = std::min(lo, o.params);
      hi = std::max(hi, o.params);
    }
    if (!(lo > 0)) lo = hi = 1e9;
    x = log_axis(lo, hi, human_params);
    x_label = "model size (parameters, log scale), " + std::to_string(grid.gpus.front()) + " GPUs";
  } else {
    x = gpus_axis(grid.gpus);
    x_label = "GPUs (log scale)";
  }
  const auto x_of = [&](const SweepOutcome& o) {
    return by_size ? o.params : static_cast<double>(o.point.job.gpus);
  };

  // Y axes.
  double mfu_max = 0, step_lo = std::numeric_limits<double>::max(), step_hi = 0;
  int feasible = 0;
  for (const SweepOutcome& o : outcomes) {
    if (!o.feasible) continue;
    ++feasible;
    mfu_max = std::max(mfu_max, 100 * o.cost.throughput.mfu);
    step_lo = std::min(step_lo, o.cost.time.step_s);
    step_hi = std::max(step_hi, o.cost.time.step_s);
  }
  Panel mfu;
  mfu.title = "MFU against " + std::string(by_size ? "model size" : "GPU count");
  mfu.y_label = "MFU (%)";
  mfu.y = linear_axis(feasible ? std::max(mfu_max, 1.0) : 100, [](double v) { return short_number(v); });
  mfu.value = [](const SweepOutcome& o) { return 100 * o.cost.throughput.mfu; };
  mfu.tooltip_value = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "MFU %.1f%%", v);
    return std::string(b);
  };
  Panel step;
  step.title = "Step time against " + std::string(by_size ? "model size" : "GPU count");
  const bool step_log = feasible && step_lo > 0 && step_hi / step_lo >= 10;
  step.y_label = step_log ? "step time (s, log scale)" : "step time (s)";
  step.y = step_log ? log_axis(step_lo, step_hi, [](double v) { return short_number(v); })
                    : linear_axis(feasible ? step_hi : 1, [](double v) { return short_number(v); });
  step.value = [](const SweepOutcome& o) { return o.cost.time.step_s; };
  step.tooltip_value = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "step %.4g s", v);
    return std::string(b);
  };

  // Legend layout.
  std::vector<std::string> legend;
  std::size_t longest = 8;
  for (const SweepPlotSeries& s : series) {
    std::string label = s.label;
    if (s.points.empty())
      label += " (no feasible plan)";
    else if (s.infeasible > 0)
      label += " (" + std::to_string(s.infeasible) + " without a plan)";
    longest = std::max(longest, label.size());
    legend.push_back(std::move(label));
  }
  const double width = 2 * kPanelWidth + 2 * kMargin;
  const double entry_width = 48 + 7.0 * static_cast<double>(longest);
  const int columns = std::max(1, static_cast<int>((width - 2 * kMargin) / entry_width));
  const int rows = (static_cast<int>(series.size()) + columns - 1) / columns;
  const double legend_top = kTitleHeight + kPanelHeight + 10;
  const double height = legend_top + 24 + rows * kLegendRow + kMargin;

  const auto color_of = [&](std::size_t s) {
    const std::size_t key = by_size ? s : s / std::max<std::size_t>(1, grid.gbs.size());
    return kColors[key % (sizeof kColors / sizeof *kColors)];
  };
  const auto dash_of = [&](std::size_t s) -> std::string {
    if (by_size) return "";
    const std::string d = kDashes[(s % grid.gbs.size()) % (sizeof kDashes / sizeof *kDashes)];
    return d.empty() ? "" : " stroke-dasharray=\"" + d + "\"";
  };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height)
      << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
      << "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  const std::string title = "parplan sweep: " + grid.cluster.name + ", seq " + std::to_string(grid.seq) +
                            ", " + precision_name(grid.precision) + ", " + std::to_string(outcomes.size()) +
                            " points (" + std::to_string(feasible) + " with a plan)";
  svg << "<title>" << escape(title) << "</title>\n";
  svg << "<rect x=\"0\" y=\"0\" width=\"" << num(width) << "\" height=\"" << num(height)
      << "\" fill=\"#ffffff\"/>\n";
  svg << "<text x=\"" << num(kMargin) << "\" y=\"28\" font-size=\"16\" font-weight=\"bold\">" << escape(title)
      << "</text>\n";

  const auto draw_panel = [&](const Panel& panel, double left) {
    const double top = kTitleHeight;
    const double px0 = left + kPlotLeft, px1 = left + kPlotRight;
    const double py0 = top + kPlotBottom, py1 = top + kPlotTop;  // y grows downward
    // Keep markers off the frame: 3% padding inside the plot area.
    const double pad_x = 0.03 * (px1 - px0);
    const auto sx = [&](double v) { return px0 + pad_x + x.fraction(v) * (px1 - px0 - 2 * pad_x); };
    const auto sy = [&](double v) { return py0 + panel.y.fraction(v) * (py1 - py0); };
    svg << "<g>\n";
    svg << "<text x=\"" << num((px0 + px1) / 2) << "\" y=\"" << num(top + 24)
        << "\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">" << escape(panel.title)
        << "</text>\n";
    svg << "<rect x=\"" << num(px0) << "\" y=\"" << num(py1) << "\" width=\"" << num(px1 - px0)
        << "\" height=\"" << num(py0 - py1) << "\" fill=\"none\" stroke=\"#444444\"/>\n";
    for (double t : x.ticks) {
      const double X = sx(t);
      svg << "<line x1=\"" << num(X) << "\" y1=\"" << num(py1) << "\" x2=\"" << num(X) << "\" y2=\""
          << num(py0) << "\" stroke=\"#e4e4e4\"/>\n";
      svg << "<line x1=\"" << num(X) << "\" y1=\"" << num(py0) << "\" x2=\"" << num(X) << "\" y2=\""
          << num(py0 + 5) << "\" stroke=\"#444444\"/>\n";
      svg << "<text x=\"" << num(X) << "\" y=\"" << num(py0 + 18) << "\" text-anchor=\"middle\">"
          << escape(x.label(t)) << "</text>\n";
    }
    for (double t : panel.y.ticks) {
      const double Y = sy(t);
      svg << "<line x1=\"" << num(px0) << "\" y1=\"" << num(Y) << "\" x2=\"" << num(px1) << "\" y2=\""
          << num(Y) << "\" stroke=\"#e4e4e4\"/>\n";
      svg << "<line x1=\"" << num(px0 - 5) << "\" y1=\"" << num(Y) << "\" x2=\"" << num(px0) << "\" y2=\""
          << num(Y) << "\" stroke=\"#444444\"/>\n";
      svg << "<text x=\"" << num(px0 - 8) << "\" y=\"" << num(Y + 4) << "\" text-anchor=\"end\">"
          << escape(panel.y.label(t)) << "</text>\n";
    }
    svg << "<text x=\"" << num((px0 + px1) / 2) << "\" y=\"" << num(py0 + 40) << "\" text-anchor=\"middle\">"
        << escape(x_label) << "</text>\n";
    const double label_x = left + 18, label_y = (py0 + py1) / 2;
    svg << "<text x=\"" << num(label_x) << "\" y=\"" << num(label_y)
        << "\" text-anchor=\"middle\" transform=\"rotate(-90 " << num(label_x) << " " << num(label_y)
        << ")\">" << escape(panel.y_label) << "</text>\n";
    if (feasible == 0) {
      svg << "<text x=\"" << num((px0 + px1) / 2) << "\" y=\"" << num((py0 + py1) / 2)
          << "\" text-anchor=\"middle\" fill=\"#999999\">no point has a feasible plan</text>\n";
    }
    for (std::size_t s = 0; s < series.size(); ++s) {
      if (series[s].points.empty()) continue;
      const char* color = color_of(s);
      svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\"" << dash_of(s)
          << " points=\"";
      for (std::size_t k = 0; k < series[s].points.size(); ++k) {
        const SweepOutcome& o = outcomes[series[s].points[k]];
        svg << (k ? " " : "") << num(sx(x_of(o))) << "," << num(sy(panel.value(o)));
      }
      svg << "\"/>\n";
      for (std::size_t index : series[s].points) {
        const SweepOutcome& o = outcomes[index];
        const ParallelConfig& c = o.config;
        const std::string tip =
            grid.models.at(static_cast<std::size_t>(o.point.model_index)).name + ", gbs " +
            std::to_string(o.point.job.gbs) + ", " + std::to_string(o.point.job.gpus) +
            " GPUs: " + panel.tooltip_value(panel.value(o)) + " (tp " + std::to_string(c.tp) + " pp " +
            std::to_string(c.pp) + " dp " + std::to_string(c.dp) + " cp " + std::to_string(c.cp) + " mbs " +
            std::to_string(c.mbs) + ")";
        svg << "<circle cx=\"" << num(sx(x_of(o))) << "\" cy=\"" << num(sy(panel.value(o)))
            << "\" r=\"3\" fill=\"" << color << "\"><title>" << escape(tip) << "</title></circle>\n";
      }
    }
    svg << "</g>\n";
  };
  draw_panel(mfu, kMargin);
  draw_panel(step, kMargin + kPanelWidth);

  // Legend.
  svg << "<g>\n<text x=\"" << num(kMargin) << "\" y=\"" << num(legend_top + 12)
      << "\" font-weight=\"bold\">legend (points without a feasible plan are not drawn)</text>\n";
  for (std::size_t s = 0; s < series.size(); ++s) {
    const int row = static_cast<int>(s) / columns, column = static_cast<int>(s) % columns;
    const double ex = kMargin + column * entry_width;
    const double ey = legend_top + 24 + row * kLegendRow + 10;
    const bool drawn = !series[s].points.empty();
    const std::string color = drawn ? color_of(s) : "#bbbbbb";
    svg << "<line x1=\"" << num(ex) << "\" y1=\"" << num(ey - 4) << "\" x2=\"" << num(ex + 34) << "\" y2=\""
        << num(ey - 4) << "\" stroke=\"" << color << "\" stroke-width=\"2\"" << dash_of(s) << "/>\n";
    svg << "<text x=\"" << num(ex + 40) << "\" y=\"" << num(ey) << "\"" << (drawn ? "" : " fill=\"#888888\"")
        << ">" << escape(legend[s]) << "</text>\n";
  }
  svg << "</g>\n</svg>\n";
  return svg.str();
}

}  // namespace parplan
