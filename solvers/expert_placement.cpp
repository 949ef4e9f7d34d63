// Shape rules, placement bookkeeping and checks, balance metrics, baselines.
#include "solvers/expert_placement.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "solvers/expert_placement_heuristic.h"

namespace parplan {

namespace {

std::string str(long long v) { return std::to_string(v); }

constexpr long long kMaxPlacementGpus = 1 << 20;
constexpr long long kMaxPlacementPairs = 1LL << 28;

}  // namespace

namespace {

/// " (try --redundant R)" with the nearest R that makes the slots a
/// multiple of the GPUs and that the other rules accept (the next one up,
/// else the one below), or "" when neither is accepted.
std::string redundant_suggestion(const ExpertPlacementShape& s) {
  const long long rest = (static_cast<long long>(s.experts) + s.redundant) % s.gpus;
  for (const long long r : {s.redundant + s.gpus - rest, s.redundant - rest}) {
    if (r < 0 || r > kMaxPlacementSlots) continue;
    ExpertPlacementShape candidate = s;
    candidate.redundant = static_cast<int>(r);
    if (validate_shape(candidate).empty()) return " (try --redundant " + str(r) + ")";
  }
  return "";
}

}  // namespace

std::string validate_shape(const ExpertPlacementShape& s) {
  if (s.experts < 1) return "the loads have no experts: give at least one load per layer";
  if (s.gpus < 1) return "--gpus must be at least 1 (got " + str(s.gpus) + ")";
  if (s.nodes < 1) return "--nodes must be at least 1 (got " + str(s.nodes) + ")";
  if (s.redundant < 0) return "--redundant must be >= 0 (got " + str(s.redundant) + ")";
  if (s.groups < 0) return "--groups must be >= 1 (got " + str(s.groups) + ")";
  // Beyond these the per-layer tables (experts x GPUs) would not fit in memory.
  if (s.gpus > kMaxPlacementGpus)
    return "--gpus must be an integer from 1 to " + str(kMaxPlacementGpus) + " (got " + str(s.gpus) + ")";
  if (static_cast<long long>(s.experts) + s.redundant > kMaxPlacementSlots) {
    return "experts + --redundant exceeds " + str(kMaxPlacementSlots) +
           " physical slots; give a smaller --redundant";
  }
  if (static_cast<long long>(s.experts) * s.gpus > kMaxPlacementPairs) {
    return str(s.experts) + " experts x --gpus " + str(s.gpus) + " is too large to place (at most " +
           str(kMaxPlacementPairs) + " experts x GPUs, as the per-layer tables take); give fewer --gpus";
  }
  if (s.gpus % s.nodes != 0) {
    return "--gpus " + str(s.gpus) + " is not a multiple of --nodes " + str(s.nodes) +
           ": each node needs the same number of GPUs";
  }
  const long long physical = static_cast<long long>(s.experts) + s.redundant;
  if (physical < s.gpus) {
    return "--gpus " + str(s.gpus) + " exceeds the " + str(physical) + " physical slots (experts " +
           str(s.experts) + " + --redundant " + str(s.redundant) + "): every GPU needs at least one slot";
  }
  if (physical % s.gpus != 0) {
    return "experts + --redundant = " + str(physical) + " is not a multiple of --gpus " + str(s.gpus) +
           ": every GPU holds the same number of slots" + redundant_suggestion(s);
  }
  if (physical > static_cast<long long>(s.experts) * s.gpus) {
    return "--redundant " + str(s.redundant) +
           " is too large: replicas of one expert sit on distinct GPUs, so at most " +
           str(static_cast<long long>(s.experts) * (s.gpus - 1)) + " redundant slots fit on " + str(s.gpus) +
           " GPUs";
  }
  if (s.groups > 0) {
    if (s.experts % s.groups != 0) {
      return "--groups " + str(s.groups) + " does not divide the " + str(s.experts) + " experts";
    }
    if (s.groups % s.nodes != 0) {
      return "--groups " + str(s.groups) + " is not a multiple of --nodes " + str(s.nodes) +
             ": every node holds the same number of groups";
    }
    const long long node_experts = s.experts / s.nodes;
    if (physical / s.nodes > node_experts * s.gpus_per_node()) {
      return "--redundant " + str(s.redundant) + " is too large for --groups: a node's " + str(node_experts) +
             " experts fit at most " + str(node_experts * s.gpus_per_node()) + " replicas on its " +
             str(s.gpus_per_node()) + " GPUs";
    }
  }
  return "";
}

LayerPlacement make_placement(const std::vector<double>& loads,
                              const std::vector<std::vector<int>>& gpu_experts) {
  LayerPlacement p;
  p.replicas.assign(loads.size(), 0);
  for (const auto& slots : gpu_experts) {
    for (int e : slots) {
      p.physical_to_logical.push_back(e);
      ++p.replicas[e];
    }
  }
  p.gpu_load.assign(gpu_experts.size(), 0);
  for (size_t g = 0; g < gpu_experts.size(); ++g) {
    for (int e : gpu_experts[g]) p.gpu_load[g] += loads[e] / p.replicas[e];
  }
  p.max_load = p.gpu_load.empty() ? 0 : *std::max_element(p.gpu_load.begin(), p.gpu_load.end());
  return p;
}

std::string check_placement(const std::vector<double>& loads, const ExpertPlacementShape& shape,
                            const LayerPlacement& p) {
  const int S = shape.slots_per_gpu();
  const int E = shape.experts;
  if (static_cast<int>(p.physical_to_logical.size()) != shape.physical())
    return "wrong number of physical slots";
  if (static_cast<int>(p.replicas.size()) != E) return "wrong number of replica counts";
  std::vector<int> count(E, 0);
  for (int g = 0; g < shape.gpus; ++g) {
    std::vector<int> seen;
    for (int s = 0; s < S; ++s) {
      const int e = p.physical_to_logical[g * S + s];
      if (e < 0 || e >= E) return "slot holds an unknown expert";
      if (std::find(seen.begin(), seen.end(), e) != seen.end()) {
        return "GPU " + str(g) + " holds two replicas of expert " + str(e);
      }
      seen.push_back(e);
      ++count[e];
      if (shape.groups > 0) {
        const int group = e / (E / shape.groups);
        const int node = g / shape.gpus_per_node();
        for (int h = 0; h < shape.gpus; ++h) {
          for (int t = 0; t < S; ++t) {
            const int f = p.physical_to_logical[h * S + t];
            if (f / (E / shape.groups) == group && h / shape.gpus_per_node() != node) {
              return "group " + str(group) + " spans two nodes";
            }
          }
        }
      }
    }
  }
  for (int e = 0; e < E; ++e) {
    if (count[e] < 1) return "expert " + str(e) + " has no replica";
    if (count[e] != p.replicas[e]) return "replica count of expert " + str(e) + " is inconsistent";
  }
  for (int g = 0; g < shape.gpus; ++g) {
    double load = 0;
    for (int s = 0; s < S; ++s) {
      const int e = p.physical_to_logical[g * S + s];
      load += loads[e] / count[e];
    }
    if (std::abs(load - p.gpu_load[g]) > 1e-9 * std::max(1.0, load))
      return "GPU " + str(g) + " load is inconsistent";
  }
  return "";
}

double imbalance(double max_load, double total_load, int gpus) {
  return total_load > 0 ? max_load / (total_load / gpus) : 1.0;
}

double node_imbalance(const std::vector<double>& gpu_load, int nodes) {
  if (nodes < 1 || gpu_load.empty()) return 1;
  const size_t per = gpu_load.size() / nodes;
  double total = 0;
  double worst = 0;
  for (int n = 0; n < nodes; ++n) {
    double sum = 0;
    for (size_t g = n * per; g < (n + 1) * per; ++g) sum += gpu_load[g];
    total += sum;
    worst = std::max(worst, sum);
  }
  return total > 0 ? worst / (total / nodes) : 1.0;
}

LayerPlacement static_placement(const std::vector<double>& loads, int gpus) {
  const int E = static_cast<int>(loads.size());
  std::vector<std::vector<int>> gpu_experts(gpus);
  int e = 0;
  for (int g = 0; g < gpus; ++g) {
    const int take = E / gpus + (g < E % gpus ? 1 : 0);
    for (int k = 0; k < take; ++k) gpu_experts[g].push_back(e++);
  }
  return make_placement(loads, gpu_experts);
}

LayerPlacement greedy_layer_placement(const std::vector<double>& loads, const ExpertPlacementShape& shape) {
  PlacementOptions options;
  options.improve = false;
  options.use_milp = false;
  return place_layer_heuristic(loads, shape, options).placement;
}

}  // namespace parplan
