// Ticks of a time axis (pipeline timelines, skip-paths schedules): round
// steps at their true positions, labelled with the decimals the step needs.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace parplan {

/// A round tick step (1, 2 or 5 times a power of ten) for about 10 ticks.
inline double tick_step_s(double span_s) {
  const double raw = span_s / 10;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double f : {1.0, 2.0, 5.0})
    if (raw <= f * power) return f * power;
  return 10 * power;
}

/// A tick's label, with the decimals its step needs.
inline std::string tick_text(double t, double step_s) {
  char buf[32];
  if (step_s >= 1)
    std::snprintf(buf, sizeof buf, "%.0f s", t);
  else if (step_s >= 0.1)
    std::snprintf(buf, sizeof buf, "%.1f s", t);
  else
    std::snprintf(buf, sizeof buf, "%.0f ms", 1e3 * t);
  return buf;
}

}  // namespace parplan
