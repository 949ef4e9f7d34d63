// SVG timeline of a SkipPipe schedule, from a replay of the event simulation.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "cost/skip_pipeline_sim.h"
#include "src/report/skip_paths_report.h"
#include "src/report/time_ticks.h"
#include "src/report/xml_text.h"

namespace parplan {
namespace {

// A distinct colour per micro-batch: hues a golden angle apart never repeat
// (mb * 360 / count + 180 for odd mb gave k and k + count / 2 one hue when
// count is 2 mod 4), and three lightness steps keep neighbouring hues apart.
std::string colour(int mb) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "hsl(%.1f,70%%,%d%%)", std::fmod(mb * 137.50776, 360.0), 45 + 12 * (mb % 3));
  return buf;
}

}  // namespace

std::string skip_paths_svg(const SkipProblem& p, const SkipSchedule& s, const std::string& title) {
  SkipSimulator sim;
  std::vector<SkipTask> tasks;
  const SkipSimResult r = sim.run(p.network, s.micro_batches, &tasks);
  std::vector<int> stage_of(p.network.nodes, -1);
  std::vector<int> rows;
  for (std::size_t st = 0; st < s.partition.size(); ++st)
    for (int node : s.partition[st]) stage_of[node] = static_cast<int>(st), rows.push_back(node);
  std::vector<int> row_of(p.network.nodes, 0);
  for (std::size_t i = 0; i < rows.size(); ++i) row_of[rows[i]] = static_cast<int>(i);

  const double span_s = r.deadlock ? 1.0 : std::max(r.makespan_s, 1e-9);
  const int left = 120, top = 40, row_h = 22, width = 1100;
  const double scale = (width - left - 20) / span_s;
  const int height = top + row_h * static_cast<int>(rows.size()) + 60;
  std::ostringstream o;
  o << svg_open(width, height)
    << "<defs><pattern id=\"hatch\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\" "
       "patternTransform=\"rotate(45)\"><rect width=\"2\" height=\"4\" fill=\"white\" fill-opacity=\"0.6\"/>"
       "</pattern></defs>\n"
    << "<text x=\"" << left << "\" y=\"20\" font-size=\"14\">" << xml_escape(shortened_text(title, 130))
    << "</text>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const int y = top + static_cast<int>(i) * row_h;
    o << "<rect x=\"" << left << "\" y=\"" << y << "\" width=\"" << width - left - 20 << "\" height=\""
      << row_h - 4 << "\" fill=\"#f2f2f2\"/>\n"
      << "<text x=\"6\" y=\"" << y + 14 << "\">node " << rows[i] << " (stage " << stage_of[rows[i]]
      << ")</text>\n";
  }
  for (const SkipTask& t : tasks) {
    const double x = left + t.start_s * scale;
    const double w = std::max(1.0, (t.end_s - t.start_s) * scale);
    const int y = top + row_of[t.node] * row_h;
    const char* kind = t.kind == SkipTaskKind::kForward ? "forward"
                       : t.kind == SkipTaskKind::kLoss  ? "loss"
                                                        : "backward";
    const std::string fill = t.kind == SkipTaskKind::kLoss ? "#333333" : colour(t.micro_batch);
    char rect[256];
    std::snprintf(rect, sizeof rect,
                  "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" stroke=\"#222\" "
                  "stroke-width=\"0.5\">",
                  x, y, w, row_h - 4, fill.c_str());
    o << rect << "<title>micro-batch " << t.micro_batch << " " << kind << " " << t.start_s << " - " << t.end_s
      << " s</title></rect>\n";
    if (t.kind == SkipTaskKind::kBackward) {
      std::snprintf(rect, sizeof rect,
                    "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"url(#hatch)\"/>\n", x, y,
                    w, row_h - 4);
      o << rect;
    }
    if (w > 14)
      o << "<text x=\"" << x + 2 << "\" y=\"" << y + 13 << "\" font-size=\"9\">" << t.micro_batch
        << "</text>\n";
  }
  const int axis_y = top + row_h * static_cast<int>(rows.size()) + 12;
  const double step_s = tick_step_s(span_s);
  for (int k = 0; k * step_s <= span_s * (1 + 1e-9); ++k) {
    const double t = k * step_s;
    o << "<text x=\"" << left + t * scale << "\" y=\"" << axis_y << "\" text-anchor=\"middle\">"
      << tick_text(t, step_s) << "</text>\n";
  }
  o << "<text x=\"" << left << "\" y=\"" << axis_y + 20
    << "\">solid: forward, hatched: backward, dark: loss; colour = micro-batch (number inside); grey: "
       "idle</text>\n";
  o << "</svg>\n";
  return o.str();
}

}  // namespace parplan
