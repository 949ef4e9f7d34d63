// The rows of a sweep (src/plan/sweep.h) as a terminal table, CSV and JSON,
// and the atomic writing of output files.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/plan/sweep.h"

namespace parplan {

/// The CSV header, in column order (docs/sweep.md).
const std::vector<std::string>& sweep_columns();

/// One row per point: the best config, step time, throughput, MFU and peak
/// memory, or "no plan: <reason>"; then a one-line summary.
std::string sweep_table(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes, double time_s);

/// RFC 4180 CSV: the header of sweep_columns(), then one row per point.
std::string sweep_csv(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes);

/// { "sweep": { cluster, seq, precision, points, feasible, time_s }, "points": [ one object per point ] }
/// with the columns of sweep_columns() as keys (null where a point has no plan).
nlohmann::ordered_json sweep_json(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes,
                                  double time_s);

/// Throws InputError naming `flag` unless `path` can be created or replaced
/// (its directory exists and is writable, and it is not a directory).
void check_output_path(const std::filesystem::path& path, const std::string& flag);

/// Writes `text` to a temporary file next to `path`, then renames it over
/// `path`: a failure leaves no partial file. Throws InputError naming `flag`.
void write_file_atomically(const std::filesystem::path& path, const std::string& text,
                           const std::string& flag, bool executable = false);

}  // namespace parplan
