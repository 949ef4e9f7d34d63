// Candidate paths for every source at once, spread over the nodes of each
// stage: on large networks the shortest round trips of all sources run
// through the same few nodes, which then queue every micro-batch. Internal
// to the SkipPipe solver (solvers/skip_paths.*).
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "cost/skip_pipeline_sim.h"
#include "solvers/skip_candidates.h"

namespace parplan {

/// The solver takes spread candidates when a stage after stage 0 has more
/// nodes than this (the published geo examples have at most 5, enumerated).
inline constexpr std::size_t kSpreadStageNodes = 8;

/// Each stage is searched over its this many nodes nearest to the source
/// (with the penalty): a far node is rarely worth it while a near one is free.
inline constexpr int kSpreadNodesPerStage = 12;

/// `keep` paths per source of partition[0] (same order), chosen in rounds:
/// each round gives every source in turn the path of least round trip plus
/// a penalty per node for the micro-batches earlier picks already send
/// through it (micro_batches_per_source spread over a source's first picks).
/// full_pipeline: every stage in order; else `path_length` stages under the
/// rules. Past `deadline_s` (steady_now_s()) the rounds stop: every source
/// keeps at least one path.
std::vector<std::vector<SkipCandidate>> spread_skip_candidates(
    const SkipNetwork& network, const std::vector<std::vector<int>>& partition, int path_length,
    bool full_pipeline, int micro_batches_per_source, int keep,
    double deadline_s = std::numeric_limits<double>::infinity());

/// A rule-abiding path from `source` of least round trip over every node of
/// the partition (a shortest path over the stage sequences, exact; far
/// cheaper than enumerating paths on hundreds of nodes per stage). Empty
/// when there is none or `deadline_s` (steady_now_s()) passed first.
SkipCandidate skip_shortest_path(const SkipNetwork& network, const std::vector<std::vector<int>>& partition,
                                 int source, int path_length, double deadline_s);

}  // namespace parplan
