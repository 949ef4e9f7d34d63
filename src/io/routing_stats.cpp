#include "src/io/routing_stats.h"

#include <algorithm>
#include <numeric>

#include "src/io/input_error.h"

namespace parplan {

double load_imbalance(const std::vector<double>& gpu_load) {
  if (gpu_load.empty()) return 1.0;
  const double total = std::accumulate(gpu_load.begin(), gpu_load.end(), 0.0);
  if (!(total > 0)) return 1.0;
  const double mean = total / static_cast<double>(gpu_load.size());
  return *std::max_element(gpu_load.begin(), gpu_load.end()) / mean;
}

double contiguous_ep_imbalance(const ExpertLoads& loads, int ep) {
  if (ep <= 1 || loads.layers() == 0) return 1.0;
  const int per_rank = loads.experts() / ep;
  std::vector<double> rank_load(ep);
  double sum = 0;
  for (const auto& row : loads.loads) {
    std::fill(rank_load.begin(), rank_load.end(), 0.0);
    for (int e = 0; e < per_rank * ep; ++e) rank_load[e / per_rank] += row[e];
    sum += load_imbalance(rank_load);
  }
  return sum / loads.layers();
}

void apply_routing_stats(const std::string& path, const ModelSpec& model, JobSpec& job) {
  const std::string flag = "--routing-stats";
  if (!model.is_moe())
    throw InputError(flag + " applies to MoE models only; " + model.name + " has no routed experts");
  const ExpertLoads loads = read_expert_loads(path, flag);
  if (loads.experts() != model.experts)
    throw InputError(flag + " " + path + ": has " + std::to_string(loads.experts()) +
                     " experts per layer but model " + model.name + " has " + std::to_string(model.experts) +
                     " routed experts; give the loads of this model");
  job.moe_imbalance = 0.0;
  job.measured_ep_imbalance = {};
  std::size_t slot = 0;
  for (int ep = 2; ep <= model.experts && slot < job.measured_ep_imbalance.size(); ++ep) {
    if (model.experts % ep != 0) continue;
    job.measured_ep_imbalance[slot++] = MeasuredEpImbalance{ep, contiguous_ep_imbalance(loads, ep)};
  }
}

}  // namespace parplan
