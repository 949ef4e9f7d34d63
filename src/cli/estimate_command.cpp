// parplan estimate: the cost of one given config, and which engines run it.
#include <cstdio>
#include <iostream>
#include <string>

#include "cost/step_cost.h"
#include "src/cli/commands.h"
#include "src/cli/engine_cost.h"
#include "src/plan/engine_plan.h"
#include "src/report/json_report.h"
#include "src/report/json_text.h"
#include "src/report/output_files.h"
#include "src/report/pipeline_svg.h"
#include "src/report/table_report.h"

namespace parplan {

int run_estimate(const JobFlags& flags) {
  if (!flags.timeline.empty()) check_output_path(flags.timeline, "--timeline");
  check_distinct_paths({{"--timeline", flags.timeline}}, job_input_paths(flags));
  check_standard_output_free({{"--timeline", flags.timeline}}, flags.common.json());
  const ResolvedJob r = resolve_job(flags);
  const EngineSelection selection = planner_options(flags, r.engine, "cbc").engines;
  // Under --engine any, the config on the engine that runs it fastest, as
  // that engine runs it (plan --engine any's rule).
  const EngineCost costed = cost_on_engines(flags, r, config_from_flags(flags, r), selection);
  const ParallelConfig& config = costed.config;
  const JobSpec& job = costed.job;
  const CostReport& cost = costed.cost;
  if (!flags.timeline.empty())
    write_file_atomically(flags.timeline,
                          pipeline_timeline_text(flags.timeline, r.model, r.cluster, job, config, cost),
                          "--timeline");
  std::string why_not;
  std::vector<Engine> engines;
  for (const EngineCost::OnEngine& e : costed.per_engine) engines.push_back(e.engine);
  if (engines.empty())
    engines = engines_running(selection, Plan{r.model, r.cluster, job, config, cost}, &why_not);
  if (flags.common.json()) {
    nlohmann::ordered_json j = cost_json(r.model, config, cost, job.seq);
    j["traffic"] = traffic_json(r.cluster, cost);
    j["accuracy"] = accuracy_json(r.cluster, r.model, job, config);
    j["engines"] = nlohmann::ordered_json::array();
    for (Engine e : engines) j["engines"].push_back(engine_capabilities(e).name);
    if (!selection.any) j["engine_runs_it"] = !engines.empty();
    if (!costed.per_engine.empty()) {
      j["engine"] = engine_capabilities(static_cast<Engine>(costed.engine)).name;
      nlohmann::ordered_json per_engine = nlohmann::ordered_json::object();
      for (const EngineCost::OnEngine& e : costed.per_engine)
        per_engine[engine_capabilities(e.engine).name] = e.step_s;
      j["step_s_per_engine"] = per_engine;
    }
    if (engines.empty()) j["engine_problem"] = why_not;
    std::cout << json_text(j) << "\n";
  } else {
    std::cout << cost_table(r.model, r.cluster, config, cost, &job);
    if (!costed.per_engine.empty()) {
      // Each engine's own step time; the costs above are the fastest that fits.
      std::cout << "\nruns on" << per_engine_text(costed) << "\n";
    } else if (!engines.empty()) {
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
