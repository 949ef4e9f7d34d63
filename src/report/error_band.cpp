#include "src/report/error_band.h"

#include <cstdio>

namespace parplan {

std::string error_band_text(const ClusterSpec& cluster) {
  const ProfileCalibration& c = cluster.calibration;
  if (!c.calibrated()) return "uncalibrated (profile " + cluster.name + " has no calibration: block)";
  char buf[200];
  if (c.cv_mean_step_error >= 0)
    std::snprintf(buf, sizeof buf, "+-%.1f%% mean, +-%.1f%% max on %d calibration runs (+-%.1f%% left out)",
                  100 * c.mean_step_error, 100 * c.max_step_error, c.runs, 100 * c.cv_mean_step_error);
  else
    std::snprintf(buf, sizeof buf, "+-%.1f%% mean, +-%.1f%% max on %d calibration runs",
                  100 * c.mean_step_error, 100 * c.max_step_error, c.runs);
  return buf;
}

}  // namespace parplan
