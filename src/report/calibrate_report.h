// parplan calibrate's output: per-run errors before and after the fit and
// left out, the constants that moved, as a table or JSON (docs/calibrate.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/tune/calibrate.h"

namespace parplan {

/// "lower" or "upper" when `value` sits on that bound of the constant's
/// physical range (within 1e-6 of the range), else null.
const char* bound_reached(const FittedConstant& constant, double value);
/// What the reader should not take from the fit at face value: constants the
/// fit left on a bound, as many runs as constants (one line each).
std::vector<std::string> calibrate_warnings(const std::vector<FitRun>& runs, const CalibrateOutcome& outcome);

std::string calibrate_table(const std::vector<FitRun>& runs, const CalibrateOutcome& outcome,
                            const std::string& objective, const std::string& out_path);
nlohmann::ordered_json calibrate_json(const std::vector<FitRun>& runs, const CalibrateOutcome& outcome,
                                      const std::string& objective, const std::string& out_path);

}  // namespace parplan
