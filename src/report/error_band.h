// The error a user should expect of a prediction on this profile: its
// calibration block's step-time error, or "uncalibrated".
#pragma once

#include <string>

#include "cost/spec/cluster_spec.h"

namespace parplan {

std::string error_band_text(const ClusterSpec& cluster);

}  // namespace parplan
