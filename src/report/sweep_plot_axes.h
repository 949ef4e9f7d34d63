// Axes, number labels and the sequential colour scale of the
// sweep plot (src/report/sweep_plot.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace parplan::sweep_plot_detail {

struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> ticks;
  std::function<std::string(double)> label;

  /// 0 at lo, 1 at hi.
  double fraction(double v) const;
};

/// A log axis snapped outward to 1-2-5 values, ticks on them (decades only when crowded).
Axis log_axis(double lo, double hi, std::function<std::string(double)> label);
/// A linear axis from 0 to a round value at or above hi, with about five ticks.
Axis linear_axis(double hi, std::function<std::string(double)> label);
/// The GPU-count axis: log2, a tick at every swept count (powers of two when crowded).
Axis gpus_axis(const std::vector<int>& gpus);

/// "%.1f" (SVG coordinates).
std::string num(double value);
/// "%g" (tick labels).
std::string short_number(double value);
/// 1.2B, 175B, 1T.
std::string human_params(double params);

/// Colour i of n on a sequential scale (viridis, dark purple to green, its
/// pale-yellow end left out so thin lines stay visible on white): ordered
/// values such as batch sizes read as an ordered scale, at any count.
std::string sequential_color(std::size_t i, std::size_t n);

}  // namespace parplan::sweep_plot_detail
