// parplan sweep: the best plan of every (model, GPU count, global batch) point
// of a grid, as a table, CSV, JSON, an SVG plot and a Slurm job array.

#include <chrono>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "solvers/solve.h"
#include "src/cli/commands.h"
#include "src/cli/progress_line.h"
#include "src/emit/emit.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/job_loader.h"
#include "src/plan/sweep.h"
#include "src/report/json_text.h"
#include "src/report/output_files.h"
#include "src/report/sweep_plot.h"
#include "src/report/sweep_report.h"
#include "src/report/sweep_slurm_array.h"

namespace parplan {

namespace {

// The engine of the launch files: --engine's, Megatron-LM under `any`.
Engine sweep_engine(const EngineSelection& selection) {
  return selection.any ? Engine::kMegatron : selection.engines[0];
}

}  // namespace

int run_sweep(const SweepFlags& flags) {
  // Everything the user gave is checked before the first point is planned.
  SweepGrid grid;
  grid.models = load_sweep_models(flags.models, "--models");
  try {
    grid.cluster = load_cluster(flags.cluster);
  } catch (const InputError& e) {
    const std::string message = e.what();
    throw InputError(message.rfind("--cluster", 0) == 0 ? message : "--cluster: " + message);
  }
  if (flags.power_limit_w) apply_power_limit(*flags.power_limit_w, grid.cluster);
  grid.gpus = parse_int_list(flags.gpus, "--gpus", kMaxGpus);
  grid.gbs = parse_int_list(flags.gbs, "--gbs", kMaxGbs);
  grid.seq = flags.seq;
  grid.precision = parse_precision(flags.precision, "--precision");
  {
    JobSpec headroom;
    apply_memory_headroom(flags.memory_headroom, headroom, "--memory-headroom", &grid.cluster.device);
    grid.memory_headroom_fraction = headroom.memory_headroom_fraction;
    grid.memory_headroom_bytes = headroom.memory_headroom_bytes;
  }
  if (!flags.csv.empty()) check_output_path(flags.csv, "--csv");
  if (!flags.json.empty()) check_output_path(flags.json, "--json");
  if (!flags.plot.empty()) check_output_path(flags.plot, "--plot");
  {
    // No output may replace the cluster profile or a model file read.
    std::vector<NamedPath> inputs{{"--cluster", flags.cluster}};
    std::stringstream models(flags.models);
    for (std::string item; std::getline(models, item, ',');) inputs.push_back({"--models", item});
    check_distinct_paths({{"--csv", flags.csv}, {"--json", flags.json}, {"--plot", flags.plot}}, inputs);
    check_standard_output_free({{"--csv", flags.csv}, {"--json", flags.json}, {"--plot", flags.plot}},
                               flags.common.json());
  }
  try {
    (void)parse_backend(flags.solver);
  } catch (const std::invalid_argument&) {
    throw InputError("--solver must be cbc, glpk or exhaustive (got '" + flags.solver + "')");
  }
  EngineSelection engines = parse_engine_selection(flags.engine);
  SlurmArrayOptions array;
  if (!flags.emit_slurm_array.empty()) {
    // Each point is written for the engine its plan is tagged with (the
    // CSV's engine column); the search is the same with or without the array.
    array.engine = sweep_engine(engines);
    // A launch file must not silently change the model (as --emit).
    for (const ModelSpec& model : grid.models) {
      if (!model.unmodelled.empty())
        throw InputError("--emit-slurm-array: " + model.name + " has " + model.unmodelled +
                         ", which parplan does not model; launch files would silently change the model "
                         "(sweep it without the array, or describe it in a model YAML without them)");
      if (const std::string unwritable = unwritable_features(model, grid.seq); !unwritable.empty())
        throw InputError("--emit-slurm-array: " + model.name + " has " + unwritable +
                         ", which no launch file parplan writes carries (sweep it without the array)");
    }
    if (engines.any && !flags.engine_version.empty())
      throw InputError(
          "--engine-version chooses torchtitan's config system for every point, and --engine any writes "
          "each point for its own engine: give --engine torchtitan, or drop --engine-version");
    array.torchtitan_version = parse_engine_version(array.engine, flags.engine_version);
    array.dir = check_slurm_array_dir(flags.emit_slurm_array);
    array.array_parallel = flags.array_parallel.value_or(4);
    if (flags.train_iters > 0 && flags.hours > 0)
      throw InputError("--train-iters and --hours: give one of them, not both");
    array.train_iters = flags.train_iters;
    array.hours = flags.hours;
  } else if (flags.train_iters > 0 || flags.hours > 0 || !flags.engine_version.empty() ||
             flags.array_parallel) {
    throw InputError(
        "--train-iters, --hours, --engine-version and --array-parallel only apply with --emit-slurm-array "
        "DIR");
  }
  std::vector<SweepPoint> points = sweep_points(grid);
  // Every point is costed under the engine's recipe, as plan --engine costs
  // it (loss kernel, attention kernel, gradient schedule), and under the
  // torchtitan version the array writes (as plan --emit): a point's row is
  // the plan's.
  for (SweepPoint& point : points) {
    apply_engine_defaults(engines, point.job);
    if (array.engine == Engine::kTorchtitan) cost_as_torchtitan_version(array.torchtitan_version, point.job);
  }
  for (const ModelSpec& model : grid.models) warn_unmodelled(model, grid.seq);

  PlannerOptions options;
  options.top_k = 1;
  options.solver = flags.solver;
  options.solver_time_limit_s = flags.common.solver_time_limit_s;
  options.deadline = flags.common.deadline();
  options.engines = engines;
  options.allow_lossy_comm = flags.allow_lossy_comm;
  options.allow_unreleased = flags.allow_unreleased;

  ProgressLine progress_line("sweep", "points", "planned");
  const auto start = std::chrono::steady_clock::now();
  const SweepProgress progress = [&](int done, int total) { progress_line.update(done, total); };
  const std::vector<SweepOutcome> outcomes = evaluate_sweep(grid, points, options, progress);
  std::optional<double> time_s;
  if (flags.common.timings())
    time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress_line.finish();
  if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline)
    std::cerr
        << "parplan: --time-limit reached: points not started in time say so in their row; points being "
           "planned then report the best plan found so far\n";

  // The files are written as a set: all staged before any replaces its target.
  OutputFiles files;
  if (!flags.csv.empty()) files.stage(flags.csv, sweep_csv(grid, outcomes), "--csv");
  if (!flags.json.empty())
    files.stage(flags.json, json_text(sweep_json(grid, outcomes, time_s)) + "\n", "--json");
  if (!flags.plot.empty()) files.stage(flags.plot, sweep_svg(grid, outcomes), "--plot");

  // Files first: when one cannot be written, nothing is printed as if the
  // sweep had succeeded.
  SlurmArrayResult array_result;
  if (!flags.emit_slurm_array.empty()) {
    array_result = emit_slurm_array(grid, outcomes, array);
    for (const std::string& line : array_result.skipped)
      std::cerr << "parplan: --emit-slurm-array: skipped " << line << "\n";
  }
  files.commit();

  if (flags.common.json()) {
    std::cout << json_text(sweep_json(grid, outcomes, time_s)) << "\n";
  } else {
    std::cout << sweep_table(grid, outcomes, time_s);
  }
  std::cout.flush();
  if (!flags.emit_slurm_array.empty()) {
    if (array_result.tasks.empty()) {
      std::cerr << "parplan: --emit-slurm-array: no point has a plan the engine accepts; nothing written to "
                << array_result.dir.string() << "\n";
      return 1;
    }
    (flags.common.json() ? std::cerr : std::cout)
        << "wrote " << array_result.tasks.size() << " launch directories, "
        << (array_result.dir / "array.sbatch").string() << " and "
        << (array_result.dir / "submit_all.sh").string() << "\n";
  }
  return 0;
}

}  // namespace parplan
