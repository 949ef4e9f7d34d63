// parplan estimate: the cost of one given config, and which engines run it.
#include <iostream>

#include "cost/step_cost.h"
#include "src/cli/commands.h"
#include "src/plan/engine_plan.h"
#include "src/report/json_report.h"
#include "src/report/output_files.h"
#include "src/report/pipeline_svg.h"
#include "src/report/table_report.h"

namespace parplan {

int run_estimate(const JobFlags& flags) {
  if (!flags.timeline.empty()) check_output_path(flags.timeline, "--timeline");
  check_distinct_paths({{"--timeline", flags.timeline}}, job_input_paths(flags));
  const ResolvedJob r = resolve_job(flags);
  const ParallelConfig config = config_from_flags(flags, r);
  const CostReport cost = estimate_cost(r.model, r.cluster, r.job, config);
  if (!flags.timeline.empty())
    write_file_atomically(flags.timeline,
                          pipeline_timeline_text(flags.timeline, r.model, r.cluster, r.job, config, cost),
                          "--timeline");
  const EngineSelection selection = planner_options(flags, r.engine, "cbc").engines;
  std::string why_not;
  const std::vector<Engine> engines =
      engines_running(selection, Plan{r.model, r.cluster, r.job, config, cost}, &why_not);
  if (flags.common.json()) {
    nlohmann::ordered_json j = cost_json(r.model, config, cost, r.job.seq);
    j["traffic"] = traffic_json(r.cluster, cost);
    j["accuracy"] = accuracy_json(r.cluster, r.model, r.job, config);
    j["engines"] = nlohmann::ordered_json::array();
    for (Engine e : engines) j["engines"].push_back(engine_capabilities(e).name);
    if (!selection.any) j["engine_runs_it"] = !engines.empty();
    if (engines.empty()) j["engine_problem"] = why_not;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << cost_table(r.model, r.cluster, config, cost, &r.job);
    if (!engines.empty()) {
      std::cout << "\nruns on";
      for (std::size_t i = 0; i < engines.size(); ++i)
        std::cout << (i ? ", " : " ") << engine_capabilities(engines[i]).name;
      std::cout << "\n";
    } else {
      std::cout << "\n"
                << (selection.any ? std::string("no released engine can run this config: ")
                                  : r.engine + " cannot run this config: ")
                << why_not << "\n";
    }
  }
  return 0;
}

}  // namespace parplan
