#include "src/cli/commands.h"

#include "src/io/input_limits.h"

namespace parplan {

void add_timeline_flag(CLI::App& app, std::string& path) {
  add_output_path_option(
      app, "--timeline", path,
      "write the step's pipeline schedule: an SVG timeline (each stage's forward and backward "
      "passes, the bubble), or with FILE.json Chrome's trace format for Perfetto");
}

void add_emit_length_flags(CLI::App& app, long long& train_iters, double& hours) {
  add_int_option(app, "--train-iters", train_iters,
                 "iterations the launch files run and #SBATCH -t is sized for (default 1000, assumed)", 1,
                 1000000000);
  add_number_option(app, "--hours", hours,
                    "wall time to ask for instead (capped at the site's limit); the scripts run the "
                    "iterations that fit",
                    0.01, 8760);
}

void register_commands(CLI::App& app, Commands& c) {
  c.estimate = app.add_subcommand("estimate", "Predict memory and step time of one given config");
  c.estimate->footer(
      "Example:\n  parplan estimate --model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048 "
      "\\\n"
      "                   --tp 8 --pp 8 --vp 2 --sp --recompute selective --timeline step.svg");
  add_job_flags(*c.estimate, c.estimate_flags, true);
  add_timeline_flag(*c.estimate, c.estimate_flags.timeline);
  add_engine_flags(*c.estimate, c.estimate_flags);

  c.plan = app.add_subcommand("plan", "Search the best config for a job (a given size pins that dimension)");
  c.plan->footer(
      "Example:\n  parplan plan --model llama3-70b --cluster dgx-h100 --gpus 64 --gbs 512 --seq 8192 --top "
      "5\n"
      "  parplan plan --job examples/gpt3-175b-a100.yaml --format json --timeline plan.svg");
  add_job_flags(*c.plan, c.plan_flags.job, false);
  add_timeline_flag(*c.plan, c.plan_flags.job.timeline);
  add_engine_flags(*c.plan, c.plan_flags.job);
  add_int_option(*c.plan, "--top", c.plan_flags.top,
                 "plans to list: the optimum and its runners-up (default 5)", 1, 1000);
  c.plan->add_option("--solver", c.plan_flags.solver, "cbc | glpk | exhaustive (default cbc)");
  c.plan->add_option(
      "--emit", c.plan_flags.emit,
      "write launch files: megatron | deepspeed | megatron-deepspeed | torchtitan (implies --engine)");
  add_output_path_option(*c.plan, "--out", c.plan_flags.out, "directory for --emit");
  c.plan->add_option("--launcher", c.plan_flags.launcher,
                     "torchrun | slurm (default: the cluster profile's)");
  add_emit_length_flags(*c.plan, c.plan_flags.train_iters, c.plan_flags.hours);
  c.plan->add_option("--engine-version", c.plan_flags.engine_version,
                     "torchtitan config system: main (Python configs, default) | 0.2 (v0.2.x TOML)");

  c.check = app.add_subcommand("check", "Compare a config with the optimum; for CI");
  c.check->footer(
      "Examples:\n"
      "  parplan check --model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048 \\\n"
      "                --tp 8 --pp 8 --sp --recompute selective --max-gap 5   # exit 1: over 5 % slower\n"
      "  # exit 1: Narayanan 2021's 1T config (tp 8, pp 64, full recomputation) against sp + selective\n"
      "  parplan check --job examples/gpt-1t-expert-config.yaml --max-gap 3 --format json");
  add_job_flags(*c.check, c.check_flags.job, true);
  add_timeline_flag(*c.check, c.check_flags.job.timeline);
  add_engine_flags(*c.check, c.check_flags.job);
  add_number_option(
      *c.check, "--max-gap", c.check_flags.max_gap_percent,
      "exit 1 when the config is slower than the optimum by more than PCT percent (or does not fit)", 0, 1e6);
  c.check->add_option("--solver", c.check_flags.solver, "cbc | glpk | exhaustive (default cbc)");

  c.sweep = app.add_subcommand(
      "sweep", "Plan every (model, GPUs, batch) point of a grid; table, CSV, JSON, SVG, Slurm array");
  c.sweep->footer(
      "Lists: 64,128,256 or ranges 64:1024:x2 (geometric) and 512:2048:+512 (arithmetic); models may be\n"
      "ladder:narayanan (gpt-1.7b ... gpt-1t), ladder:llama3, ladder:llama2 or ladder:qwen3-moe. See "
      "docs/sweep.md.\n"
      "Example:\n  parplan sweep --models ladder:narayanan --cluster dgx-a100 --gpus 64:1024:x2 --gbs "
      "512,1024 \\\n"
      "                --seq 2048 --csv sweep.csv --plot sweep.svg --emit-slurm-array runs/");
  SweepFlags& sf = c.sweep_flags;
  add_common_flags(*c.sweep, sf.common);
  c.sweep->add_option("--models", sf.models, "models: catalog names, files, ladder:NAME (comma-separated)")
      ->required();
  c.sweep->add_option("--cluster", sf.cluster, "hardware profile name or YAML path")->required();
  add_number_option(*c.sweep, "--power-limit", sf.power_limit_w,
                    "board power limit in W (200-700) for a profile with a measured power curve", 200.0,
                    700.0);
  c.sweep->add_option("--gpus", sf.gpus, "GPU counts: list or range (64:1024:x2)")->required();
  c.sweep->add_option("--gbs", sf.gbs, "global batch sizes: list or range (512:2048:+512)")->required();
  add_int_option(*c.sweep, "--seq", sf.seq, "sequence length in tokens", 1, kMaxSeq)->required();
  c.sweep->add_option("--precision", sf.precision, "bf16 | fp16 | fp8 (default bf16)");
  add_output_path_option(*c.sweep, "--csv", sf.csv, "write one CSV row per point to FILE");
  add_output_path_option(*c.sweep, "--json", sf.json,
                         "write the sweep as one JSON document (a row per point) to FILE");
  add_output_path_option(*c.sweep, "--plot", sf.plot, "write an SVG plot (MFU and step time) to FILE.svg");
  add_output_path_option(*c.sweep, "--emit-slurm-array", sf.emit_slurm_array,
                         "write launch files of every feasible point and a Slurm job array to DIR");
  add_emit_length_flags(*c.sweep, sf.train_iters, sf.hours);
  add_int_option(*c.sweep, "--array-parallel", sf.array_parallel, "array tasks running at once (default 4)",
                 1, 1000000);
  c.sweep->add_option("--engine", sf.engine,
                      "megatron | deepspeed | megatron-deepspeed | torchtitan | any (default any: each point "
                      "on its fastest engine, costed and written for it)");
  c.sweep->add_option(
      "--engine-version", sf.engine_version,
      "torchtitan: main | 0.2 (with --engine torchtitan --emit-slurm-array: v0.2.x TOML configs, "
      "every point costed as v0.2.x runs it; fp8 points need 0.2)");
  c.sweep->add_flag("--allow-lossy-comm", sf.allow_lossy_comm, "also plan lossy collectives (qwZ, qgZ)");
  c.sweep->add_flag("--allow-unreleased", sf.allow_unreleased,
                    "also plan schemes no released engine runs (3-level hierarchical partition)");
  c.sweep->add_option(
      "--memory-headroom", sf.memory_headroom,
      "HBM kept free: GiB (4) or percent of usable HBM (10%); default: see docs/cost-model-engines.md");
  c.sweep->add_option("--solver", sf.solver, "cbc | glpk | exhaustive (default cbc)");

  register_skip_paths(app, c);
  c.scatter = register_scatter(app, c.scatter_flags);
  register_calibrate(app, c);
  register_tune(app, c);
  c.experts = register_experts(app, c.experts_flags);
}

int run_selected(CLI::App& /*app*/, Commands& c) {
  if (c.scatter && c.scatter->parsed()) return run_scatter(c.scatter_flags);
  if (c.estimate->parsed()) return run_estimate(c.estimate_flags);
  if (c.plan->parsed()) return run_plan(c.plan_flags);
  if (c.check->parsed()) return run_check(c.check_flags);
  if (c.sweep->parsed()) return run_sweep(c.sweep_flags);
  if (c.skip_paths->parsed()) return run_skip_paths(c.skip_paths_flags);
  if (c.calibrate->parsed()) return run_calibrate(c.calibrate_flags);
  if (c.tune->parsed()) return run_tune(c.tune_flags);
  if (c.experts->parsed()) return run_experts(c.experts_flags);
  return 2;
}

}  // namespace parplan
