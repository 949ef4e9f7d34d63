// The rows of a sweep (src/plan/sweep.h) as a terminal table, CSV and JSON,
// and the atomic writing of output files.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/plan/sweep.h"
#include "src/report/output_files.h"

namespace parplan {

/// The CSV header, in column order (docs/sweep.md).
const std::vector<std::string>& sweep_columns();

/// One row per point: the best config, step time, throughput, MFU and peak
/// memory, or "no plan: <reason>"; then a one-line summary.
/// `time_s`: the wall-clock time of the sweep, omitted when nullopt (--no-timings).
std::string sweep_table(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes,
                        std::optional<double> time_s);

/// RFC 4180 CSV: the header of sweep_columns(), then one row per point.
std::string sweep_csv(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes);

/// { "sweep": { cluster, seq, precision, points, feasible, time_s }, "points": [ one object per point ] }
/// with the columns of sweep_columns() as keys (null where a point has no plan).
/// time_s is left out when nullopt (--no-timings).
nlohmann::ordered_json sweep_json(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes,
                                  std::optional<double> time_s);

}  // namespace parplan
