#include "src/plan/expert_step_time.h"

#include "cost/step_cost.h"
#include "src/plan/planner.h"

namespace parplan {

PlacementStepTimes predict_placement_step_times(const ModelSpec& model, const ClusterSpec& cluster,
                                                const JobSpec& job,
                                                const std::optional<ParallelConfig>& config, int ep_gpus,
                                                const std::vector<PlacementImbalance>& imbalances,
                                                const std::string& solver) {
  PlacementStepTimes out;
  out.model_layers = model.layers;
  if (imbalances.empty()) return out;
  JobSpec priced = job;
  priced.measured_ep_imbalance = {};
  if (config) {
    out.config = *config;
    out.note = "config from the job file";
  } else {
    JobSpec search = priced;
    search.pins.ep = ep_gpus;
    search.moe_imbalance = imbalances.front().imbalance;
    PlannerOptions options;
    options.top_k = 1;
    options.solver = solver;
    const PlannerResult plan = plan_job(model, cluster, search, options);
    if (plan.ranked.empty()) {
      out.note = "not predicted: no feasible plan with ep " + std::to_string(ep_gpus) + ": " +
                 plan.search.infeasible_reason;
      return out;
    }
    out.config = plan.ranked.front().config;
    out.note = "best plan with ep " + std::to_string(ep_gpus) + " at the " + imbalances.front().name +
               " placement's imbalance";
  }
  for (const PlacementImbalance& p : imbalances) {
    priced.moe_imbalance = p.imbalance;
    const CostReport cost = estimate_cost(model, cluster, priced, out.config);
    out.placements.push_back({p.name, p.imbalance, cost.time.step_s, cost.memory.fits});
  }
  out.available = true;
  return out;
}

}  // namespace parplan
