#include "src/report/error_band.h"

#include <cstdio>

namespace parplan {

std::string error_band_text(const ClusterSpec& cluster) {
  const ProfileCalibration& c = cluster.calibration;
  char buf[200];
  if (!c.calibrated()) {
    std::string text = "uncalibrated (profile " + cluster.name + " has no calibration: block)";
    // Without runs to fit, the uncertainty of a peak that is not a datasheet
    // figure (assumed, or derived as a power-limited clock) is the least
    // error a user must expect: every compute time scales with it.
    if (cluster.device.peak_uncertainty > 0) {
      std::snprintf(buf, sizeof buf, "; its peak is not a datasheet figure, +-%.1f%%",
                    100 * cluster.device.peak_uncertainty);
      text += buf;
    }
    return text;
  }
  if (c.cv_mean_step_error >= 0)
    std::snprintf(buf, sizeof buf, "+-%.1f%% mean, +-%.1f%% max on %d calibration runs (+-%.1f%% left out)",
                  100 * c.mean_step_error, 100 * c.max_step_error, c.runs, 100 * c.cv_mean_step_error);
  else
    std::snprintf(buf, sizeof buf, "+-%.1f%% mean, +-%.1f%% max on %d calibration runs",
                  100 * c.mean_step_error, 100 * c.max_step_error, c.runs);
  std::string text = buf;
  // The runs were fitted at the profile's own limit; another one (plan
  // --power-limit) re-clocks the compute by the measured curve.
  if (cluster.device.power_clock_ratio < 1 && cluster.device.peak_uncertainty > 0) {
    std::snprintf(buf, sizeof buf, "; compute re-clocked to %.0f W, +-%.1f%% more",
                  cluster.device.power_limit_w, 100 * cluster.device.peak_uncertainty);
    text += buf;
  }
  return text;
}

}  // namespace parplan
