// parplan plan: the best config for a job, and the runners-up.
#include <algorithm>
#include <iostream>

#include "src/cli/commands.h"
#include "src/emit/emit.h"
#include "src/io/input_error.h"
#include "src/plan/placement.h"
#include "src/plan/planner.h"
#include "src/report/json_report.h"
#include "src/report/table_report.h"

namespace parplan {

int run_plan(const PlanFlags& flags) {
  ResolvedJob r = resolve_job(flags.job);
  apply_pins(flags.job, r.job);
  const bool emitting = !flags.emit.empty();
  Engine engine = Engine::kMegatron;
  Launcher launcher = Launcher::kTorchrun;
  if (emitting) {
    engine = parse_engine(flags.emit);
    launcher = parse_launcher(flags.launcher.empty() ? r.cluster.launcher_default : flags.launcher);
    if (flags.out.empty()) throw InputError("--emit needs --out DIR (a new or empty directory for the launch files)");
    if (r.job.a2a_compression < 1)
      throw InputError("--a2a-compression has no flag in the engines parplan emits for; drop it with --emit");
  } else if (!flags.out.empty() || !flags.launcher.empty()) {
    throw InputError("--out and --launcher only apply with --emit ENGINE");
  }
  if (emitting && engine == Engine::kDeepSpeed) {
    // Plain DeepSpeed has no tensor, context or interleaved pipeline layers.
    SearchPins& pins = r.job.pins;
    if (pins.tp <= 0) pins.tp = 1;
    if (pins.cp <= 0) pins.cp = 1;
    if (pins.vp <= 0) pins.vp = 1;
    if (pins.sp < 0) pins.sp = 0;
  }
  PlannerOptions options;
  options.solver_time_limit_s = flags.job.common.solver_time_limit_s;
  options.deadline = flags.job.common.deadline();
  // Emitting keeps only configs the engine accepts: search deeper, then filter.
  options.top_k = emitting ? std::max(flags.top, 512) : flags.top;
  options.solver = flags.solver;
  PlannerResult result = plan_job(r.model, r.cluster, r.job, options);
  if (result.ranked.empty()) {
    if (result.search.no_valid_split) throw InputError(result.search.infeasible_reason);
    std::cerr << "parplan: no feasible plan: " << result.search.infeasible_reason << "\n";
    return 1;
  }
  if (emitting) {
    std::vector<RankedConfig> accepted;
    std::string first_violation;
    for (const auto& ranked : result.ranked) {
      const Plan candidate{r.model, r.cluster, r.job, ranked.config, ranked.cost};
      const auto violations = engine_rule_violations(candidate, engine);
      if (violations.empty()) accepted.push_back(ranked);
      else if (first_violation.empty()) first_violation = violations.front();
    }
    if (accepted.empty()) {
      std::cerr << "parplan: no feasible plan that " << engine_name(engine) << " accepts; the best plan breaks: "
                << first_violation << "\n";
      return 1;
    }
    if (static_cast<int>(accepted.size()) > flags.top) accepted.resize(flags.top);
    if (accepted.front().config.tp != result.ranked.front().config.tp ||
        accepted.front().cost.time.step_s != result.ranked.front().cost.time.step_s) {
      result.certificates = certify(r.model, r.cluster, r.job, accepted.front().config,
                                    parse_backend(flags.solver), solve_time_limit_s(options));
    }
    result.ranked = std::move(accepted);
    const Plan plan{r.model, r.cluster, r.job, result.ranked.front().config, result.ranked.front().cost};
    const auto files = emit_launch_files(plan, EmitOptions{engine, launcher, flags.out});
    std::cerr << "parplan: wrote " << files.size() << " files to " << flags.out << " (run " << files.front().string()
              << ")\n";
  }
  const RankedConfig& best = result.ranked.front();
  // The notes describe the plan actually reported (after engine filtering).
  result.notes = plan_notes(r.model, r.cluster, r.job, best.config, best.cost);
  for (const std::string& note :
       deepspeed_extension_notes(Plan{r.model, r.cluster, r.job, best.config, best.cost}))
    result.notes.push_back(note);
  if (const std::string note = time_limit_note(result.search); !note.empty()) {
    result.notes.push_back(note);
    std::cerr << "parplan: " << note << "\n";
  }
  for (const std::string& warning : certificate_warnings(result.certificates))
    std::cerr << "parplan: " << warning << "\n";
  const bool timings = flags.job.common.timings();
  if (flags.job.common.json()) {
    nlohmann::ordered_json j = cost_json(r.model, best.config, best.cost, r.job.seq);
    j["traffic"] = traffic_json(r.cluster, best.cost);
    j["placement"] = placement_json(place_groups(r.cluster, best.config));
    j["notes"] = result.notes;
    j["search"] = {{"candidates", result.search.stats.candidates},
                   {"evaluated", result.search.stats.evaluated},
                   {"feasible", result.search.stats.feasible},
                   {"stopped_at_time_limit", result.search.stopped_at_deadline}};
    if (timings) j["search"]["time_s"] = result.search.stats.time_s;
    j["solver"] = certificates_json(result.certificates, timings);
    j["alternatives"] = nlohmann::ordered_json::array();
    for (std::size_t i = 1; i < result.ranked.size(); ++i)
      j["alternatives"].push_back(cost_json(r.model, result.ranked[i].config, result.ranked[i].cost, r.job.seq));
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "best plan\n" << cost_table(r.model, r.cluster, best.config, best.cost) << "\n";
    std::cout << "top " << result.ranked.size() << " of " << result.search.stats.feasible << " feasible configs ("
              << result.search.stats.candidates << " candidates";
    if (timings) std::cout << ", searched in " << result.search.stats.time_s << " s";
    std::cout << ")\n" << alternatives_table(result.ranked);
    if (!result.certificates.empty()) std::cout << "\n" << certificates_table(result.certificates, timings);
    if (!result.notes.empty()) {
      std::cout << "\nwhy this plan\n";
      for (const std::string& note : result.notes) std::cout << "  - " << note << "\n";
    }
  }
  return 0;
}

}  // namespace parplan
