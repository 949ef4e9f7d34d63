// `parplan experts`: places MoE experts from routing statistics (reads the
// loads, calls run_expert_placement, prints the table or JSON, writes --out).
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>

#include "src/cli/commands.h"
#include "src/io/cluster_loader.h"
#include "src/io/decimal_int.h"
#include "src/io/expert_loads.h"
#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/job_loader.h"
#include "src/io/model_loader.h"
#include "src/plan/expert_placement_run.h"
#include "src/plan/expert_step_time.h"
#include "src/report/eplb_placement.h"
#include "src/report/error_band.h"
#include "src/report/experts_report.h"
#include "src/report/experts_svg.h"
#include "src/report/json_text.h"
#include "src/report/sweep_report.h"

namespace parplan {

namespace {

/// An integer flag, read as every command reads one (src/io/decimal_int.h),
/// within the bound every command states for it (src/io/input_limits.h).
int parse_count(const std::string& flag, const std::string& text, int minimum, std::int64_t maximum) {
  return static_cast<int>(read_decimal_int(text, flag, minimum, maximum));
}

double parse_seconds(const std::string& flag, const std::string& text) {
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // The range every command's time limits keep (src/io/input_limits.h).
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value) ||
      value < kMinTimeLimitS || value > kMaxTimeLimitS) {
    char range[64];
    std::snprintf(range, sizeof range, "%g to %g", kMinTimeLimitS, kMaxTimeLimitS);
    throw InputError(flag + " '" + text + "' must be a number of seconds from " + range);
  }
  return value;
}

double mean_imbalance(const ExpertPlacementRun& run, int gpus, const std::function<double(int)>& max_load) {
  double sum = 0;
  for (std::size_t l = 0; l < run.layers.size(); ++l)
    sum += run.total_load[l] > 0 ? max_load(static_cast<int>(l)) / (run.total_load[l] / gpus) : 1.0;
  return run.layers.empty() ? 1.0 : sum / run.layers.size();
}

/// The job the predicted step time uses, resolved and checked before the
/// placement runs, so that a bad --model, --job or --gbs is refused at once
/// (not after --time-limit seconds of placing).
struct StepTimeJob {
  ResolvedJob resolved;
  std::optional<ParallelConfig> config;
};

StepTimeJob resolve_step_time_job(const ExpertsFlags& f, const ExpertLoads& loads,
                                  const ExpertPlacementShape& shape) {
  JobFlags job;
  if (!f.job_file.empty()) job.job_file = f.job_file;
  job.model = f.model;
  job.cluster = f.cluster;
  if (f.job_file.empty()) {
    if (f.gbs.empty() || f.seq.empty())
      throw InputError("--model/--cluster need --gbs and --seq for the predicted step time (or give --job)");
    job.gpus = shape.gpus;
  }
  if (!f.gbs.empty()) job.gbs = parse_count("--gbs", f.gbs, 1, kMaxGbs);
  if (!f.seq.empty()) job.seq = parse_count("--seq", f.seq, 1, kMaxSeq);
  StepTimeJob out{resolve_job(job), std::nullopt};
  const ResolvedJob& r = out.resolved;
  if (!r.model.is_moe()) throw InputError("model " + r.model.name + " has no routed experts to place");
  if (r.model.experts != loads.experts())
    throw InputError("--loads has " + std::to_string(loads.experts()) + " experts per layer but model " +
                     r.model.name + " has " + std::to_string(r.model.experts) + " routed experts");
  if (r.file_config) {
    if (r.file_config->ep > 1 && r.file_config->ep != shape.gpus)
      throw InputError("--gpus " + std::to_string(shape.gpus) +
                       " is the expert-parallel group but the job's config "
                       "has ep " +
                       std::to_string(r.file_config->ep) + "; give --gpus " +
                       std::to_string(r.file_config->ep));
    job.ep = shape.gpus;
    out.config = config_from_flags(job, r);
  }
  return out;
}

/// The step with each placement: the placement's GPUs are the plan's ep
/// ranks, and its mean imbalance over the layers the ep group's.
PlacementStepTimes predict_step_times(const ExpertsFlags& f, const StepTimeJob& job,
                                      const ExpertPlacementShape& shape, const ExpertPlacementRun& run) {
  std::vector<PlacementImbalance> imbalances = {
      {"static", mean_imbalance(run, shape.gpus, [&](int l) { return run.baselines[l].static_max_load; })},
      {"greedy", mean_imbalance(run, shape.gpus, [&](int l) { return run.baselines[l].greedy_max_load; })},
      {"parplan", mean_imbalance(run, shape.gpus, [&](int l) { return run.layers[l].placement.max_load; })}};
  const ResolvedJob& r = job.resolved;
  PlacementStepTimes times =
      predict_placement_step_times(r.model, r.cluster, r.job, job.config, shape.gpus, imbalances, f.solver);
  times.error_band = error_band_text(r.cluster);
  return times;
}

}  // namespace

CLI::App* register_experts(CLI::App& app, ExpertsFlags& f) {
  CLI::App* cmd = app.add_subcommand(
      "experts", "Place MoE experts (with redundant replicas) on GPUs from routing statistics");
  cmd->footer(
      "Loads: JSON {\"loads\": [[tokens per expert] per layer]} or CSV, one row per MoE layer.\n"
      "See docs/experts.md.\n"
      "Example:\n  parplan experts --loads examples/experts/deepseek-v3-like.csv --gpus 64 --nodes 8 "
      "--redundant 64\n"
      "  parplan experts --loads examples/experts/mixtral-like.json --gpus 8 --redundant 8 --solver glpk \\\n"
      "                  --time-limit 5 --format json --out placement.json\n"
      "  parplan experts --loads examples/experts/mixtral-like.json --gpus 8 --redundant 8 \\\n"
      "                  --job examples/mixtral-8x7b-h100.yaml\n"
      "  parplan experts --loads examples/experts/deepseek-v3-like.csv --gpus 64 --nodes 8 --redundant 64 "
      "\\\n"
      "                  --svg loads.svg");
  cmd->add_option("--loads", f.loads, "routing statistics: JSON or CSV file")->required();
  cmd->add_option("--gpus", f.gpus, "GPUs of the expert-parallel group")->required();
  cmd->add_option("--nodes", f.nodes, "nodes the GPUs span (default 1); balances nodes second");
  cmd->add_option("--groups", f.groups, "expert groups kept inside one node each (EPLB hierarchical)");
  cmd->add_option("--redundant", f.redundant, "extra physical expert slots (default 0)");
  cmd->add_option("--job", f.job_file, "job file (for the predicted MoE step time)");
  cmd->add_option("--model", f.model, "model (for the predicted MoE step time)");
  cmd->add_option("--cluster", f.cluster, "hardware profile (for the predicted MoE step time)");
  cmd->add_option("--gbs", f.gbs, "global batch in sequences (with --model/--cluster)");
  cmd->add_option("--seq", f.seq, "sequence length in tokens (with --model/--cluster)");
  cmd->add_option("--solver", f.solver, "cbc | glpk (default cbc)");
  cmd->add_option("--time-limit", f.time_limit, "seconds for the whole command (default 1)");
  cmd->add_option("--solver-time-limit", f.solver_time_limit, "seconds for one MILP (default: what is left)");
  cmd->add_option("--format", f.format, "table | json (default table)");
  add_output_path_option(*cmd, "--out", f.out,
                         "write the placement in EPLB's convention (phy2log, log2phy, logcnt) to FILE");
  add_output_path_option(*cmd, "--svg", f.svg,
                         "draw every layer's per-GPU load, static placement beside parplan's, to FILE");
  cmd->add_flag("--no-timings", f.no_timings, "omit wall-clock times (identical input, identical output)");
  return cmd;
}

int run_experts(const ExpertsFlags& f) {
  const auto start = std::chrono::steady_clock::now();
  if (f.format != "table" && f.format != "json")
    throw InputError("--format must be table or json (got '" + f.format + "')");
  ExpertPlacementRequest request;
  request.start = start;
  if (f.solver == "cbc") {
    request.backend = SolverBackend::kCbc;
  } else if (f.solver == "glpk") {
    request.backend = SolverBackend::kGlpk;
  } else {
    throw InputError("--solver must be cbc or glpk (got '" + f.solver + "')");
  }
  request.time_limit_s = f.time_limit.empty() ? 1.0 : parse_seconds("--time-limit", f.time_limit);
  if (!f.solver_time_limit.empty())
    request.solver_time_limit_s = parse_seconds("--solver-time-limit", f.solver_time_limit);
  request.shape.gpus = parse_count("--gpus", f.gpus, 1, kMaxGpus);
  request.shape.nodes = f.nodes.empty() ? 1 : parse_count("--nodes", f.nodes, 1, kMaxNodes);
  request.shape.groups = f.groups.empty() ? 0 : parse_count("--groups", f.groups, 1, kMaxWidth);
  request.shape.redundant =
      f.redundant.empty() ? 0 : parse_count("--redundant", f.redundant, 0, kMaxPlacementSlots);
  // Beside --job either one overrides the job's, as in plan and estimate.
  if (f.job_file.empty() && (!f.model.empty()) != (!f.cluster.empty()))
    throw InputError(std::string(f.model.empty() ? "--cluster" : "--model") + " needs " +
                     (f.model.empty() ? "--model" : "--cluster") + " beside it (or give --job)");
  if (f.job_file.empty() && f.model.empty()) {
    // Only the predicted step time reads them: without a model they would do nothing.
    for (const auto& [value, flag] : {std::pair{&f.gbs, "--gbs"}, std::pair{&f.seq, "--seq"}}) {
      if (!value->empty())
        throw InputError(std::string(flag) +
                         " applies with --model and --cluster (or --job), for the predicted step time: "
                         "give them or leave " +
                         flag + " out");
    }
  }
  if (!f.out.empty()) check_output_path(f.out, "--out");
  if (!f.svg.empty()) check_output_path(f.svg, "--svg");
  check_distinct_paths(
      {{"--out", f.out}, {"--svg", f.svg}},
      {{"--loads", f.loads}, {"--job", f.job_file}, {"--model", f.model}, {"--cluster", f.cluster}});
  check_standard_output_free({{"--out", f.out}, {"--svg", f.svg}}, f.format == "json");

  const ExpertLoads loads = read_expert_loads(f.loads);
  request.shape.experts = loads.experts();
  if (const std::string problem = validate_shape(request.shape); !problem.empty()) throw InputError(problem);

  std::optional<StepTimeJob> step_time_job;
  if (!f.job_file.empty() || !f.model.empty()) step_time_job = resolve_step_time_job(f, loads, request.shape);
  if (request.time_limit_s >= 2) {
    std::cerr << "parplan experts: placing " << loads.layers() << " layers (heuristic, then " << f.solver
              << " MILP on the widest gaps for up to " << request.time_limit_s << " s)\n";
  }
  const ExpertPlacementRun run = run_expert_placement(loads.loads, request);

  ExpertsReportContext context;
  context.loads = &loads;
  context.request = request;
  context.timings = !f.no_timings;
  if (step_time_job) {
    context.step_times = predict_step_times(f, *step_time_job, request.shape, run);
    context.step_time_note = context.step_times.note;
  }
  // --out and --svg as a set: both complete before either replaces its target.
  OutputFiles files;
  if (!f.out.empty()) {
    std::vector<LayerPlacement> placements;
    for (const LayerResult& r : run.layers) placements.push_back(r.placement);
    files.stage(f.out, json_text(eplb_json(request.shape, placements), -1) + "\n", "--out");
  }
  if (!f.svg.empty()) files.stage(f.svg, experts_svg(loads.loads, request.shape, run), "--svg");
  files.commit();
  if (f.format == "json") {
    std::cout << json_text(experts_json(context, run)) << "\n";
  } else {
    std::cout << experts_table(context, run);
  }
  return 0;
}

}  // namespace parplan
