// Writes a calibrated hardware profile: the original profile's text with the
// fitted constants' values replaced in place (comments and layout kept) and
// a `calibration:` block appended. The profile key of each fitted constant
// and its unit live in one table here (profile_key_of).
#pragma once

#include <string>
#include <vector>

#include "cost/spec/cluster_spec.h"

namespace parplan {

/// Where a fitted constant lives in a profile file and in what unit.
struct ProfileKey {
  /// "device" or "tiers".
  std::string section;
  int tier = -1;
  std::string key;
  /// Profile value = SI value * scale.
  double scale = 1;
  /// A deprecated spelling the loader still reads (its line is replaced).
  std::string old_key;
};
/// Throws std::invalid_argument on a key that has no profile spelling.
ProfileKey profile_key_of(const std::string& fitted_key);

struct FittedValue {
  std::string key;  ///< cost/fitted_constants.h name
  double before = 0;
  double after = 0;
};

struct CalibrationBlock {
  std::string date;  ///< YYYY-MM-DD; empty: left out (--no-timings)
  std::string objective;
  std::vector<std::string> sources;
  std::vector<std::string> runs;
  double mean_error = 0, max_error = 0;
  /// Leave-one-out (NaN when not computed).
  double cv_mean_error = 0, cv_max_error = 0;
};

/// The new profile's text: `original` with `values` replaced (or added) and
/// the calibration block. `name` replaces the profile's name when not empty.
std::string calibrated_profile_text(const std::string& original, const std::vector<FittedValue>& values,
                                    const CalibrationBlock& block, const std::string& name);

}  // namespace parplan
