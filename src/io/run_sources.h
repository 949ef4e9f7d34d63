// `--runs FILE_OR_DIR...`: run files (.yaml, .yml, .csv), Megatron-LM and
// torchtitan logs (.log, .txt), or directories holding them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cost/spec/cluster_spec.h"
#include "solvers/fit_run.h"

namespace parplan {

/// Throws InputError naming the path on a missing path, an unknown file
/// kind or any bad run. A log of a run that ran out of memory is left out
/// with a line in `notes` (without `notes`, refused).
/// Whether load_runs reads a file of this name from a directory (.yaml,
/// .yml, .csv, .log, .txt).
bool run_file_name(const std::filesystem::path& path);

std::vector<FitRun> load_runs(const std::vector<std::string>& paths, const ClusterSpec& cluster,
                              std::vector<std::string>* notes = nullptr);

}  // namespace parplan
