#include "src/report/pipeline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "src/io/input_error.h"
#include "src/report/counted.h"
#include "src/report/pipeline_trace.h"
#include "src/report/table_report.h"
#include "src/report/time_ticks.h"
#include "src/report/xml_text.h"

namespace parplan {

namespace {

// Forward passes in blues, backward passes in oranges; a rank's chunks in
// lighter and darker shades, so interleaving shows.
// Later chunks lighter over a wide range, and neighbouring chunks a hue step
// apart: at vp 12 a 25-point range left 2 points between chunks.
std::string pass_fill(bool backward, int chunk, int vp) {
  const int lightness = vp > 1 ? 35 + 42 * chunk / (vp - 1) : 55;
  char buf[40];
  std::snprintf(buf, sizeof buf, "hsl(%d,65%%,%d%%)", (backward ? 28 : 212) + (chunk % 2) * 14, lightness);
  return buf;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf,
                s >= 10    ? "%.1f s"
                : s >= 0.1 ? "%.2f s"
                           : "%.1f ms",
                s >= 0.1 ? s : 1e3 * s);
  return buf;
}

// Beyond this many passes the middle of the steady state is cut out of the
// picture (the schedule repeats there), so the file stays a few megabytes.
constexpr std::size_t kMaxDrawnPasses = 12000;

// Time to x: [0, cut_from_s] and [cut_to_s, end] side by side, a gap of
// kCutGapPx between them where the steady state is left out.
struct TimeAxis {
  static constexpr double kCutGapPx = 24;
  double left_px = 0, scale_px_per_s = 0, cut_from_s = 0, cut_to_s = 0;
  bool cut() const { return cut_to_s > cut_from_s; }
  double x(double t) const {
    if (!cut() || t <= cut_from_s) return left_px + t * scale_px_per_s;
    return left_px + cut_from_s * scale_px_per_s + kCutGapPx +
           (std::max(t, cut_to_s) - cut_to_s) * scale_px_per_s;
  }
};

// The cut lies inside the steady state: after every stage's first backward
// (the warm-up and its bubble drawn whole) and before any stage's last
// forward (the cool-down drawn whole), so nothing idle is left out.
TimeAxis time_axis(const PipelineTimeline& timeline, double end_s, double left_px, double width_px) {
  TimeAxis axis;
  axis.left_px = left_px;
  if (timeline.ops.size() > kMaxDrawnPasses) {
    std::vector<double> first_backward_s(timeline.pp, end_s), last_forward_end_s(timeline.pp, 0.0);
    std::vector<double> starts, ends;
    starts.reserve(timeline.ops.size());
    ends.reserve(timeline.ops.size());
    for (const PipelineOp& op : timeline.ops) {
      starts.push_back(op.start_s), ends.push_back(op.end_s);
      if (op.backward)
        first_backward_s[op.rank] = std::min(first_backward_s[op.rank], op.start_s);
      else
        last_forward_end_s[op.rank] = std::max(last_forward_end_s[op.rank], op.end_s);
    }
    const double steady_from_s = *std::max_element(first_backward_s.begin(), first_backward_s.end());
    const double steady_to_s = *std::min_element(last_forward_end_s.begin(), last_forward_end_s.end());
    std::sort(starts.begin(), starts.end());
    std::sort(ends.begin(), ends.end());
    // Passes drawn whatever the cut: those starting before the steady state
    // or ending after it; the rest of the budget goes half to each side.
    const auto before = static_cast<std::size_t>(
        std::lower_bound(starts.begin(), starts.end(), steady_from_s) - starts.begin());
    const auto after =
        static_cast<std::size_t>(ends.end() - std::upper_bound(ends.begin(), ends.end(), steady_to_s));
    // At least a round of every stage's passes each side, so the steady
    // state's pattern shows.
    const std::size_t spare =
        std::max<std::size_t>(kMaxDrawnPasses > before + after ? (kMaxDrawnPasses - before - after) / 2 : 0,
                              2 * static_cast<std::size_t>(timeline.pp * timeline.vp));
    if (steady_to_s > steady_from_s) {
      axis.cut_from_s =
          std::clamp(starts[std::min(before + spare, starts.size() - 1)], steady_from_s, steady_to_s);
      axis.cut_to_s = std::clamp(ends[ends.size() - 1 - std::min(after + spare, ends.size() - 1)],
                                 axis.cut_from_s, steady_to_s);
    }
  }
  const double shown_s = end_s - (axis.cut() ? axis.cut_to_s - axis.cut_from_s : 0.0);
  axis.scale_px_per_s = (width_px - (axis.cut() ? TimeAxis::kCutGapPx : 0.0)) / std::max(shown_s, 1e-9);
  return axis;
}

// One pass as a bar with its hover text; `from_s`..`to_s` is the part drawn
// (a pass across the cut is drawn up to it and from it).
void draw_pass(std::string& o, const TimeAxis& axis, const PipelineOp& op, double from_s, double to_s, int y,
               int bar_h, int vp) {
  char buf[512];
  const double x = axis.x(from_s);
  const double w = std::max(0.5, axis.x(to_s) - x);
  std::snprintf(buf, sizeof buf,
                "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" stroke=\"white\" "
                "stroke-width=\"%s\"><title>micro-batch %d, chunk %d, %s, %.4f - %.4f s</title></rect>\n",
                x, y, w, bar_h, pass_fill(op.backward, op.chunk, vp).c_str(), w > 3 ? "0.5" : "0",
                op.micro_batch, op.chunk, op.backward ? "backward" : "forward", op.start_s, op.end_s);
  o += buf;
  const int digits = op.micro_batch < 10 ? 1 : op.micro_batch < 100 ? 2 : op.micro_batch < 1000 ? 3 : 4;
  if (w > 6.0 * digits + 4) {
    std::snprintf(buf, sizeof buf, "<text x=\"%.2f\" y=\"%d\" font-size=\"9\" fill=\"white\">%d</text>\n",
                  x + 2, y + 14, op.micro_batch);
    o += buf;
  }
}

}  // namespace

std::string pipeline_svg(const PipelineTimeline& timeline, const CostReport& cost, const std::string& title) {
  const TimeBreakdown& time = cost.time;
  const double tail_s = time.dp_comm_s + time.optimizer_s;
  const double end_s = std::max(timeline.span_s + tail_s, 1e-9);
  // The title's lines (split at '\n'), then the summary line, then the rows.
  std::vector<std::string> title_lines;
  for (std::size_t from = 0;;) {
    const std::size_t to = title.find('\n', from);
    title_lines.push_back(title.substr(from, to == std::string::npos ? std::string::npos : to - from));
    if (to == std::string::npos) break;
    from = to + 1;
  }
  const int lines = static_cast<int>(title_lines.size());
  const int left = 90, top = 38 + 18 * lines, row_h = 24, width = 1200, right = 20;
  const TimeAxis axis = time_axis(timeline, end_s, left, width - left - right);
  const int rows = timeline.pp;
  const int height = top + row_h * rows + 94;
  std::string o;
  o.reserve(200 * std::min(timeline.ops.size(), kMaxDrawnPasses + 2 * rows) + 4096);
  char buf[512];
  o += svg_open(width, height);
  o += "<defs><pattern id=\"hatch\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
       "patternTransform=\"rotate(45)\"><rect width=\"2\" height=\"5\" fill=\"#888\"/></pattern></defs>\n";
  for (int i = 0; i < lines; ++i) {
    std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" font-size=\"%d\">", left, 20 + 18 * i,
                  i ? 12 : 14);
    // At 14 (12) px a line of the 1090 px right of the stage names holds
    // about 140 (160) characters; a longer model or cluster name is cut.
    o += buf + xml_escape(shortened_text(title_lines[i], i ? 160 : 140)) + "</text>\n";
  }
  const double busy_s = time.compute_s + time.tp_comm_s + time.cp_comm_s + time.pp_comm_s + time.ep_comm_s;
  const std::string summary =
      "step " + seconds_text(time.step_s) + ": pipeline " + seconds_text(timeline.span_s) + " (" +
      counted(timeline.micro_batches, "micro-batch", "micro-batches") +
      "; the cost model: " + seconds_text(busy_s) + " busy + " + seconds_text(time.bubble_s) +
      " bubble), then data-parallel exchange and optimizer " + seconds_text(tail_s);
  std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\">", left, 20 + 18 * lines);
  o += buf + xml_escape(summary) + "</text>\n";
  for (int r = 0; r < rows; ++r) {
    const int y = top + r * row_h;
    std::snprintf(buf, sizeof buf,
                  "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#eeeeee\"/>\n"
                  "<text x=\"6\" y=\"%d\">stage %d</text>\n",
                  left, y, width - left - right, row_h - 4, y + 15, r);
    o += buf;
    if (tail_s > 0) {
      const double x = axis.x(timeline.span_s);
      std::snprintf(
          buf, sizeof buf,
          "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"url(#hatch)\">"
          "<title>data-parallel exchange left after overlap and optimizer step: %s</title></rect>\n",
          x, y, std::max(1.0, axis.x(end_s) - x), row_h - 4, seconds_text(tail_s).c_str());
      o += buf;
    }
  }
  for (const PipelineOp& op : timeline.ops) {
    const int y = top + op.rank * row_h;
    if (!axis.cut() || op.end_s <= axis.cut_from_s || op.start_s >= axis.cut_to_s) {
      draw_pass(o, axis, op, op.start_s, op.end_s, y, row_h - 4, timeline.vp);
      continue;
    }
    // Inside the cut: left out; across an edge: the part outside it.
    if (op.start_s < axis.cut_from_s)
      draw_pass(o, axis, op, op.start_s, axis.cut_from_s, y, row_h - 4, timeline.vp);
    if (op.end_s > axis.cut_to_s) draw_pass(o, axis, op, axis.cut_to_s, op.end_s, y, row_h - 4, timeline.vp);
  }
  const int axis_y = top + row_h * rows + 8;
  if (axis.cut()) {
    const double x = axis.x(axis.cut_from_s);
    std::snprintf(buf, sizeof buf,
                  "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"white\"/>\n"
                  "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\" font-size=\"9\">&#8230;</text>\n",
                  x + 2, top - 2, TimeAxis::kCutGapPx - 4, row_h * rows + 2, x + TimeAxis::kCutGapPx / 2,
                  top + row_h * rows / 2);
    o += buf;
  }
  // Ticks on the shown time only (either side of a cut).
  const double step = tick_step_s(end_s - (axis.cut() ? axis.cut_to_s - axis.cut_from_s : 0.0));
  for (int k = 0; k * step <= end_s * (1 + 1e-9); ++k) {
    const double t = k * step;
    if (axis.cut() && t > axis.cut_from_s && t < axis.cut_to_s) continue;
    const double x = axis.x(t);
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\" stroke=\"#999\"/>\n"
                  "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                  x, axis_y - 6, x, axis_y, x, axis_y + 12, tick_text(t, step).c_str());
    o += buf;
  }
  // Two lines: one of 1200 px holds about 180 characters at 11 px.
  std::string legend[2] = {
      "blue: forward, orange: backward (recomputation included); lighter shades: later model chunks; "
      "number: micro-batch",
      "grey: idle (the bubble); hatched: data-parallel exchange and optimizer step"};
  if (axis.cut())
    legend[1] += "; ...: " + seconds_text(axis.cut_to_s - axis.cut_from_s) + " of the steady state not drawn";
  for (int i = 0; i < 2; ++i) {
    std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\">", left, axis_y + 34 + 16 * i);
    o += buf + xml_escape(legend[i]) + "</text>\n";
  }
  o += "</svg>\n";
  return o;
}

std::string pipeline_timeline_text(const std::string& path, const ModelSpec& model,
                                   const ClusterSpec& cluster, const JobSpec& job,
                                   const ParallelConfig& config, const CostReport& cost) {
  const double passes = 2.0 * config.micro_batches() * config.vp * config.pp;
  if (passes > kMaxTimelinePasses)
    throw InputError("--timeline: this step runs " + std::to_string(static_cast<long long>(passes)) +
                     " passes (2 x " + std::to_string(config.micro_batches()) + " micro-batches x vp " +
                     std::to_string(config.vp) + " x pp " + std::to_string(config.pp) +
                     "), more than the 4000000 a timeline replays; draw a smaller --gbs or drop --timeline");
  const std::string title = model.name + " on " + std::to_string(config.world()) + " x " +
                            cluster.device.name + ", " + std::to_string(config.gbs) + " x " +
                            std::to_string(job.seq) + " tokens\n" + config_line(config, model.is_moe(), &job);
  const PipelineTimeline timeline = pipeline_timeline(model, cluster, job, config);
  const bool trace = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  return trace ? pipeline_trace_json(timeline, cost, title) : pipeline_svg(timeline, cost, title);
}

}  // namespace parplan
