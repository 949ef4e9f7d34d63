#include "src/report/experts_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "src/report/xml_text.h"

namespace parplan {

namespace {

// Diverging: white at ratio 1, towards red (#b2182b) above and blue
// (#2166ac) below, saturated at 2 and 0.
std::string load_colour(double ratio) {
  const double t = std::clamp(ratio - 1.0, -1.0, 1.0);
  const double to[3] = {t > 0 ? 178.0 : 33.0, t > 0 ? 24.0 : 102.0, t > 0 ? 43.0 : 172.0};
  const double f = std::abs(t);
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround(255 + f * (to[0] - 255))),
                static_cast<int>(std::lround(255 + f * (to[1] - 255))),
                static_cast<int>(std::lround(255 + f * (to[2] - 255))));
  return buf;
}

}  // namespace

std::string experts_svg(const std::vector<std::vector<double>>& loads, const ExpertPlacementShape& shape,
                        const ExpertPlacementRun& run) {
  const int layers = static_cast<int>(std::min(loads.size(), run.layers.size()));
  const int gpus = std::max(1, shape.gpus);
  const int left = 64, top = 70, gap = 40, panel_w = 520, right = 20;
  const double cell_w = static_cast<double>(panel_w) / gpus;
  const double cell_h = std::clamp(460.0 / std::max(1, layers), 1.0, 14.0);
  const double panel_h = cell_h * layers;
  const int width = left + 2 * panel_w + gap + right;
  const int height = static_cast<int>(std::ceil(top + panel_h + 70));

  std::vector<LayerPlacement> statics;
  double static_sum = 0, placed_sum = 0;
  for (int l = 0; l < layers; ++l) {
    statics.push_back(static_placement(loads[l], gpus));
    const double mean = run.total_load[l] / gpus;
    static_sum += statics.back().max_load / mean;
    placed_sum += run.layers[l].placement.max_load / mean;
  }

  std::string o = svg_open(width, height);
  o.reserve(static_cast<std::size_t>(layers) * gpus * 2 * 90 + 4096);
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "%d layers x %d experts on %d GPUs (%d node%s), %d redundant slots: mean imbalance (busiest GPU "
      "over mean) %.4f static, %.4f placed",
      layers, shape.experts, gpus, shape.nodes, shape.nodes == 1 ? "" : "s", shape.redundant,
      layers > 0 ? static_sum / layers : 1.0, layers > 0 ? placed_sum / layers : 1.0);
  std::string title = buf;
  std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"22\" font-size=\"14\">", left);
  o += buf + xml_escape(title) + "</text>\n";

  const auto panel = [&](int x0, const std::string& name, bool placed) {
    std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" font-size=\"12\">", x0, top - 24);
    o += buf + xml_escape(name) + "</text>\n";
    for (int l = 0; l < layers; ++l) {
      const std::vector<double>& gpu_load = placed ? run.layers[l].placement.gpu_load : statics[l].gpu_load;
      const double mean = run.total_load[l] / gpus;
      const double y = top + cell_h * l;
      const double max_load = placed ? run.layers[l].placement.max_load : statics[l].max_load;
      std::snprintf(buf, sizeof buf, "<g class=\"layer\"><title>layer %d: imbalance %.4f</title>\n", l,
                    max_load / mean);
      o += buf;
      for (int g = 0; g < gpus && g < static_cast<int>(gpu_load.size()); ++g) {
        std::snprintf(
            buf, sizeof buf, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
            x0 + cell_w * g, y, cell_w + 0.05, cell_h + 0.05, load_colour(gpu_load[g] / mean).c_str());
        o += buf;
      }
      o += "</g>\n";
    }
    std::snprintf(buf, sizeof buf,
                  "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%.2f\" fill=\"none\" stroke=\"#777\"/>\n",
                  x0, top, panel_w, panel_h);
    o += buf;
    if (shape.nodes > 1) {
      for (int n = 1; n < shape.nodes; ++n) {
        const double x = x0 + cell_w * (gpus / shape.nodes) * n;
        std::snprintf(buf, sizeof buf,
                      "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#333\" "
                      "stroke-width=\"0.8\"/>\n",
                      x, top, x, top + panel_h);
        o += buf;
      }
    }
    std::snprintf(buf, sizeof buf,
                  "<text x=\"%d\" y=\"%.2f\" font-size=\"10\">GPU 0</text>"
                  "<text x=\"%d\" y=\"%.2f\" font-size=\"10\" text-anchor=\"end\">GPU %d</text>\n",
                  x0, top + panel_h + 14, x0 + panel_w, top + panel_h + 14, gpus - 1);
    o += buf;
  };
  panel(left, "static: experts in id order, no replicas", false);
  panel(left + panel_w + gap, "placed by parplan (replicas included)", true);
  const int label_every = std::max(1, static_cast<int>(std::ceil(12.0 / cell_h)));
  for (int l = 0; l < layers; l += label_every) {
    std::snprintf(buf, sizeof buf, "<text x=\"6\" y=\"%.2f\" font-size=\"10\">layer %d</text>\n",
                  top + cell_h * l + std::min(10.0, cell_h * label_every), l);
    o += buf;
  }
  // Legend: the colour scale from 0 to 2 x the mean GPU load.
  const double ly = top + panel_h + 34;
  for (int k = 0; k <= 20; ++k) {
    std::snprintf(buf, sizeof buf, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>\n",
                  left + 10.0 * k, ly - 9, load_colour(k / 10.0).c_str());
    o += buf;
  }
  std::snprintf(buf, sizeof buf,
                "<text x=\"%d\" y=\"%.1f\">GPU load over the layer's mean: 0 (blue), 1 (white), 2 or more "
                "(red)%s</text>\n",
                left + 220, ly, shape.nodes > 1 ? "; dark lines: node boundaries" : "");
  o += buf;
  o += "</svg>\n";
  return o;
}

}  // namespace parplan
