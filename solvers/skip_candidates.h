// Candidate paths of one source: the node paths the convergence rules allow
// over a partition, shortest uncontended round trip first. Internal to the
// SkipPipe solver (solvers/skip_paths.*).
#pragma once

#include <limits>
#include <vector>

#include "cost/skip_pipeline_sim.h"

namespace parplan {

struct SkipCandidate {
  std::vector<int> path;    ///< nodes, forward order, source first
  std::vector<int> stages;  ///< stage of each node
  double round_trip_s = 0;  ///< forward, loss, backward and transfers alone on an idle network
};

/// Seconds from the source's forward start to its last backward's end when
/// the micro-batch meets no other.
double skip_round_trip_s(const SkipNetwork& network, const std::vector<int>& path);

/// `keep` shortest round trips from `source` (0 = all of them: only for
/// problems small enough to enumerate, see skip_candidate_count) over
/// `partition` (node ids per stage). full_pipeline: only every stage in
/// order (path length = stages); else `path_length` stages under the rules.
/// Past `deadline_s` (steady_now_s()) the enumeration stops with the paths
/// found so far, possibly none, and sets `*stopped` when given.
std::vector<SkipCandidate> skip_candidates(const SkipNetwork& network,
                                           const std::vector<std::vector<int>>& partition, int source,
                                           int path_length, bool full_pipeline, int keep,
                                           double deadline_s = std::numeric_limits<double>::infinity(),
                                           bool* stopped = nullptr);

/// Number of rule-abiding paths from `source`, counted without storing them
/// and stopping at `limit` (the result is then `limit`): there may be
/// billions.
long long skip_candidate_count(const SkipNetwork& network, const std::vector<std::vector<int>>& partition,
                               int source, int path_length, bool full_pipeline, long long limit);

}  // namespace parplan
