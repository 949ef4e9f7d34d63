// parplan calibrate's output: per-run errors before and after the fit and
// left out, the constants that moved, as a table or JSON (docs/calibrate.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/tune/calibrate.h"

namespace parplan {

std::string calibrate_table(const std::vector<FitRun>& runs, const CalibrateOutcome& outcome,
                            const std::string& objective, const std::string& out_path);
nlohmann::ordered_json calibrate_json(const std::vector<FitRun>& runs, const CalibrateOutcome& outcome,
                                      const std::string& objective, const std::string& out_path);

}  // namespace parplan
