// Node-to-stage partitions for SkipPipe: the seeds (nodes in order, and
// nearest-neighbour chains from spread-out sources), exhaustive enumeration,
// and the swap local search. Internal to solvers/skip_paths.*.
#pragma once

#include <functional>
#include <vector>

#include "cost/skip_pipeline_sim.h"

namespace parplan {

using SkipPartition = std::vector<std::vector<int>>;

/// Stage s takes the next stage_sizes[s] node ids.
SkipPartition block_partition(const std::vector<int>& stage_sizes);

/// Sources spread out (each next one farthest from those chosen), then every
/// stage adds to each chain in turn the free node nearest to its last node.
SkipPartition chain_partition(const SkipNetwork& network, const std::vector<int>& stage_sizes);

/// Calls visit(partition) for every partition with these stage sizes (node
/// ids ascending within a stage); stops early when visit returns false.
void for_each_partition(int nodes, const std::vector<int>& stage_sizes,
                        const std::function<bool(const SkipPartition&)>& visit);

/// Number of partitions with these stage sizes (a multinomial), as a double.
double partition_count(const std::vector<int>& stage_sizes);

struct PartitionSearchResult {
  SkipPartition best;
  double makespan_s = 0;
  int evaluations = 0;
  bool time_limited = false;
};

/// Swap local search from `start`: each round scores a batch of node swaps
/// between stages (in parallel) and moves to the best if it is better. Stops
/// after `max_evaluations`, a few rounds without gain, or `deadline_s`
/// seconds of steady_clock since `start_clock_s`.
PartitionSearchResult local_search_partition(const SkipPartition& start,
                                             const std::function<double(const SkipPartition&)>& score,
                                             int max_evaluations, double start_clock_s, double deadline_s);

/// Seconds on std::chrono::steady_clock.
double steady_now_s();

}  // namespace parplan
