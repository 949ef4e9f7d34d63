// Reads a `parplan skip-paths` problem (YAML or JSON): nodes, stages, path
// length, memory, task times and the network, explicit or from parplan's
// cost model. Every bad field throws InputError naming it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "solvers/skip_paths.h"

namespace parplan {

struct SkipProblemInput {
  SkipProblem problem;
  /// The file gave `stages: S` instead of `stage_sizes` (parplan chose them).
  bool stage_sizes_chosen = false;
  /// With model and cluster: why a node cannot hold its stage (memory);
  /// empty when it can. An infeasible job, not bad input (exit 1).
  std::string infeasible;
};

SkipProblemInput load_skip_problem(const std::string& path);
/// `where` names the document in error messages.
SkipProblemInput parse_skip_problem(const YAML::Node& root, const std::string& where);

}  // namespace parplan
