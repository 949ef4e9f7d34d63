#include "src/report/scatter_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "src/report/sweep_plot_axes.h"
#include "src/report/xml_text.h"

namespace parplan {

namespace {

using sweep_plot_detail::linear_axis;
using sweep_plot_detail::sequential_color;

std::string ms_text(double ms) {
  char buf[32];
  if (ms >= 10000)
    std::snprintf(buf, sizeof buf, "%.1f s", ms / 1000);
  else if (ms >= 10)
    std::snprintf(buf, sizeof buf, "%.0f ms", ms);
  else
    std::snprintf(buf, sizeof buf, "%.2f ms", ms);
  return buf;
}

int size_index_of(const ScatterCoefficients& c, int size) {
  for (std::size_t j = 0; j < c.group_sizes.size(); ++j)
    if (c.group_sizes[j] == size) return static_cast<int>(j);
  return 0;
}

// A rank label every power-of-two ranks, about 16 labels at most.
int rank_label_step(int gpus) {
  int step = 1;
  while (gpus / step > 16) step *= 2;
  return step;
}

}  // namespace

std::string scatter_step_svg(const ScatterReport& report, int step) {
  const ScatterCoefficients& c = report.coefficients;
  const ScatterStepResult& result = report.results.at(step);
  const std::vector<std::int64_t>& lengths = report.steps.at(step);
  const ScatterPlan& plan = result.plan;
  const int gpus = std::max(1, report.gpus);
  const double step_ms = std::max(plan.time_ms, 1e-9);

  const int left = 70, right = 20, top = 74, width = 1200;
  const double plot_w = width - left - right;
  const double rank_h = std::min(14.0, 560.0 / gpus);
  const double plot_h = rank_h * gpus;
  const int legend_rows = 2;
  const int height = static_cast<int>(std::ceil(top + plot_h + 40 + 16 * legend_rows));
  const auto x_of = [&](double ms) { return left + plot_w * ms / step_ms; };

  std::string o;
  o.reserve(256 * (lengths.size() + 8 * plan.micro_batches.size()) + 4096);
  char buf[640];
  o += svg_open(width, height);
  o += "<defs><pattern id=\"fixed\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
       "patternTransform=\"rotate(45)\"><rect width=\"5\" height=\"5\" fill=\"#d9d9d9\"/>"
       "<rect width=\"2\" height=\"5\" fill=\"#888\"/></pattern></defs>\n";

  std::string title = "step " + std::to_string(step) + ": " + std::to_string(lengths.size()) +
                      " sequences on " + std::to_string(gpus) + " GPUs, " + ms_text(plan.time_ms) + " in " +
                      std::to_string(plan.micro_batches.size()) +
                      (plan.micro_batches.size() == 1 ? " micro-batch" : " micro-batches");
  std::string subtitle;
  if (result.static_size > 0 && std::isfinite(result.static_time_ms) && plan.time_ms > 0)
    subtitle = "best static grouping (every group " + std::to_string(result.static_size) +
               " GPUs): " + ms_text(result.static_time_ms) + ", speedup " +
               std::to_string(result.static_time_ms / plan.time_ms).substr(0, 4) + "; ";
  if (std::isfinite(result.certificate.best_bound)) {
    std::snprintf(buf, sizeof buf, "bound %s, gap %.2f %%", ms_text(result.certificate.best_bound).c_str(),
                  100 * result.certificate.gap);
    subtitle += buf;
  }
  std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"20\" font-size=\"14\">", left);
  o += buf + xml_escape(title) + "</text>\n";
  std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"38\" font-size=\"12\">", left);
  o += buf + xml_escape(subtitle) + "</text>\n";

  // Idle first: every micro-batch's whole column grey, its groups over it.
  std::snprintf(buf, sizeof buf,
                "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"%.2f\" fill=\"#eeeeee\"/>\n", left, top,
                plot_w, plot_h);
  o += buf;
  const auto colour = [&](int size) {
    return sequential_color(static_cast<std::size_t>(size_index_of(c, size)), c.group_sizes.size());
  };
  double start_ms = 0;
  for (std::size_t m = 0; m < plan.micro_batches.size(); ++m) {
    const ScatterMicroBatch& mb = plan.micro_batches[m];
    const double x0 = x_of(start_ms);
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#555\"/>\n"
                  "<text x=\"%.2f\" y=\"%d\" font-size=\"9\">%zu</text>\n",
                  x0, top - 14, x0, top + plot_h, x0 + 2, top - 4, m);
    o += buf;
    for (const ScatterGroup& g : mb.groups) {
      const int j = size_index_of(c, g.size);
      const double y = top + rank_h * g.first_rank;
      const double h = std::max(0.5, rank_h * g.size - (rank_h * g.size > 4 ? 1.0 : 0.0));
      const std::string fill = colour(g.size);
      const std::string ranks = g.size == 1 ? "rank " + std::to_string(g.first_rank)
                                            : "ranks " + std::to_string(g.first_rank) + "-" +
                                                  std::to_string(g.first_rank + g.size - 1);
      double t = start_ms;
      std::snprintf(buf, sizeof buf,
                    "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"url(#fixed)\">"
                    "<title>micro-batch %zu, %d GPUs (%s): fixed cost %s</title></rect>\n",
                    x_of(t), y, std::max(0.3, x_of(t + c.fixed_ms) - x_of(t)), h, m, g.size, ranks.c_str(),
                    ms_text(c.fixed_ms).c_str());
      o += buf;
      t += c.fixed_ms;
      for (int i : g.sequences) {
        const double tokens = static_cast<double>(lengths[i]);
        const double ms = scatter_sequence_ms(c, j, tokens);
        const double w = x_of(t + ms) - x_of(t);
        std::snprintf(buf, sizeof buf,
                      "<rect class=\"sequence\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                      "fill=\"%s\" stroke=\"white\" stroke-width=\"%s\"><title>sequence %d: %.0f tokens on "
                      "%d GPUs (%s), micro-batch %zu, %s</title></rect>\n",
                      x_of(t), y, std::max(0.3, w), h, fill.c_str(), w > 3 ? "0.5" : "0", i, tokens, g.size,
                      ranks.c_str(), m, ms_text(ms).c_str());
        o += buf;
        t += ms;
      }
    }
    start_ms += mb.time_ms;
  }
  std::snprintf(buf, sizeof buf, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#555\"/>\n",
                x_of(start_ms), top - 14, x_of(start_ms), top + plot_h);
  o += buf;
  std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" font-size=\"9\">micro-batch</text>\n", 6, top - 4);
  o += buf;

  const int label_step = rank_label_step(gpus);
  for (int r = 0; r < gpus; r += label_step) {
    std::snprintf(buf, sizeof buf, "<text x=\"6\" y=\"%.2f\" font-size=\"9\">rank %d</text>\n",
                  top + rank_h * r + std::min(9.0, rank_h * label_step), r);
    o += buf;
  }

  const double axis_y = top + plot_h + 8;
  const sweep_plot_detail::Axis axis =
      linear_axis(plan.time_ms / 1000, [](double s) { return sweep_plot_detail::short_number(s) + " s"; });
  for (double s : axis.ticks) {
    if (s * 1000 > plan.time_ms * (1 + 1e-9)) continue;
    const double x = x_of(s * 1000);
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#999\"/>\n"
                  "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">",
                  x, axis_y - 6, x, axis_y, x, axis_y + 12);
    o += buf + xml_escape(axis.label(s)) + "</text>\n";
  }

  // Legend: one swatch per group size, then the fixed cost and idle.
  double lx = left;
  const double ly = axis_y + 30;
  for (int size : c.group_sizes) {
    std::snprintf(buf, sizeof buf,
                  "<rect x=\"%.2f\" y=\"%.2f\" width=\"12\" height=\"10\" fill=\"%s\"/>"
                  "<text x=\"%.2f\" y=\"%.2f\">%d GPU%s</text>\n",
                  lx, ly - 9, colour(size).c_str(), lx + 16, ly, size, size == 1 ? "" : "s");
    o += buf;
    lx += 72;
  }
  std::snprintf(buf, sizeof buf,
                "<rect x=\"%.2f\" y=\"%.2f\" width=\"12\" height=\"10\" fill=\"url(#fixed)\"/>"
                "<text x=\"%.2f\" y=\"%.2f\">fixed cost per micro-batch</text>\n"
                "<rect x=\"%.2f\" y=\"%.2f\" width=\"12\" height=\"10\" fill=\"#eeeeee\" stroke=\"#ccc\"/>"
                "<text x=\"%.2f\" y=\"%.2f\">idle (waiting for the micro-batch's slowest group)</text>\n",
                static_cast<double>(left), ly + 7, left + 16.0, ly + 16, left + 190.0, ly + 7, left + 206.0,
                ly + 16);
  o += buf;
  o += "</svg>\n";
  return o;
}

}  // namespace parplan
