// A lower bound on the busiest GPU of an expert placement that looks at
// whole replica count vectors: every slot of every GPU holds one replica, so
// for a given count vector the replicas' loads must be dealt S to a GPU,
// and how evenly that can be done bounds the busiest GPU; the least over the
// count vectors bounds every placement.
#pragma once

#include <chrono>
#include <vector>

namespace parplan {

/// For every count vector r (1 <= r_e <= cap, sum_e r_e = experts +
/// redundant = gpus x S), the replica loads x_1 >= ... >= x_P (loads[e] /
/// r_e, r_e times each), and any placement with those counts has a GPU of
/// load at least:
///  - total / gpus;
///  - pigeonhole: among the (k - 1) gpus + 1 largest replicas one GPU holds
///    k (k = 1..S); with them it holds S - k others, at least the S - k
///    smallest of the rest;
///  - S = 2: x_i + x_{P+1-i} for i <= gpus (if every pair summed to less,
///    no two of the i largest could share a GPU, and each would need a
///    partner among the i - 1 replicas after position P + 1 - i);
///  - S >= 3, i <= gpus: two of the i largest share a GPU (x_{i-1} + x_i
///    and the S - 2 smallest others), or they sit on i GPUs whose i (S - 1)
///    other replicas are at least the smallest i (S - 1) after position i,
///    one GPU at least x_i plus their mean.
/// The bound ignores that replicas of one expert go to distinct GPUs (a
/// relaxation, so it stays valid). Returns 0 (no bound) when there are more
/// than `max_vectors` count vectors, or the layer is too large for them
/// (vectors x (replicas + slots per GPU squared) above 1e8).
/// `deadline`: past it the enumeration stops and 0 is returned (the least
/// over part of the vectors could exceed the optimum).
double replica_count_bound(
    const std::vector<double>& loads, int gpus, int redundant, int cap, long max_vectors = 20000,
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

/// With two slots per GPU (experts + redundant = 2 gpus), a placement from
/// the same count vectors: each vector's replicas dealt largest beside
/// smallest (the best dealing when replicas of one expert may share a GPU),
/// a GPU given two replicas of one expert swapping its smaller one with
/// another GPU's (the swap that keeps the busier of the two lowest); the
/// best over the vectors. gpu_experts[g] holds GPU g's two experts; empty
/// when the slots are not two per GPU or there are too many vectors.
std::vector<std::vector<int>> paired_placement(const std::vector<double>& loads, int gpus, int redundant,
                                               int cap, long max_vectors = 20000);

/// Branch and bound over the same count vectors, for layers small enough:
/// each vector whose bound (as replica_count_bound) is below the best so far
/// has its replicas dealt largest first onto GPUs with a free slot and no
/// replica of that expert yet, a branch cut where a GPU's load plus the
/// smallest replicas its free slots must still take reaches the best. Empty
/// GPUs are interchangeable (one is tried). `incumbent`: the busiest
/// GPU of a placement already in hand (the search looks below it).
struct ExactDealing {
  /// gpu_experts[g]: GPU g's experts; empty when nothing below the
  /// incumbent was found.
  std::vector<std::vector<int>> gpu_experts;
  double max_load = 0;
  /// Every vector was searched to the end or bounded out: no placement is
  /// below min(max_load, incumbent).
  bool proven = false;
};
ExactDealing exact_dealing(const std::vector<double>& loads, int gpus, int redundant, int cap,
                           double incumbent, long max_vectors = 20000, long max_nodes = 200000);

}  // namespace parplan
