// parplan plan: the best config for a job, and the runners-up.
#include <iostream>

#include "src/cli/commands.h"
#include "src/io/input_error.h"
#include "src/plan/planner.h"
#include "src/report/json_report.h"
#include "src/report/table_report.h"

namespace parplan {

int run_plan(const PlanFlags& flags) {
  ResolvedJob r = resolve_job(flags.job);
  apply_pins(flags.job, r.job);
  PlannerOptions options;
  options.top_k = flags.top;
  options.solver = flags.solver;
  const PlannerResult result = plan_job(r.model, r.cluster, r.job, options);
  if (result.ranked.empty()) {
    if (result.search.no_valid_split) throw InputError(result.search.infeasible_reason);
    std::cerr << "parplan: no feasible plan: " << result.search.infeasible_reason << "\n";
    return 1;
  }
  const RankedConfig& best = result.ranked.front();
  if (flags.job.format == "json") {
    nlohmann::ordered_json j = cost_json(r.model, best.config, best.cost, r.job.seq);
    j["search"] = {{"candidates", result.search.stats.candidates},
                   {"evaluated", result.search.stats.evaluated},
                   {"feasible", result.search.stats.feasible},
                   {"time_s", result.search.stats.time_s}};
    j["solver"] = certificates_json(result.certificates);
    j["alternatives"] = nlohmann::ordered_json::array();
    for (std::size_t i = 1; i < result.ranked.size(); ++i)
      j["alternatives"].push_back(cost_json(r.model, result.ranked[i].config, result.ranked[i].cost, r.job.seq));
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "best plan\n" << cost_table(r.model, r.cluster, best.config, best.cost) << "\n";
    std::cout << "top " << result.ranked.size() << " of " << result.search.stats.feasible << " feasible configs ("
              << result.search.stats.candidates << " candidates, searched in " << result.search.stats.time_s
              << " s)\n"
              << alternatives_table(result.ranked);
    if (!result.certificates.empty()) std::cout << "\n" << certificates_table(result.certificates);
  }
  return 0;
}

}  // namespace parplan
