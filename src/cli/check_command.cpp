// parplan check: a config against the optimum, for CI. Exit 1 when it is
// slower than the optimum by more than --max-gap percent, or does not fit.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cost/step_cost.h"
#include "src/cli/commands.h"
#include "src/cli/engine_cost.h"
#include "src/emit/emit.h"
#include "src/io/input_error.h"
#include "src/plan/engine_plan.h"
#include "src/report/json_report.h"
#include "src/report/json_text.h"
#include "src/report/output_files.h"
#include "src/report/pipeline_svg.h"
#include "src/report/table_report.h"

namespace parplan {

namespace {
constexpr double kGiBytes = 1024.0 * 1024.0 * 1024.0;
}  // namespace

int run_check(const CheckFlags& flags) {
  if (!flags.job.timeline.empty()) check_output_path(flags.job.timeline, "--timeline");
  check_distinct_paths({{"--timeline", flags.job.timeline}}, job_input_paths(flags.job));
  check_standard_output_free({{"--timeline", flags.job.timeline}}, flags.job.common.json());
  const ResolvedJob r = resolve_job(flags.job);
  const PlannerOptions options = planner_options(flags.job, r.engine, flags.solver);
  // Under --engine any, as plan: each engine costs the config and the
  // optimum as it runs them; the config on the fastest engine that runs it.
  const ParallelConfig flag_config = config_from_flags(flags.job, r);
  const EngineCost costed = cost_on_engines(flags.job, r, flag_config, options.engines);
  const ParallelConfig& config = costed.config;
  const JobSpec& job = costed.job;
  const CostReport& cost = costed.cost;
  std::vector<EngineJob> engine_jobs;
  if (options.engines.any) engine_jobs = jobs_per_engine(flags.job);
  // The timeline is of the config checked (the one in use), not the optimum.
  if (!flags.job.timeline.empty())
    write_file_atomically(flags.job.timeline,
                          pipeline_timeline_text(flags.job.timeline, r.model, r.cluster, job, config, cost),
                          "--timeline");
  // The optimum is plan's for the same job: the job file's `constraints:`
  // and the config's expert keys (file or flags) pin it as they pin plan;
  // every other split dimension is free. A named attention kernel (--attention
  // or the job file's) pins the search to it, or a flash optimum would fail an
  // unfused config as slow; unnamed, each engine searches its own, as in plan
  // (flash on torchtitan, the profile's elsewhere).
  SearchPins job_pins = r.job.pins;
  if (flags.job.ep) job_pins.ep = config.ep;
  if (flags.job.etp) job_pins.etp = config.etp;
  if (!flags.job.a2a.empty()) job_pins.a2a_hierarchical = config.a2a_hierarchical;
  if (!flags.job.ep_overlap.empty()) job_pins.ep_overlap = config.ep_overlap;
  if (attention_named(flags.job, r)) job_pins.flash_attention = config.flash_attention;
  for (EngineJob& each : engine_jobs) each.job.pins = job_pins;
  AcrossEnginesResult across = plan_across_engines(r.model, r.cluster, engine_jobs, options, 1);
  JobSpec free_job = r.job;
  free_job.pins = job_pins;
  EnginePlanResult single;
  if (!across.found) single = plan_for_engines(r.model, r.cluster, free_job, options, 1);
  // A model the engine cannot build is the request to change, as plan says.
  if (!across.found && single.model_refused && !options.engines.any)
    throw InputError("--engine " + r.engine + " cannot build " + r.model.name +
                     " as it is: " + single.engine_violation + " Check it for another engine.");
  const PlannerResult& best = across.found ? across.planned.planner : single.planner;
  // Why there is no optimum: the search's binding constraint, or the engine's
  // rule every plan broke (the model itself, when the engine cannot build it).
  std::string no_optimum_why = best.search.infeasible_reason;
  if (!across.found && !single.engine_violation.empty())
    no_optimum_why =
        (single.model_refused ? "the engine cannot build the model: " : "no plan the engine accepts: ") +
        single.engine_violation;
  // The given config must be one the engine runs (under any: one of them).
  std::string engine_problem;
  const bool engine_runs =
      options.engines.any
          ? costed.engine >= 0
          : !engines_running(options.engines, Plan{r.model, r.cluster, job, config, cost}, &engine_problem)
                 .empty();
  if (!engine_runs && options.engines.any) engine_problem = why_no_engine_runs(flags.job, r, flag_config);

  const bool fits = cost.memory.fits;
  // --time-limit ran out before the search visited any config: nothing to
  // compare with, so neither an optimum nor a pass can be stated.
  const bool cut_before_any = best.search.stopped_at_deadline && best.ranked.empty();
  // Nothing fits, the given config included: there is no optimum to report
  // (the search says which constraint binds).
  const bool no_optimum = cut_before_any || (best.ranked.empty() && !(fits && engine_runs));
  // The given config may beat what the search visits (e.g. a layout it does
  // not generate); then it is the optimum.
  // Only a config of plan's own space, though: not lossy collectives or an
  // unreleased scheme that plan was not allowed.
  const bool in_plan_space = engine_runs && (options.allow_lossy_comm || !(config.qwz || config.qgz)) &&
                             (options.allow_unreleased || !config.hierarchical_partition);
  const bool given_is_best = best.ranked.empty() || (fits && in_plan_space &&
                                                     cost.time.step_s < best.ranked.front().cost.time.step_s);
  const ParallelConfig& optimum_config = given_is_best ? config : best.ranked.front().config;
  const double optimum_s = given_is_best ? cost.time.step_s : best.ranked.front().cost.time.step_s;
  // The engine the optimum runs on (under any, the one whose recipe prices it).
  const int optimum_engine = given_is_best ? costed.engine : best.ranked.front().engine;
  // A config the engine does not run has no gap to state (it may look
  // faster than any plan the engine runs).
  const bool gap_stated = fits && engine_runs && !no_optimum;
  const double gap_percent = fits ? (cost.time.step_s / optimum_s - 1.0) * 100.0 : INFINITY;
  const bool pass = fits && engine_runs && !cut_before_any &&
                    (!flags.max_gap_percent || gap_percent <= *flags.max_gap_percent + 1e-9);

  if (cut_before_any)
    std::cerr << "parplan: --time-limit reached before any config was searched: no optimum to measure the "
                 "gap against; raise --time-limit\n";
  else if (const std::string note = time_limit_note(best.search); !note.empty())
    std::cerr << "parplan: " << note << "; the gap is measured against it, so the true gap may be larger\n";
  for (const std::string& warning : certificate_warnings(best.certificates))
    std::cerr << "parplan: " << warning << "\n";
  // Exit 1 names what binds, in one line: memory (and why no other config
  // fits either), the engine's rule, or the search's binding constraint.
  const bool state_no_optimum = no_optimum && !cut_before_any;
  std::string binding;
  if (!fits) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "the config does not fit in memory: it needs %.1f GiB per GPU, %.1f GiB usable "
                  "(%.1f GiB more)",
                  cost.memory.peak_bytes / kGiBytes, cost.memory.capacity_bytes / kGiBytes,
                  (cost.memory.peak_bytes - cost.memory.capacity_bytes) / kGiBytes);
    binding = text;
  }
  if (!engine_runs) {
    std::string why = engine_problem;
    if (why.rfind(r.engine + ": ", 0) == 0) why = why.substr(r.engine.size() + 2);
    binding += (binding.empty() ? "" : "; ") +
               (options.engines.any ? std::string("no engine runs this config: ")
                                    : r.engine + " cannot run this config: ") +
               why;
  }
  if (state_no_optimum)
    binding += binding.empty() ? "no feasible plan: " + no_optimum_why
               : !fits         ? "; no other config fits either: " + no_optimum_why
                               : "; and no other config has a plan: " + no_optimum_why;
  if (!binding.empty()) std::cerr << "parplan: " << binding << "\n";
  if (flags.job.common.json()) {
    nlohmann::ordered_json j;
    j["step_s"] = cost.time.step_s;
    j["optimum_step_s"] = no_optimum ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(optimum_s);
    j["gap_percent"] = gap_stated ? nlohmann::ordered_json(gap_percent) : nlohmann::ordered_json(nullptr);
    j["fits"] = fits;
    j["max_gap_percent"] = flags.max_gap_percent ? nlohmann::ordered_json(*flags.max_gap_percent) : nullptr;
    j["pass"] = pass;
    j["engine"] = r.engine;
    if (!engine_runs) j["engine_problem"] = engine_problem;
    // Under any: the engine whose recipe priced step_s, and each engine's.
    if (options.engines.any) {
      j["costed_engine"] =
          costed.engine >= 0
              ? nlohmann::ordered_json(engine_capabilities(static_cast<Engine>(costed.engine)).name)
              : nlohmann::ordered_json(nullptr);
      nlohmann::ordered_json per_engine = nlohmann::ordered_json::object();
      for (const EngineCost::OnEngine& e : costed.per_engine)
        per_engine[engine_capabilities(e.engine).name] = e.step_s;
      j["step_s_per_engine"] = per_engine;
    }
    j["config"] = config_json(config, r.model.layers);
    j["optimum"] = no_optimum
                       ? nlohmann::ordered_json(nullptr)
                       : nlohmann::ordered_json{{"config", config_json(optimum_config, r.model.layers)},
                                                {"step_s", optimum_s}};
    if (!no_optimum && optimum_engine >= 0)
      j["optimum"]["engine"] = engine_capabilities(static_cast<Engine>(optimum_engine)).name;
    j["solver"] = certificates_json(best.certificates, flags.job.common.timings());
    j["stopped_at_time_limit"] = best.search.stopped_at_deadline;
    std::cout << json_text(j) << "\n";
  } else {
    std::ostringstream out;
    out << "config   " << config_line(config, r.model.is_moe(), &job) << "\n";
    if (!costed.per_engine.empty()) out << "runs on " << per_engine_text(costed).substr(1) << "\n";
    out << "optimum  "
        << (no_optimum ? (cut_before_any         ? "none: --time-limit reached before any config was searched"
                          : single.model_refused ? "none: the engine cannot build the model"
                                                 : "none: no config fits")
                       : config_line(optimum_config, r.model.is_moe(), across.found ? &across.job : &job))
        << (!no_optimum && options.engines.any && optimum_engine >= 0
                ? std::string("  (") + engine_capabilities(static_cast<Engine>(optimum_engine)).name + ")"
                : std::string())
        << "\n\n";
    char line[200];
    char gap_text[48] = "n/a (does not fit)";
    if (fits && !engine_runs)
      std::snprintf(gap_text, sizeof gap_text, "n/a (%s)",
                    options.engines.any ? "no engine runs it" : "the engine does not run it");
    else if (fits && !gap_stated)
      std::snprintf(gap_text, sizeof gap_text, "n/a");
    else if (fits)
      std::snprintf(gap_text, sizeof gap_text, "%.1f %%", gap_percent);
    if (no_optimum)
      std::snprintf(line, sizeof line, "step time %.3f s   optimum n/a   gap %s\n", cost.time.step_s,
                    gap_text);
    else
      std::snprintf(line, sizeof line, "step time %.3f s   optimum %.3f s   gap %s\n", cost.time.step_s,
                    optimum_s, gap_text);
    out << line;
    const char* verdict = !fits            ? "the config does not fit in memory"
                          : !engine_runs   ? (options.engines.any ? "no engine runs the config"
                                                                  : "the engine does not run the config")
                          : cut_before_any ? "no optimum searched within --time-limit"
                          : pass           ? "within the allowed gap"
                                           : "slower than the optimum by more than allowed";
    if (flags.max_gap_percent) {
      std::snprintf(line, sizeof line, "%s: %s (max gap %g %%)\n", pass ? "PASS" : "FAIL", verdict,
                    *flags.max_gap_percent);
      out << line;
    } else if (!pass) {
      // No gap asked for, but the check still fails: say why on stdout too.
      out << "FAIL: " << verdict << "\n";
    }
    std::cout << out.str();
  }
  return pass ? 0 : 1;
}

}  // namespace parplan
