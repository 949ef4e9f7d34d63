// Measured runs from a YAML or CSV file (docs/calibrate.md, "Run files"):
// model, GPUs, batch, sequence, precision, the parallel config as in job
// files, one measured figure, optionally the peak memory.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "cost/spec/cluster_spec.h"
#include "solvers/fit_run.h"

namespace parplan {

/// A YAML file with `runs:` (and optional inline `models:`). Throws
/// InputError naming the file, the run and the field.
std::vector<FitRun> read_run_yaml(const std::string& path, const ClusterSpec& cluster);
/// A CSV file with a header row (docs/calibrate.md lists the columns).
std::vector<FitRun> read_run_csv(const std::string& path, const ClusterSpec& cluster);

/// One run from a YAML mapping; `where` names it in errors; `models` holds
/// inline model definitions (may be null).
FitRun parse_run_node(const YAML::Node& node, const YAML::Node& models, const ClusterSpec& cluster,
                      const std::string& where, const std::string& default_source);

/// Throws InputError (naming `where`) when the cost model cannot express
/// the run's config on this cluster.
void check_run_expressible(const FitRun& run, const ClusterSpec& cluster, const std::string& where);

}  // namespace parplan
