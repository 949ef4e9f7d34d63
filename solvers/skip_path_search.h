// Paths and release times over one fixed partition: greedy insertion scored
// by the event simulation, then improvement passes. Internal to the SkipPipe
// solver (solvers/skip_paths.*).
#pragma once

#include <limits>
#include <vector>

#include "cost/skip_pipeline_sim.h"
#include "solvers/skip_candidates.h"
#include "solvers/skip_paths.h"

namespace parplan {

struct PathSearchInput {
  const SkipNetwork* network = nullptr;
  std::vector<std::vector<int>> partition;
  /// Candidates per source, in the order of partition[0].
  std::vector<std::vector<SkipCandidate>> candidates;
  int micro_batches_per_source = 1;
  int path_length = 2;
  /// Per stage: micro-batches it may still take (a large number = unbounded).
  std::vector<int> capacity;
};

struct PathSearchEffort {
  int improve_passes = 0;
  bool release_times = false;
  /// steady_now_s() past which the search stops improving and gives each
  /// micro-batch still to place the first path that fits, unscored (a valid
  /// schedule either way; SkipSchedule::time_limited says it stopped).
  double deadline_s = std::numeric_limits<double>::infinity();
};

/// Micro-batch m has source partition[0][m % sources] (k-major order). Never
/// fails: a micro-batch that fits nowhere without a deadlock is released when
/// the ones before it have finished.
SkipSchedule search_paths(const PathSearchInput& input, const PathSearchEffort& effort, SkipSimulator& sim);

}  // namespace parplan
