#include "src/report/sweep_plot_axes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace parplan::sweep_plot_detail {

double Axis::fraction(double v) const {
  if (log) return (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
  return (v - lo) / (hi - lo);
}

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

namespace {
/// The 1-2-5 values (..., 0.1, 0.2, 0.5, 1, 2, 5, 10, ...) around [lo, hi].
std::vector<double> one_two_five(double lo, double hi) {
  std::vector<double> out;
  const int first = static_cast<int>(std::floor(std::log10(lo))) - 1;
  const int last = static_cast<int>(std::ceil(std::log10(hi))) + 1;
  for (int e = first; e <= last; ++e)
    for (double m : {1.0, 2.0, 5.0}) out.push_back(m * std::pow(10.0, e));
  return out;
}
}  // namespace

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
    // No two powers of two inside (600 to 1000 GPUs): the 1-2-5 values,
    // else the first and last count.
    if (axis.ticks.size() < 2) {
      axis.ticks.clear();
      for (double v : one_two_five(axis.lo, axis.hi))
        if (v >= axis.lo * (1 - 1e-9) && v <= axis.hi * (1 + 1e-9)) axis.ticks.push_back(v);
    }
    if (axis.ticks.size() < 2) axis.ticks = {axis.lo, axis.hi};
    while (axis.ticks.size() > 10) {
      std::vector<double> fewer;
      for (std::size_t i = 0; i < axis.ticks.size(); i += 2) fewer.push_back(axis.ticks[i]);
      axis.ticks = fewer;
    }
  }
  return axis;
}

std::string sequential_color(std::size_t i, std::size_t n) {
  // viridis (matplotlib's default colormap, van der Walt and Smith 2015) at
  // 0, 0.25, 0.5, 0.75 and 0.9; linear in RGB between them.
  static constexpr double kStops[][3] = {
      {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {173, 220, 48}};
  static constexpr double kAt[] = {0.0, 0.25, 0.5, 0.75, 0.9};
  const double t = n <= 1 ? 0.0 : 0.9 * static_cast<double>(i) / static_cast<double>(n - 1);
  int k = 0;
  while (k < 3 && t > kAt[k + 1]) ++k;
  const double f = std::clamp((t - kAt[k]) / (kAt[k + 1] - kAt[k]), 0.0, 1.0);
  char buffer[8];
  int rgb[3];
  for (int c = 0; c < 3; ++c)
    rgb[c] = static_cast<int>(std::lround(kStops[k][c] + f * (kStops[k + 1][c] - kStops[k][c])));
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return buffer;
}

}  // namespace parplan::sweep_plot_detail
