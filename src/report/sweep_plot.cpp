#include "src/report/sweep_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>

#include "src/io/job_loader.h"
#include "src/report/counted.h"
#include "src/report/sweep_plot_axes.h"
#include "src/report/xml_text.h"

namespace parplan {

using namespace sweep_plot_detail;

namespace {

// Geometry, pixels. A row is a caption line and two panels side by side.
constexpr double kPanelWidth = 560;
constexpr double kPanelHeight = 360;
constexpr double kPlotLeft = 72, kPlotRight = 540, kPlotTop = 36, kPlotBottom = 300;
constexpr double kCaptionHeight = 26;
constexpr double kTitleHeight = 44;
constexpr double kMargin = 20;
constexpr double kLegendRow = 20;

struct Panel {
  std::string title, y_label;
  std::function<double(const SweepOutcome&)> value;
  std::function<std::string(double)> tooltip_value;
};

std::string percent(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "MFU %.1f %%", v);
  return b;
}

std::string seconds(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "step %.3g s", v);
  return b;
}

/// The step-time axis of a set of points: logarithmic when they span a
/// factor of 10 or more.
Axis step_axis(const std::vector<const SweepOutcome*>& drawn) {
  double lo = std::numeric_limits<double>::max(), hi = 0;
  for (const SweepOutcome* o : drawn) {
    lo = std::min(lo, o->cost.time.step_s);
    hi = std::max(hi, o->cost.time.step_s);
  }
  if (drawn.empty()) return linear_axis(1, short_number);
  if (lo > 0 && hi / lo >= 10) return log_axis(lo, hi, short_number);
  return linear_axis(hi, short_number);
}

}  // namespace

bool sweep_plot_by_model_size(const SweepGrid& grid) { return grid.gpus.size() == 1; }

std::vector<SweepPlotSeries> sweep_plot_series(const SweepGrid& grid,
                                               const std::vector<SweepOutcome>& outcomes) {
  const bool by_size = sweep_plot_by_model_size(grid);
  const std::size_t n_gbs = grid.gbs.size();
  std::vector<SweepPlotSeries> series;
  const std::size_t rows = by_size ? 1 : grid.models.size();
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t g = 0; g < n_gbs; ++g) {
      SweepPlotSeries s;
      s.label = (by_size ? "" : grid.models[r].name + ", ") + "gbs " + std::to_string(grid.gbs[g]);
      s.row = r;
      s.gbs_index = g;
      series.push_back(std::move(s));
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
  const std::size_t n_gbs = grid.gbs.size();
  const std::size_t rows = by_size ? 1 : grid.models.size();

  // X axis, shared by every panel.
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

  // MFU shares one axis over all rows (comparable across models); step
  // times differ by orders of magnitude between models: one axis per row.
  double mfu_max = 0;
  int feasible = 0;
  std::vector<std::vector<const SweepOutcome*>> drawn(rows);
  std::vector<int> row_points(rows, 0), row_missing(rows, 0);
  for (const SweepPlotSeries& s : series) {
    row_missing[s.row] += s.infeasible;
    row_points[s.row] += s.infeasible + static_cast<int>(s.points.size());
    for (std::size_t i : s.points) {
      drawn[s.row].push_back(&outcomes[i]);
      mfu_max = std::max(mfu_max, 100 * outcomes[i].cost.throughput.mfu);
      ++feasible;
    }
  }
  const Axis mfu_axis = linear_axis(feasible ? std::max(mfu_max, 1.0) : 100, short_number);
  Panel mfu{"MFU", "MFU (%)", [](const SweepOutcome& o) { return 100 * o.cost.throughput.mfu; }, percent};
  Panel step{"step time", "", [](const SweepOutcome& o) { return o.cost.time.step_s; }, seconds};

  // Legend: one entry per global batch, in rows that fit the width.
  const double width = 2 * kPanelWidth + 2 * kMargin;
  std::size_t longest = 4;
  for (int gbs : grid.gbs) longest = std::max(longest, std::to_string(gbs).size() + 4);
  const double entry_width = 40 + 7.5 * static_cast<double>(longest);
  const std::size_t per_line =
      std::max<std::size_t>(1, static_cast<std::size_t>((width - 2 * kMargin) / entry_width));
  const std::size_t legend_lines = (n_gbs + per_line - 1) / per_line;
  const double legend_top = kTitleHeight;
  const double rows_top = legend_top + 24 + static_cast<double>(legend_lines) * kLegendRow + 6;
  const double row_height = kCaptionHeight + kPanelHeight;
  const double height = rows_top + static_cast<double>(rows) * row_height + kMargin;

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height)
      << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
      << "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  // 16 px bold over 1140 px holds about 110 characters: the cluster's
  // name is cut to 50.
  const std::string title = "parplan sweep: " + shortened_text(grid.cluster.name, 50) + ", seq " +
                            std::to_string(grid.seq) + ", " + precision_name(grid.precision) + ", " +
                            counted(static_cast<long long>(outcomes.size()), "point") + " (" +
                            std::to_string(feasible) + " with a plan)";
  svg << "<title>" << xml_escape(title) << "</title>\n";
  svg << "<rect x=\"0\" y=\"0\" width=\"" << num(width) << "\" height=\"" << num(height)
      << "\" fill=\"#ffffff\"/>\n";
  svg << "<text x=\"" << num(kMargin) << "\" y=\"28\" font-size=\"16\" font-weight=\"bold\">"
      << xml_escape(title) << "</text>\n";

  svg << "<g>\n<text x=\"" << num(kMargin) << "\" y=\"" << num(legend_top + 12)
      << "\" font-weight=\"bold\">legend: line colour = global batch (sequences), dark (smallest) to light "
         "(largest); points "
         "without a plan are not drawn</text>\n";
  for (std::size_t g = 0; g < n_gbs; ++g) {
    const double ex = kMargin + static_cast<double>(g % per_line) * entry_width;
    const double ey = legend_top + 24 + static_cast<double>(g / per_line) * kLegendRow + 10;
    svg << "<line x1=\"" << num(ex) << "\" y1=\"" << num(ey - 4) << "\" x2=\"" << num(ex + 30) << "\" y2=\""
        << num(ey - 4) << "\" stroke=\"" << sequential_color(g, n_gbs) << "\" stroke-width=\"3\"/>\n";
    svg << "<text x=\"" << num(ex + 36) << "\" y=\"" << num(ey) << "\">gbs " << grid.gbs[g] << "</text>\n";
  }
  svg << "</g>\n";

  const auto draw_panel = [&](const Panel& panel, const Axis& y, std::size_t row, double left, double top) {
    const double px0 = left + kPlotLeft, px1 = left + kPlotRight;
    const double py0 = top + kPlotBottom, py1 = top + kPlotTop;  // y grows downward
    // Keep markers off the frame: 3% padding inside the plot area.
    const double pad_x = 0.03 * (px1 - px0);
    const auto sx = [&](double v) { return px0 + pad_x + x.fraction(v) * (px1 - px0 - 2 * pad_x); };
    const double pad_y = 0.03 * (py0 - py1);
    const auto sy = [&](double v) { return py0 - pad_y + y.fraction(v) * (py1 - py0 + 2 * pad_y); };
    // A panel's 14 px bold title holds about 60 characters over its 468 px.
    const std::string subject = by_size ? "" : shortened_text(grid.models[row].name, 24) + ": ";
    const std::string y_label =
        !panel.y_label.empty() ? panel.y_label : (y.log ? "step time (s, log scale)" : "step time (s)");
    svg << "<g>\n";
    svg << "<text x=\"" << num((px0 + px1) / 2) << "\" y=\"" << num(top + 22)
        << "\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">"
        << xml_escape(subject + panel.title + " against " + (by_size ? "model size" : "GPU count"))
        << "</text>\n";
    svg << "<rect x=\"" << num(px0) << "\" y=\"" << num(py1) << "\" width=\"" << num(px1 - px0)
        << "\" height=\"" << num(py0 - py1) << "\" fill=\"none\" stroke=\"#444444\"/>\n";
    for (double t : x.ticks) {
      const double X = sx(t);
      svg << "<line x1=\"" << num(X) << "\" y1=\"" << num(py1) << "\" x2=\"" << num(X) << "\" y2=\""
          << num(py0) << "\" stroke=\"#e4e4e4\"/>\n";
      svg << "<text x=\"" << num(X) << "\" y=\"" << num(py0 + 18) << "\" text-anchor=\"middle\">"
          << xml_escape(x.label(t)) << "</text>\n";
    }
    for (double t : y.ticks) {
      const double Y = sy(t);
      svg << "<line x1=\"" << num(px0) << "\" y1=\"" << num(Y) << "\" x2=\"" << num(px1) << "\" y2=\""
          << num(Y) << "\" stroke=\"#e4e4e4\"/>\n";
      svg << "<text x=\"" << num(px0 - 8) << "\" y=\"" << num(Y + 4) << "\" text-anchor=\"end\">"
          << xml_escape(y.label(t)) << "</text>\n";
    }
    svg << "<text x=\"" << num((px0 + px1) / 2) << "\" y=\"" << num(py0 + 38) << "\" text-anchor=\"middle\">"
        << xml_escape(x_label) << "</text>\n";
    const double label_x = left + 18, label_y = (py0 + py1) / 2;
    svg << "<text x=\"" << num(label_x) << "\" y=\"" << num(label_y)
        << "\" text-anchor=\"middle\" transform=\"rotate(-90 " << num(label_x) << " " << num(label_y)
        << ")\">" << xml_escape(y_label) << "</text>\n";
    if (drawn[row].empty()) {
      svg << "<text x=\"" << num((px0 + px1) / 2) << "\" y=\"" << num((py0 + py1) / 2)
          << "\" text-anchor=\"middle\" fill=\"#999999\">no point has a plan (the table and CSV give "
             "why)</text>\n";
    }
    for (const SweepPlotSeries& s : series) {
      if (s.row != row || s.points.empty()) continue;
      const std::string color = sequential_color(s.gbs_index, n_gbs);
      svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
      for (std::size_t k = 0; k < s.points.size(); ++k) {
        const SweepOutcome& o = outcomes[s.points[k]];
        svg << (k ? " " : "") << num(sx(x_of(o))) << "," << num(sy(panel.value(o)));
      }
      svg << "\"/>\n";
      for (std::size_t index : s.points) {
        const SweepOutcome& o = outcomes[index];
        const ParallelConfig& c = o.config;
        const std::string tip =
            sweep_model(grid, o).name + ", gbs " + std::to_string(o.point.job.gbs) + ", " +
            std::to_string(o.point.job.gpus) + " GPUs: " + panel.tooltip_value(panel.value(o)) + " (tp " +
            std::to_string(c.tp) + " pp " + std::to_string(c.pp) + " dp " + std::to_string(c.dp) + " cp " +
            std::to_string(c.cp) + " ep " + std::to_string(c.ep) + " zero " + std::to_string(c.zero) +
            " mbs " + std::to_string(c.mbs) + ")";
        svg << "<circle cx=\"" << num(sx(x_of(o))) << "\" cy=\"" << num(sy(panel.value(o)))
            << "\" r=\"2.5\" fill=\"" << color << "\"><title>" << xml_escape(tip) << "</title></circle>\n";
      }
    }
    svg << "</g>\n";
  };

  for (std::size_t row = 0; row < rows; ++row) {
    const double top = rows_top + static_cast<double>(row) * row_height;
    std::string caption =
        by_size ? "all models on " + std::to_string(grid.gpus.front()) + " GPUs" : grid.models[row].name;
    if (row_missing[row] == row_points[row])
      caption += ": no point has a plan";
    else if (row_missing[row] > 0)
      caption += ": " + std::to_string(row_missing[row]) + " of " + std::to_string(row_points[row]) +
                 " points without a plan (not drawn)";
    svg << "<line x1=\"" << num(kMargin) << "\" y1=\"" << num(top + 2) << "\" x2=\"" << num(width - kMargin)
        << "\" y2=\"" << num(top + 2) << "\" stroke=\"#bbbbbb\"/>\n";
    svg << "<text x=\"" << num(kMargin) << "\" y=\"" << num(top + 18) << "\" font-weight=\"bold\">"
        << xml_escape(caption) << "</text>\n";
    draw_panel(mfu, mfu_axis, row, kMargin, top + kCaptionHeight);
    draw_panel(step, step_axis(drawn[row]), row, kMargin + kPanelWidth, top + kCaptionHeight);
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace parplan
