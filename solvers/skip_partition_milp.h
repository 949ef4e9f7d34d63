// Node-to-stage partition for SkipPipe as a MILP on CBC or GLPK: every node of
// stage s < S-1 is linked to a node of stage s+1 (each of those takes at most
// ceil(n_s / n_{s+1}) links) and the sum of the links' round trips is least,
// so that each stage's nodes sit close to the next stage's.
#pragma once

#include <vector>

#include "cost/skip_pipeline_sim.h"
#include "solvers/certificate.h"
#include "solvers/skip_partition_search.h"
#include "solvers/solve.h"

namespace parplan {

struct SkipPartitionMilpResult {
  /// The MILP's partition, or the warm start when the solve found nothing
  /// better within its limit (then certificate.status says why).
  SkipPartition partition;
  SolverCertificate certificate;
  /// Link cost (seconds) of the warm start, the solve's cutoff.
  double warm_start_cost_s = 0;
  /// Link cost (seconds) of `partition`.
  double link_cost_s = 0;
};

/// Round trip of a link: activations from i to j plus gradients back.
inline double skip_link_round_trip_s(const SkipNetwork& net, int i, int j) {
  return net.transfer(i, j) + net.transfer(j, i);
}

/// Link cost of a fixed partition: the same model with the stage of every
/// node fixed (a transportation LP per pair of neighbouring stages).
double skip_partition_link_cost(const SkipNetwork& network, const SkipPartition& partition,
                                SolverBackend backend);

/// Solves the partition MILP; `warm_start` (a partition with these stage
/// sizes, e.g. chain_partition's) is the incumbent: the answer is the MILP's
/// partition only when its link cost is lower. Links go to each node's 8
/// nearest nodes and between the warm start's neighbouring stages (every
/// link when there are at most 9 nodes).
SkipPartitionMilpResult solve_skip_partition_milp(const SkipNetwork& network,
                                                  const std::vector<int>& stage_sizes,
                                                  const SkipPartition& warm_start, SolverBackend backend,
                                                  const SolveOptions& options);

}  // namespace parplan
