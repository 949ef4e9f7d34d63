// SVG picture of a calibration (`parplan calibrate --svg`): each run's
// step-time error before the fit, after it and left out, against its
// measured step time, so a user sees at a glance which runs the fitted
// profile still misses and whether the misses follow the run's size.
#pragma once

#include <string>
#include <vector>

#include "src/tune/calibrate.h"

namespace parplan {

/// Relative step-time error (%) of every run against its measured step
/// time (log scale): before the fit (hollow grey), after it (blue, joined
/// to its before point) and left out of the fit (orange cross, where
/// computed); the band of the fitted profile's mean |error| around zero.
/// Each point carries a tooltip with the run's name and errors.
std::string calibrate_svg(const std::vector<FitRun>& runs, const CalibrateOutcome& outcome,
                          const std::string& profile_name);

}  // namespace parplan
