// The sweep as a self-contained SVG: two panels, MFU and step time against
// GPU count (or against model size when the sweep has one GPU count).
#pragma once

#include <string>
#include <vector>

#include "src/plan/sweep.h"

namespace parplan {

/// One line of the plot: the points of one model at one global batch (against
/// GPU count), or of one global batch over the models (against model size).
struct SweepPlotSeries {
  std::string label;
  /// Indices into the outcomes with a plan, by ascending x.
  std::vector<std::size_t> points;
  /// Points of the series without a plan (not drawn; counted in the legend).
  int infeasible = 0;
};

/// Whether the x axis is model size (parameters): the sweep has one GPU count.
bool sweep_plot_by_model_size(const SweepGrid& grid);

/// The lines of the plot, in legend order. Each series with at least one
/// point with a plan is one <polyline> in each panel.
std::vector<SweepPlotSeries> sweep_plot_series(const SweepGrid& grid,
                                               const std::vector<SweepOutcome>& outcomes);

/// The SVG document: starts with <svg, no scripts, no external resources;
/// axes with ticks and labels, a legend, a <title> tooltip on every point.
std::string sweep_svg(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes);

}  // namespace parplan
