// parplan estimate: the cost of one given config.
#include <iostream>

#include "cost/step_cost.h"
#include "src/cli/commands.h"
#include "src/report/json_report.h"
#include "src/report/table_report.h"

namespace parplan {

int run_estimate(const JobFlags& flags) {
  const ResolvedJob r = resolve_job(flags);
  const ParallelConfig config = config_from_flags(flags, r);
  const CostReport cost = estimate_cost(r.model, r.cluster, r.job, config);
  if (flags.common.json()) {
    nlohmann::ordered_json j = cost_json(r.model, config, cost, r.job.seq);
    j["traffic"] = traffic_json(r.cluster, cost);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << cost_table(r.model, r.cluster, config, cost);
  }
  return 0;
}

}  // namespace parplan
