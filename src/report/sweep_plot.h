// The sweep as a self-contained SVG: small multiples, one row of two panels
// (MFU, step time) per model against GPU count, one line per global batch on
// a sequential colour scale; against model size when the sweep has one GPU
// count.
#pragma once

#include <string>
#include <vector>

#include "src/plan/sweep.h"

namespace parplan {

/// One line of the plot: the points of one model at one global batch (against
/// GPU count), or of one global batch over the models (against model size).
struct SweepPlotSeries {
  std::string label;
  /// The row of panels it is drawn in (the model; 0 against model size).
  std::size_t row = 0;
  /// Index into SweepGrid::gbs: its colour.
  std::size_t gbs_index = 0;
  /// Indices into the outcomes with a plan, by ascending x.
  std::vector<std::size_t> points;
  /// Points of the series without a plan (not drawn; counted in the row's caption).
  int infeasible = 0;
};

/// Whether the x axis is model size (parameters): the sweep has one GPU count.
bool sweep_plot_by_model_size(const SweepGrid& grid);

/// The lines of the plot, row by row, batch ascending within a row. Each
/// series with at least one point with a plan is one <polyline> in each of
/// its row's two panels.
std::vector<SweepPlotSeries> sweep_plot_series(const SweepGrid& grid,
                                               const std::vector<SweepOutcome>& outcomes);

/// The SVG document: starts with <svg, no scripts, no external resources;
/// axes with ticks and labels, one legend entry per global batch, a caption
/// per row counting the points without a plan, a <title> tooltip on every
/// point.
std::string sweep_svg(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes);

}  // namespace parplan
