// parplan plan: the best config for a job, and the runners-up.
#include <filesystem>
#include <iostream>

#include "src/cli/commands.h"
#include "src/emit/emit.h"
#include "src/io/input_error.h"
#include "src/plan/engine_plan.h"
#include "src/report/json_report.h"
#include "src/report/json_text.h"
#include "src/report/output_files.h"
#include "src/report/pipeline_svg.h"
#include "src/report/plan_report.h"

namespace parplan {

int run_plan(const PlanFlags& flags) {
  if (!flags.job.timeline.empty()) check_output_path(flags.job.timeline, "--timeline");
  check_distinct_paths({{"--timeline", flags.job.timeline}}, job_input_paths(flags.job));
  check_standard_output_free({{"--timeline", flags.job.timeline}}, flags.job.common.json());
  // --out is a new or empty directory the launch files fill: a timeline in
  // it would replace one of them or be replaced.
  if (!flags.job.timeline.empty() && !flags.out.empty()) {
    std::error_code ec;
    const auto out_dir = std::filesystem::weakly_canonical(std::filesystem::absolute(flags.out), ec);
    const auto timeline =
        std::filesystem::weakly_canonical(std::filesystem::absolute(flags.job.timeline), ec);
    if (timeline.parent_path() == out_dir)
      throw InputError("--timeline " + flags.job.timeline + " is inside --out " + flags.out +
                       ", which the launch files fill; write the timeline elsewhere");
  }
  // --emit's engine read first: resolve_job reads it as the engine to plan
  // for and would name an unknown one as --engine.
  if (!flags.emit.empty()) (void)parse_engine(flags.emit);
  ResolvedJob r = resolve_job(flags.job, flags.emit);
  apply_pins(flags.job, r.job);
  // A job file's config is what estimate and check cost; plan searches
  // around it (its expert keys pin the search). Say so rather than drop
  // the keys without a word.
  // A config whose dp contradicts its own split is refused as estimate
  // refuses it, even where plan would search around it.
  if (r.file_dp && r.file_config) {
    const std::int64_t ranks =
        std::int64_t{r.file_config->tp} * r.file_config->pp * std::max(1, r.file_config->cp);
    if (ranks > 0 && (r.job.gpus % ranks != 0 || r.job.gpus / ranks != *r.file_dp))
      throw InputError("config: dp " + std::to_string(*r.file_dp) + " disagrees with the job: " +
                       std::to_string(r.job.gpus) + " GPUs / (tp * pp * cp = " + std::to_string(ranks) +
                       ") is not " + std::to_string(*r.file_dp) + "; drop dp or fix it");
  }
  if (!r.file_config_keys_unpinned.empty()) {
    std::string keys;
    for (const std::string& k : r.file_config_keys_unpinned) keys += (keys.empty() ? "" : ", ") + k;
    std::cerr << "parplan: note: plan leaves the job file's config keys " << keys
              << " free (estimate and check cost them as given; constraints: pins tp, pp, vp, cp, dp, mbs, "
                 "zero and recompute)\n";
  }
  // Sequence parallelism splits activations over the tensor-parallel group:
  // with tp pinned to 1 no config is left, and the search would blame the
  // GPU split.
  if (r.job.pins.sp.value_or(false) && r.job.pins.tp == 1)
    throw InputError(std::string("--sp: sequence parallelism needs tp > 1, but ") +
                     (flags.job.tp ? "--tp 1" : "the job file's constraints.tp 1") +
                     " pins tp to 1; drop --sp or give --tp 2 or more");
  const bool emitting = !flags.emit.empty();
  Launcher launcher = Launcher::kTorchrun;
  if (emitting) {
    launcher = parse_launcher(flags.launcher.empty() ? r.cluster.launcher_default : flags.launcher);
    check_launcher(r.cluster, launcher);
    if (flags.out.empty())
      throw InputError("--emit needs --out DIR (a new or empty directory for the launch files)");
    if (r.job.a2a_compression < 1)
      throw InputError("--a2a-compression has no flag in the engines parplan emits for; drop it with --emit");
  } else if (!flags.out.empty() || !flags.launcher.empty() || !flags.engine_version.empty() ||
             flags.train_iters > 0 || flags.hours > 0) {
    throw InputError(
        "--out, --launcher, --engine-version, --train-iters and --hours only apply with --emit ENGINE");
  }
  EmitOptions emit_options;
  if (emitting) {
    emit_options.launcher = launcher;
    emit_options.out_dir = flags.out;
    emit_options.train_iters = flags.train_iters;
    emit_options.hours = flags.hours;
    if (flags.train_iters > 0 && flags.hours > 0)
      throw InputError("--train-iters and --hours: give one of them, not both");
  }
  const PlannerOptions options = planner_options(flags.job, r.engine, flags.solver, flags.emit);
  if (emitting) {
    emit_options.engine = options.engines.engines[0];
    emit_options.torchtitan_version = parse_engine_version(emit_options.engine, flags.engine_version);
    if (emit_options.engine == Engine::kTorchtitan) {
      if (const char* problem = torchtitan_version_problem(emit_options.torchtitan_version, r.job))
        throw InputError(std::string("--emit torchtitan: ") + problem);
      cost_as_torchtitan_version(emit_options.torchtitan_version, r.job);
    }
  }
  EnginePlanResult planned;
  bool across = false;
  if (r.engine == "any" && !emitting) {
    // Each engine as it runs the plan; the fastest engine's plans win.
    std::vector<EngineOptimum> refused;
    AcrossEnginesResult best =
        plan_across_engines(r.model, r.cluster, jobs_per_engine(flags.job, &refused), options, flags.top);
    if (best.found) {
      planned = std::move(best.planned);
      for (EngineOptimum& each : refused) planned.planner.engine_optima.push_back(std::move(each));
      r.job = best.job;
      across = true;
    }
  }
  // One search over the selection (and, under any, why no engine has a plan).
  if (!across) planned = plan_for_engines(r.model, r.cluster, r.job, options, flags.top);
  PlannerResult& result = planned.planner;
  if (planned.model_refused) {
    // The model, not a plan, is what the engine cannot run: a request to change.
    std::string what = planned.engine_violation;
    if (what.rfind(r.engine + ": ", 0) == 0) what = what.substr(r.engine.size() + 2);
    throw InputError(r.engine == "any"
                         ? "no engine parplan writes for can build " + r.model.name + " as it is: " + what
                         : std::string(emitting ? "--emit " : "--engine ") + r.engine + " cannot build " +
                               r.model.name + " as it is: " + what + " Plan it for another engine.");
  }
  if (result.ranked.empty()) {
    if (result.search.no_valid_split) throw InputError(result.search.infeasible_reason);
    if (!planned.engine_violation.empty())
      std::cerr << "parplan: no feasible plan that " << r.engine
                << " accepts; the best plan breaks: " << planned.engine_violation << "\n";
    else
      std::cerr << "parplan: no feasible plan: " << result.search.infeasible_reason << "\n";
    return 1;
  }
  // The timeline shows the plan --emit writes: the recommended one. Drawn
  // before any launch file is written, so a step too long to draw leaves none.
  std::string timeline_svg;
  if (!flags.job.timeline.empty()) {
    const RankedConfig& drawn = planned.recommended.plan;
    timeline_svg =
        pipeline_timeline_text(flags.job.timeline, r.model, r.cluster, r.job, drawn.config, drawn.cost);
  }
  if (emitting) {
    // The files run the recommended plan (the optimum unless a plan within
    // the profile's error band is safer; the notes say why).
    const RankedConfig& chosen = planned.recommended.plan;
    const Plan plan{r.model, r.cluster, r.job, chosen.config, chosen.cost};
    std::vector<std::string> notes;
    const auto files = emit_launch_files(plan, emit_options, &notes);
    for (const std::string& note : notes) std::cerr << "parplan: " << note << "\n";
    std::cerr << "parplan: wrote " << files.size() << (files.size() == 1 ? " file" : " files") << " to "
              << flags.out << " for the "
              << (planned.recommended.why.index == 0 ? "optimum (also the recommended plan)"
                                                     : "recommended plan")
              << " (run " << files.front().string() << ")\n";
  }
  if (!flags.job.timeline.empty()) {
    write_file_atomically(flags.job.timeline, timeline_svg, "--timeline");
    std::cerr << "parplan: wrote the pipeline timeline of the "
              << (planned.recommended.why.index == 0 ? "optimum (also the recommended plan)"
                                                     : "recommended plan")
              << " to " << flags.job.timeline << "\n";
  }
  if (const std::string note = time_limit_note(result.search); !note.empty()) {
    result.notes.push_back(note);
    std::cerr << "parplan: " << note << "\n";
  }
  for (const std::string& warning : certificate_warnings(result.certificates))
    std::cerr << "parplan: " << warning << "\n";
  const bool timings = flags.job.common.timings();
  if (flags.job.common.json())
    std::cout << json_text(plan_json(r.model, r.cluster, r.job, result, timings, &planned.recommended))
              << "\n";
  else
    std::cout << plan_table(r.model, r.cluster, r.job, result, timings, &planned.recommended);
  return 0;
}

}  // namespace parplan
