// `--runs FILE_OR_DIR...`: run files (.yaml, .yml, .csv), Megatron-LM and
// torchtitan logs (.log, .txt), or directories holding them.
#pragma once

#include <string>
#include <vector>

#include "cost/spec/cluster_spec.h"
#include "solvers/fit_run.h"

namespace parplan {

/// Throws InputError naming the path on a missing path, an unknown file
/// kind or any bad run.
std::vector<FitRun> load_runs(const std::vector<std::string>& paths, const ClusterSpec& cluster);

}  // namespace parplan
