// parplan tune: the trial runs of the auto-tuning loop.
#include <iostream>
#include <nlohmann/json.hpp>

#include "src/cli/commands.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/input_limits.h"
#include "src/io/job_loader.h"
#include "src/report/json_report.h"
#include "src/report/json_text.h"
#include "src/tune/tune_loop.h"

namespace parplan {

void register_tune(CLI::App& app, Commands& c) {
  c.tune =
      app.add_subcommand("tune", "Write the trial runs that calibrate a profile for a job (the tuning loop)");
  c.tune->footer(
      "Then: run DIR/run_trials.sh, `parplan calibrate --runs DIR/logs`, plan again. See docs/calibrate.md.\n"
      "Example:\n  parplan tune --job examples/calibrate/tune-job.yaml --trials 6 --emit megatron --out "
      "trials \\\n"
      "               --simulate examples/calibrate/true-h100.yaml");
  TuneFlags& f = c.tune_flags;
  c.tune->add_option("--job", f.job_file, "job.yaml (model, cluster, GPUs, batch, sequence)")->required();
  add_int_option(*c.tune, "--trials", f.trials, "trial runs to write (default 6)", 1, 100);
  c.tune->add_option("--emit", f.emit,
                     "engine: megatron | megatron-deepspeed | torchtitan (default: the job file's engine, "
                     "else megatron)");
  add_output_path_option(*c.tune, "--out", f.out, "directory for the trials (new or empty)")->required();
  // The trials log every 10 iterations and calibrate drops the window that
  // holds the 3 warm-up iterations: fewer than 20 leave no timed window.
  add_int_option(*c.tune, "--train-iters", f.train_iters,
                 "iterations per trial (default 30; at least 20: the logs time every 10 and the first window "
                 "holds the warm-up)",
                 20, 100000);
  c.tune->add_option("--launcher", f.launcher, "torchrun | slurm (default: the cluster profile's)");
  c.tune->add_option("--simulate", f.simulate, "write the logs a cluster with this profile would produce");
  c.tune->add_option("--engine-version", f.engine_version,
                     "torchtitan only: main (Python configs, default) or 0.2 (v0.2.x TOML trials; fp8 jobs "
                     "need it: main's Float8 is rowwise, which parplan does not price)");
  add_common_flags(*c.tune, f.common);
}

int run_tune(const TuneFlags& flags) {
  const JobRequest request = load_job_file(flags.job_file);
  // The trials run on --emit's engine, else on the job file's: a job
  // planned for DeepSpeed gets no Megatron trials unasked.
  std::string emit = flags.emit;
  std::string emit_where = "--emit";
  if (emit.empty() && !request.engine.empty() && request.engine != "any") {
    emit = request.engine;
    emit_where = flags.job_file + ": field 'engine'";
  }
  if (emit.empty()) emit = "megatron";
  check_tune_engine(parse_engine(emit), emit_where);
  JobFlags job_flags;
  job_flags.job_file = flags.job_file;
  job_flags.common = flags.common;
  const ResolvedJob resolved = resolve_job(job_flags, emit);
  // A model the engine cannot build breaks its rules in every trial: say so
  // before searching, as `plan` does.
  if (const auto problems = engine_model_problems(resolved.model, parse_engine(emit)); !problems.empty()) {
    const std::string& what = problems.front();
    throw InputError(emit_where + ": " + emit + " cannot build " + resolved.model.name +
                     " as it is: " + (what.rfind(emit + ": ", 0) == 0 ? what.substr(emit.size() + 2) : what) +
                     " Tune it for another engine.");
  }
  // calibrate reads no multi-latent attention from a Megatron-format log
  // (megatron_log_reader): trials it cannot read back are no loop.
  if (resolved.model.uses_mla() && parse_engine(emit) != Engine::kTorchtitan)
    throw InputError(emit_where + ": " + resolved.model.name +
                     " uses multi-latent attention, which calibrate does not read back from " + emit +
                     "'s logs yet; calibrate it from a run file (docs/calibrate.md)");
  TuneRequest r;
  r.model = resolved.model;
  r.cluster = resolved.cluster;
  r.job = resolved.job;
  r.job_file = flags.job_file;
  r.cluster_arg = request.cluster;
  r.trials = flags.trials;
  r.engine = parse_engine(emit);
  // The trials are costed as the files of that torchtitan run them.
  r.torchtitan_version = parse_engine_version(r.engine, flags.engine_version);
  if (r.engine == Engine::kTorchtitan) cost_as_torchtitan_version(r.torchtitan_version, r.job);
  r.launcher = parse_launcher(flags.launcher.empty() ? r.cluster.launcher_default : flags.launcher);
  r.out_dir = flags.out;
  r.train_iters = flags.train_iters;
  if (!flags.simulate.empty()) {
    r.simulate = load_cluster(flags.simulate, "--simulate");
    // The simulated cluster runs the job as the planning one would: the same
    // limits (its GPUs, an fp8 peak for fp8) before any log is written.
    try {
      check_input_limits(r.model, *r.simulate, r.job);
    } catch (const InputError& e) {
      throw InputError("--simulate " + flags.simulate + ": " + e.what());
    }
  }
  // tune solves no MILP (the trials come from the search and a greedy
  // design): --solver-time-limit has nothing to bound, and no output field
  // is wall-clock, so --no-timings changes nothing.
  r.deadline = flags.common.deadline();
  const TuneResult result = write_tune_loop(r);
  if (!result.infeasible.empty()) {
    std::cerr << "parplan: no feasible plan to try: " << result.infeasible << "\n";
    return 1;
  }
  if (result.simulated_oom > 0)
    std::cerr << "parplan: --simulate: " << result.simulated_oom
              << " trial(s) ran out of memory on the simulated cluster; their logs say so and calibrate "
                 "leaves them out\n";
  std::string note;
  if (result.stopped_at_deadline) {
    note =
        "--time-limit reached: the trials come from the best plans of the mesh shapes searched in time, "
        "not proven best (gap to the optimum unknown)";
    std::cerr << "parplan: " << note << "\n";
  }
  if (flags.common.json()) {
    nlohmann::ordered_json j;
    j["out"] = flags.out;
    j["trials"] = nlohmann::ordered_json::array();
    for (const auto& t : result.trials)
      j["trials"].push_back({{"name", t.name},
                             {"why", t.why},
                             {"gpus", t.job.gpus},
                             {"gbs", t.job.gbs},
                             {"seq", t.job.seq},
                             {"tp", t.config.tp},
                             {"pp", t.config.pp},
                             {"vp", t.config.vp},
                             {"dp", t.config.dp},
                             {"mbs", t.config.mbs},
                             {"config", config_json(t.config, r.model.layers)},
                             {"predicted_step_s", t.predicted_step_s},
                             {"expert_layout", t.expert_layout}});
    j["pinned"] = result.pinned;
    j["simulated"] = r.simulate.has_value();
    j["stopped_at_time_limit"] = result.stopped_at_deadline;
    if (!note.empty()) j["note"] = note;
    std::cout << json_text(j) << "\n";
    return 0;
  }
  std::cout << "parplan tune: " << result.trials.size() << " trials in " << flags.out << "\n";
  for (const auto& t : result.trials) std::cout << "  " << t.name << "  (" << t.why << ")\n";
  std::cout << "pins:";
  for (const auto& k : result.pinned) std::cout << " " << k;
  std::cout << "\nnext: see " << flags.out << "/README.md\n";
  if (!note.empty()) std::cout << "note: " << note << "\n";
  return 0;
}

}  // namespace parplan
