// The fast expert-placement heuristic on one flat problem (a set of experts
// over a set of identical GPUs): greedy replication, balanced packing with
// distinct replicas per GPU, then swap and replica-transfer improvement.
#pragma once

#include <chrono>
#include <vector>

namespace parplan {

using Deadline = std::chrono::steady_clock::time_point;

/// Local view: expert i has `loads[i]` tokens, GPUs hold `slots` replicas
/// each, gpus * slots >= loads.size() and <= loads.size() * gpus.
struct FlatProblem {
  std::vector<double> loads;
  int gpus = 0;
  int slots = 0;
};

/// gpu_experts[g] lists the local expert of each slot of GPU g.
struct FlatPlacement {
  std::vector<int> replicas;
  std::vector<std::vector<int>> gpu_experts;
};

/// Replica counts minimising the largest loads[e] / count[e] with each
/// count in [1, cap] and `extra` replicas beyond one each: the extra ones one
/// at a time to the expert with the largest per-replica load (optimal for
/// this bottleneck objective; the lower expert id wins ties).
std::vector<int> replicate(const std::vector<double>& loads, int extra, int cap);

/// Replica counts minimising the largest load / count (each count in
/// [1, gpus], summing to gpus * slots): one replica each, then the extra ones
/// one at a time to the expert with the largest per-replica load.
std::vector<int> greedy_replicas(const FlatProblem& problem);

/// Replicas sorted by per-replica load, heaviest first, each onto the
/// lightest GPU with a free slot that does not hold that expert yet.
FlatPlacement pack_replicas(const FlatProblem& problem, const std::vector<int>& replicas);

/// Improves in place until no move helps the busiest GPU: swaps of two
/// replicas between the busiest GPU and another, and transfers of a replica
/// from one expert to another (changing both experts' counts); stops at
/// the lower bound or at `deadline` with the best placement so far.
void improve_placement(const FlatProblem& problem, FlatPlacement& placement,
                       Deadline deadline = Deadline::max());

std::vector<double> flat_gpu_loads(const FlatProblem& problem, const FlatPlacement& placement);
double flat_max_load(const FlatProblem& problem, const FlatPlacement& placement);

/// Valid lower bound on the busiest GPU of every placement: max(total /
/// gpus, the smallest achievable largest per-replica load). It is the optimum
/// of the relaxation in which a GPU may hold any fraction of any replica.
double flat_lower_bound(const FlatProblem& problem);

}  // namespace parplan
