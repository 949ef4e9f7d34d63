// Expert placement for one MoE layer: how many replicas each logical expert
// gets and which GPU slot holds each replica, minimising the busiest GPU.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "solvers/certificate.h"
#include "solvers/solve.h"

namespace parplan {

/// The expert-parallel group: P = experts + redundant physical slots, spread
/// evenly over `gpus` (S = P / gpus each); GPUs g*G/N ... (g+1)*G/N-1 form
/// node g. `groups` > 0 keeps each of the `groups` contiguous blocks of
/// experts (and all their replicas) inside one node, as EPLB's hierarchical
/// policy does for group-limited routing.
struct ExpertPlacementShape {
  int experts = 0;
  int gpus = 0;
  int nodes = 1;
  int groups = 0;
  int redundant = 0;

  int physical() const { return experts + redundant; }
  int slots_per_gpu() const { return gpus > 0 ? physical() / gpus : 0; }
  int gpus_per_node() const { return nodes > 0 ? gpus / nodes : 0; }
};

/// Physical slots (experts + redundant) of one layer: beyond them the
/// per-layer tables would not fit in memory. --redundant is read up to it.
inline constexpr long long kMaxPlacementSlots = 1 << 24;

/// Empty when the shape admits a placement; otherwise one sentence naming
/// the flag (--gpus, --nodes, --groups, --redundant) and the rule it breaks.
std::string validate_shape(const ExpertPlacementShape& shape);

/// One layer's placement. Physical expert p = g*S + s is slot s of GPU g, so
/// physical_to_logical is EPLB's phy2log row and replicas its logcnt row.
struct LayerPlacement {
  std::vector<int> physical_to_logical;
  std::vector<int> replicas;
  /// Tokens each GPU computes: the sum of load / replicas over its slots.
  std::vector<double> gpu_load;
  double max_load = 0;
};

/// Builds the placement from the experts on each GPU (gpu_experts[g] has S
/// logical ids); replicas and loads are derived.
LayerPlacement make_placement(const std::vector<double>& loads,
                              const std::vector<std::vector<int>>& gpu_experts);

/// Empty when `placement` obeys every rule of `shape` (slot count, every
/// expert at least once, replicas of one expert on distinct GPUs, groups
/// inside one node, loads consistent); otherwise what is wrong.
std::string check_placement(const std::vector<double>& loads, const ExpertPlacementShape& shape,
                            const LayerPlacement& placement);

/// max GPU load / (total / gpus); 1 is perfect balance.
double imbalance(double max_load, double total_load, int gpus);
/// max over nodes of the node's load / (total / nodes).
double node_imbalance(const std::vector<double>& gpu_load, int nodes);

struct PlacementOptions {
  /// Swap and replica-transfer improvement after the greedy start.
  bool improve = true;
  /// Run the MILP on layers left above the lower bound.
  bool use_milp = true;
  SolverBackend backend = SolverBackend::kCbc;
  /// Limit of one MILP solve.
  double solver_time_limit_s = 1;
  /// No MILP starts after this instant; one that runs stops by it.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  /// The whole run's deadline for the count-vector bound, the one part of a
  /// layer's lower bound that grows with the layer (thousands of count
  /// vectors): after it, or when it passes mid-way, a layer keeps its
  /// cheaper bounds (still valid; the stated gap only wider), so thousands of
  /// layers end near --time-limit.
  std::chrono::steady_clock::time_point bound_deadline = std::chrono::steady_clock::time_point::max();
  /// A (sub)problem whose MILP has at most this many binaries (experts x
  /// possible counts x GPUs) is solved whole; larger ones by windows of GPUs
  /// around the busiest GPU.
  long full_milp_max_binaries = 4000;
  /// GPUs in one improvement window (the busiest and the lightest others).
  int window_gpus = 6;
};

struct LayerResult {
  LayerPlacement placement;
  /// Busiest GPU after the heuristic alone (greedy start + improvement).
  double heuristic_max_load = 0;
  /// Busiest GPU of the greedy start (replicate + balanced packing).
  double greedy_max_load = 0;
  /// Proven lower bound on the busiest GPU of any valid placement.
  double lower_bound_load = 0;
  /// objective = busiest GPU (tokens), best_bound = lower bound.
  SolverCertificate certificate;
  bool milp_improved = false;
  double node_imbalance = 1;
};

/// The heuristic (greedy start, then improvement if options.improve) with a
/// certificate against the combinatorial lower bound.
LayerResult place_layer_heuristic(const std::vector<double>& loads, const ExpertPlacementShape& shape,
                                  const PlacementOptions& options);

/// MILP improvement of a heuristic result (options.backend, bounded by the
/// heuristic's busiest GPU); keeps the heuristic placement when the MILP
/// finds nothing better by the deadline. Updates the certificate.
void improve_layer_with_milp(const std::vector<double>& loads, const ExpertPlacementShape& shape,
                             const PlacementOptions& options, LayerResult& result);

/// Baselines: experts in id order, contiguous, no redundancy (the first
/// E mod G GPUs take one more), and the greedy start alone.
LayerPlacement static_placement(const std::vector<double>& loads, int gpus);
LayerPlacement greedy_layer_placement(const std::vector<double>& loads, const ExpertPlacementShape& shape);

}  // namespace parplan
