// One layer: groups onto nodes, the heuristic per block of GPUs, GPUs onto
// nodes for node balance, the MILP improvement and the layer's certificate.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "solvers/expert_placement.h"
#include "solvers/expert_placement_count_bound.h"
#include "solvers/expert_placement_heuristic.h"
#include "solvers/expert_placement_milp.h"

namespace parplan {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kOptimalGap = 1e-6;
constexpr double kImprovement = 1e-9;
/// Restarts only for few experts (at most 16 x 15 restarts, a few ms).
constexpr int kMaxRestartExperts = 16;
/// Count vectors the count-vector bound enumerates at most (its default).
constexpr long kMaxBoundVectors = 20000;

/// GPUs [gpu_begin, gpu_begin + gpus) and the experts that live only there.
struct Block {
  int gpu_begin = 0;
  int gpus = 0;
  std::vector<int> experts;
};

/// Items of `weight` into `bins` bins of equal cardinality: heaviest first
/// onto the lightest bin with room, then pairwise swaps that lower the
/// heaviest bin. Returns the bin of each item.
std::vector<int> balanced_bins(const std::vector<double>& weight, int bins) {
  const int n = static_cast<int>(weight.size());
  const int per = n / bins;
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return weight[a] > weight[b]; });
  std::vector<int> bin(n, -1);
  std::vector<double> sum(bins, 0);
  std::vector<int> size(bins, 0);
  for (int item : order) {
    int best = -1;
    for (int b = 0; b < bins; ++b) {
      if (size[b] < per && (best < 0 || sum[b] < sum[best])) best = b;
    }
    bin[item] = best;
    sum[best] += weight[item];
    ++size[best];
  }
  for (int round = 0; round < 10 * n + 10; ++round) {
    const int top = static_cast<int>(std::max_element(sum.begin(), sum.end()) - sum.begin());
    double best_max = sum[top] * (1 - kImprovement);
    int swap_a = -1, swap_b = -1;
    for (int a = 0; a < n; ++a) {
      if (bin[a] != top) continue;
      for (int b = 0; b < n; ++b) {
        if (bin[b] == top || weight[b] >= weight[a]) continue;
        const double d = weight[a] - weight[b];
        const double worst = std::max(sum[top] - d, sum[bin[b]] + d);
        if (worst < best_max) best_max = worst, swap_a = a, swap_b = b;
      }
    }
    if (swap_a < 0) break;
    const double d = weight[swap_a] - weight[swap_b];
    sum[top] -= d;
    sum[bin[swap_b]] += d;
    std::swap(bin[swap_a], bin[swap_b]);
  }
  return bin;
}

std::vector<Block> blocks_of(const std::vector<double>& loads, const ExpertPlacementShape& shape) {
  if (shape.groups == 0) {
    Block all{0, shape.gpus, std::vector<int>(shape.experts)};
    std::iota(all.experts.begin(), all.experts.end(), 0);
    return {all};
  }
  const int group_size = shape.experts / shape.groups;
  std::vector<double> group_load(shape.groups, 0);
  for (int e = 0; e < shape.experts; ++e) group_load[e / group_size] += loads[e];
  const std::vector<int> node = balanced_bins(group_load, shape.nodes);
  std::vector<Block> blocks(shape.nodes);
  for (int n = 0; n < shape.nodes; ++n)
    blocks[n] = Block{n * shape.gpus_per_node(), shape.gpus_per_node(), {}};
  for (int e = 0; e < shape.experts; ++e) blocks[node[e / group_size]].experts.push_back(e);
  return blocks;
}

FlatProblem flat_of(const std::vector<double>& loads, const Block& block, int slots) {
  FlatProblem p;
  for (int e : block.experts) p.loads.push_back(loads[e]);
  p.gpus = block.gpus;
  p.slots = slots;
  return p;
}

void write_block(const Block& block, const FlatPlacement& flat, std::vector<std::vector<int>>& gpu_experts) {
  for (int g = 0; g < block.gpus; ++g) {
    std::vector<int>& out = gpu_experts[block.gpu_begin + g];
    out.clear();
    for (int local : flat.gpu_experts[g]) out.push_back(block.experts[local]);
  }
}

/// Without groups the GPUs are interchangeable: order them so that the
/// nodes' summed loads are balanced (the busiest GPU is unchanged).
void balance_nodes(const std::vector<double>& loads, int nodes, std::vector<std::vector<int>>& gpu_experts) {
  if (nodes <= 1) return;
  const LayerPlacement current = make_placement(loads, gpu_experts);
  const std::vector<int> node = balanced_bins(current.gpu_load, nodes);
  const int per = static_cast<int>(gpu_experts.size()) / nodes;
  std::vector<std::vector<int>> ordered(gpu_experts.size());
  std::vector<int> filled(nodes, 0);
  for (size_t g = 0; g < gpu_experts.size(); ++g) {
    ordered[node[g] * per + filled[node[g]]++] = gpu_experts[g];
  }
  gpu_experts = std::move(ordered);
}

double layer_lower_bound(const std::vector<double>& loads, const ExpertPlacementShape& shape,
                         Deadline deadline) {
  const double total = std::accumulate(loads.begin(), loads.end(), 0.0);
  // With groups a replica stays in its node, so an expert has at most
  // gpus_per_node replicas and a group's load lands on one node's GPUs.
  const int cap = shape.groups > 0 ? shape.gpus_per_node() : shape.gpus;
  const std::vector<int> count = replicate(loads, shape.redundant, cap);
  double bound = total / shape.gpus;
  for (size_t e = 0; e < loads.size(); ++e) bound = std::max(bound, loads[e] / count[e]);
  // Whole count vectors dealt S replicas to a GPU (small layers only, and
  // only while the run has time: past its deadline the bounds here are it).
  if (Clock::now() < deadline)
    bound = std::max(
        bound, replica_count_bound(loads, shape.gpus, shape.redundant, cap, kMaxBoundVectors, deadline));
  if (shape.groups > 0) {
    const int group_size = shape.experts / shape.groups;
    for (int g = 0; g < shape.groups; ++g) {
      const double group =
          std::accumulate(loads.begin() + g * group_size, loads.begin() + (g + 1) * group_size, 0.0);
      bound = std::max(bound, group / shape.gpus_per_node());
    }
  }
  return bound;
}

void certify(LayerResult& r) {
  SolverCertificate& c = r.certificate;
  c.name = "expert_placement";
  c.objective = r.placement.max_load;
  c.best_bound = std::min(r.lower_bound_load, r.placement.max_load);
  c.gap = c.objective > 0 ? (c.objective - c.best_bound) / c.objective : 0;
  c.status = c.gap <= kOptimalGap ? SolveStatus::kOptimal : SolveStatus::kFeasible;
}

double seconds_left(const PlacementOptions& o) {
  if (o.deadline == Clock::time_point::max()) return o.solver_time_limit_s;
  return std::chrono::duration<double>(o.deadline - Clock::now()).count();
}

SolveOptions solve_options(const PlacementOptions& o) {
  SolveOptions s;
  s.time_limit_s = std::min(o.solver_time_limit_s, seconds_left(o));
  return s;
}

/// The whole flat problem as one MILP; fills `certificate` with its proof.
bool full_milp(const FlatProblem& p, const PlacementOptions& o, FlatPlacement& flat,
               SolverCertificate& certificate) {
  PlacementWindow w;
  w.gpus = p.gpus;
  w.slots = p.slots;
  w.upper_bound = flat_max_load(p, flat);
  for (double load : p.loads) w.experts.push_back(WindowExpert{load, 0, 1, p.gpus});
  const WindowSolve solved = solve_placement_window(w, o.backend, solve_options(o));
  certificate = solved.certificate;
  if (!solved.solution) return false;
  FlatPlacement candidate{solved.solution->counts, solved.solution->gpu_experts};
  if (flat_max_load(p, candidate) >= w.upper_bound * (1 - kImprovement)) return false;
  flat = std::move(candidate);
  return true;
}

/// Windows of GPUs around the busiest one, each re-placed exactly; counts of
/// experts living wholly inside a window may change.
bool window_milps(const FlatProblem& p, const PlacementOptions& o, FlatPlacement& flat, double& solve_s) {
  bool improved = false;
  const int size = std::min(o.window_gpus, p.gpus);
  while (seconds_left(o) > 1e-3) {
    const std::vector<double> load = flat_gpu_loads(p, flat);
    std::vector<int> order(p.gpus);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return load[a] < load[b]; });
    std::vector<int> window{order.back()};
    for (int i = 0; static_cast<int>(window.size()) < size; ++i) {
      if (order[i] != window[0]) window.push_back(order[i]);
    }

    std::vector<int> index(p.loads.size(), -1);
    std::vector<int> experts;
    PlacementWindow w;
    w.gpus = size;
    w.slots = p.slots;
    w.upper_bound = load[window[0]];
    for (int g : window) {
      for (int e : flat.gpu_experts[g]) {
        if (index[e] < 0) {
          index[e] = static_cast<int>(experts.size());
          experts.push_back(e);
          w.experts.push_back(WindowExpert{p.loads[e], flat.replicas[e], 0, 0});
        }
        WindowExpert& we = w.experts[index[e]];
        --we.outside;
        ++we.min_count;
      }
    }
    for (WindowExpert& we : w.experts) {
      we.max_count = we.min_count;
      if (we.outside == 0) we.min_count = 1, we.max_count = size;
    }
    const WindowSolve solved = solve_placement_window(w, o.backend, solve_options(o));
    solve_s += solved.certificate.time_s;
    if (!solved.solution) break;
    FlatPlacement candidate = flat;
    for (size_t i = 0; i < experts.size(); ++i) {
      candidate.replicas[experts[i]] = w.experts[i].outside + solved.solution->counts[i];
    }
    for (int k = 0; k < size; ++k) {
      std::vector<int>& slots = candidate.gpu_experts[window[k]];
      slots.clear();
      for (int i : solved.solution->gpu_experts[k]) slots.push_back(experts[i]);
    }
    improve_placement(p, candidate, o.deadline);
    const std::vector<double> after = flat_gpu_loads(p, candidate);
    // Better when the busiest GPU dropped or fewer GPUs sit at the old peak.
    const double peak = load[window[0]];
    const auto at_peak = [&](const std::vector<double>& v) {
      return std::count_if(v.begin(), v.end(), [&](double x) { return x >= peak * (1 - kImprovement); });
    };
    if (at_peak(after) >= at_peak(load)) break;
    flat = std::move(candidate);
    improved = true;
  }
  return improved;
}

/// Improves the greedy start, then, while the problem is small, restarts
/// from every count vector one replica away from the greedy counts (one
/// expert gives a replica to another) and keeps the best.
void improve_from_restarts(const FlatProblem& p, FlatPlacement& flat, Deadline deadline) {
  improve_placement(p, flat, deadline);
  const int n = static_cast<int>(p.loads.size());
  if (n > kMaxRestartExperts) return;
  double best = flat_max_load(p, flat);
  const std::vector<int> start = greedy_replicas(p);
  for (int from = 0; from < n; ++from) {
    if (start[from] < 2) continue;
    for (int to = 0; to < n; ++to) {
      if (to == from || start[to] >= p.gpus) continue;
      std::vector<int> counts = start;
      --counts[from];
      ++counts[to];
      if (Clock::now() >= deadline) return;
      FlatPlacement candidate = pack_replicas(p, counts);
      improve_placement(p, candidate, deadline);
      const double value = flat_max_load(p, candidate);
      if (value < best * (1 - kImprovement)) {
        best = value;
        flat = std::move(candidate);
      }
    }
  }
}

/// The placement with these experts per GPU (and the replica counts they give).
FlatPlacement flat_placement_of(const std::vector<std::vector<int>>& gpu_experts, int experts) {
  FlatPlacement out;
  out.gpu_experts = gpu_experts;
  out.replicas.assign(experts, 0);
  for (const auto& on_gpu : gpu_experts)
    for (int e : on_gpu) ++out.replicas[e];
  return out;
}

/// With two slots per GPU and few count vectors: the best largest-beside-
/// smallest dealing over every count vector (solvers/
/// expert_placement_count_bound.h) when it beats the search's placement.
void adopt_paired_placement(const FlatProblem& p, FlatPlacement& flat, Deadline deadline) {
  const int n = static_cast<int>(p.loads.size());
  if (p.slots != 2 || Clock::now() >= deadline) return;
  const std::vector<std::vector<int>> paired = paired_placement(p.loads, p.gpus, 2 * p.gpus - n, p.gpus);
  if (paired.empty()) return;
  FlatPlacement candidate = flat_placement_of(paired, n);
  if (flat_max_load(p, candidate) < flat_max_load(p, flat) * (1 - kImprovement)) {
    improve_placement(p, candidate, deadline);
    flat = std::move(candidate);
  }
}

/// Few count vectors: branch and bound over them (solvers/
/// expert_placement_count_bound.h) below the search's placement, adopted when
/// it finds one lower. Returns the block's proven optimum, or -1 when the
/// search was refused or ran out of nodes.
double adopt_exact_dealing(const FlatProblem& p, FlatPlacement& flat, Deadline deadline) {
  const int n = static_cast<int>(p.loads.size());
  if (Clock::now() >= deadline) return -1;
  const double current = flat_max_load(p, flat);
  const ExactDealing exact = exact_dealing(p.loads, p.gpus, p.gpus * p.slots - n, p.gpus, current);
  if (!exact.gpu_experts.empty() && exact.max_load < current * (1 - kImprovement)) {
    flat = flat_placement_of(exact.gpu_experts, n);
  }
  return exact.proven ? flat_max_load(p, flat) : -1;
}

}  // namespace

LayerResult place_layer_heuristic(const std::vector<double>& loads, const ExpertPlacementShape& shape,
                                  const PlacementOptions& options) {
  const auto start = Clock::now();
  LayerResult r;
  std::vector<std::vector<int>> greedy(shape.gpus);
  std::vector<std::vector<int>> improved(shape.gpus);
  // The largest proven block optimum; -1 once a block is not proven.
  double proven = 0;
  for (const Block& block : blocks_of(loads, shape)) {
    const FlatProblem p = flat_of(loads, block, shape.slots_per_gpu());
    FlatPlacement flat = pack_replicas(p, greedy_replicas(p));
    write_block(block, flat, greedy);
    double optimum = -1;
    if (options.improve) {
      improve_from_restarts(p, flat, options.deadline);
      adopt_paired_placement(p, flat, options.deadline);
      optimum = adopt_exact_dealing(p, flat, options.deadline);
    }
    proven = optimum < 0 || proven < 0 ? -1 : std::max(proven, optimum);
    write_block(block, flat, improved);
  }
  if (shape.groups == 0) {
    balance_nodes(loads, shape.nodes, greedy);
    balance_nodes(loads, shape.nodes, improved);
  }
  r.greedy_max_load = make_placement(loads, greedy).max_load;
  r.placement = make_placement(loads, improved);
  r.heuristic_max_load = r.placement.max_load;
  r.lower_bound_load = layer_lower_bound(loads, shape, options.bound_deadline);
  // Blocks solved to optimality bound the layer when no other assignment of
  // groups to nodes could do better: one block, or one group per node (every
  // assignment the same up to renaming nodes).
  if (proven > 0 && (shape.groups == 0 || shape.groups == shape.nodes))
    r.lower_bound_load = std::max(r.lower_bound_load, proven);
  r.node_imbalance = node_imbalance(r.placement.gpu_load, shape.nodes);
  certify(r);
  r.certificate.backend = "heuristic";
  r.certificate.time_s = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

void improve_layer_with_milp(const std::vector<double>& loads, const ExpertPlacementShape& shape,
                             const PlacementOptions& options, LayerResult& r) {
  if (r.certificate.status == SolveStatus::kOptimal || seconds_left(options) <= 1e-3) return;
  const int S = shape.slots_per_gpu();
  const int busiest =
      static_cast<int>(std::max_element(r.placement.gpu_load.begin(), r.placement.gpu_load.end()) -
                       r.placement.gpu_load.begin());
  Block block{0, shape.gpus, {}};
  if (shape.groups > 0)
    block = Block{busiest / shape.gpus_per_node() * shape.gpus_per_node(), shape.gpus_per_node(), {}};
  std::vector<int> local(shape.experts, -1);
  std::vector<std::vector<int>> gpu_experts(shape.gpus);
  for (int g = 0; g < shape.gpus; ++g) {
    gpu_experts[g].assign(r.placement.physical_to_logical.begin() + g * S,
                          r.placement.physical_to_logical.begin() + (g + 1) * S);
  }
  FlatPlacement flat;
  for (int g = block.gpu_begin; g < block.gpu_begin + block.gpus; ++g) {
    std::vector<int> slots;
    for (int e : gpu_experts[g]) {
      if (local[e] < 0) {
        local[e] = static_cast<int>(block.experts.size());
        block.experts.push_back(e);
        flat.replicas.push_back(r.placement.replicas[e]);
      }
      slots.push_back(local[e]);
    }
    flat.gpu_experts.push_back(slots);
  }
  const FlatProblem p = flat_of(loads, block, S);

  const auto start = Clock::now();
  SolverCertificate proof;
  bool improved = false;
  const long experts = static_cast<long>(p.loads.size());
  const long counts = std::min<long>(p.gpus, 1 + static_cast<long>(p.gpus) * p.slots - experts);
  const bool whole = experts * counts * p.gpus <= options.full_milp_max_binaries;
  double solve_s = 0;
  if (whole) {
    improved = full_milp(p, options, flat, proof);
  } else {
    improved = window_milps(p, options, flat, solve_s);
  }
  const double milp_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (improved) {
    write_block(block, flat, gpu_experts);
    if (shape.groups == 0) balance_nodes(loads, shape.nodes, gpu_experts);
    r.placement = make_placement(loads, gpu_experts);
    r.node_imbalance = node_imbalance(r.placement.gpu_load, shape.nodes);
    r.milp_improved = r.placement.max_load < r.heuristic_max_load * (1 - kImprovement);
  }
  // A whole-layer MILP's bound holds for every placement; with groups it
  // holds only for this group-to-node assignment, so it is not used.
  const bool bound_proven = has_solution(proof.status) || proof.status == SolveStatus::kTimeLimitNoSolution;
  if (whole && shape.groups == 0 && bound_proven && std::isfinite(proof.best_bound)) {
    r.lower_bound_load = std::max(r.lower_bound_load, std::min(proof.best_bound, r.placement.max_load));
  }
  certify(r);
  r.certificate.backend = backend_name(options.backend);
  r.certificate.time_s += milp_s;
  if (!proof.message.empty()) r.certificate.message = proof.message;
}

}  // namespace parplan
