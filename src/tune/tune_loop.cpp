#include "src/tune/tune_loop.h"

#include <cstdio>
#include <fstream>

#include "cost/step_cost.h"
#include "solvers/profile_fit.h"
#include "src/emit/emit_internal.h"
#include "src/io/input_error.h"
#include "src/io/job_loader.h"
#include "src/io/write_error.h"
#include "src/plan/planner.h"
#include "src/tune/simulated_log.h"

namespace parplan {

namespace fs = std::filesystem;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

fs::path trial_log_path(const fs::path& out_dir, const std::string& trial_dir) {
  return out_dir / "logs" / (trial_dir + ".log");
}

namespace {
Plan trial_plan(const TuneRequest& r, const Trial& t) {
  Plan p;
  p.model = r.model;
  p.cluster = r.cluster;
  p.job = t.job;
  p.config = t.config;
  p.cost = estimate_cost(r.model, r.cluster, t.job, t.config);
  return p;
}

std::string config_text(const Trial& t, bool moe) {
  // Two trials differing only in how many layers full recomputation
  // covers must not read alike.
  std::string recompute;
  if (t.config.recompute == Recompute::kSelective) recompute = " recompute selective";
  if (t.config.recompute == Recompute::kFull)
    recompute = t.config.recompute_layers > 0
                    ? " recompute full (" + std::to_string(t.config.recompute_layers) + " layers per chunk)"
                    : " recompute full (every layer)";
  // A MoE trial names its expert layout: the layout trials differ in it.
  std::string experts;
  if (moe)
    experts = " ep " + std::to_string(t.config.ep) + " etp " + std::to_string(t.config.etp) +
              (t.config.a2a_hierarchical ? " a2a hierarchical" : "") +
              (t.config.ep_overlap ? " ep-overlap" : "");
  // Context parallelism, an uneven split and HSDP's shard group tell trials
  // apart that the other sizes do not.
  std::string layout;
  if (t.config.cp > 1) layout += " cp " + std::to_string(t.config.cp);
  if (t.config.first_stage_layers > 0 || t.config.last_stage_layers > 0)
    layout += " first/last " + std::to_string(t.config.first_stage_layers) + "/" +
              std::to_string(t.config.last_stage_layers);
  if (t.config.zero == 3 && t.config.hpz_ranks > 1) layout += " shard " + std::to_string(t.config.hpz_ranks);
  char buf[320];
  std::snprintf(buf, sizeof buf, "gpus %d gbs %d seq %d: tp %d pp %d vp %d dp %d%s%s mbs %d zero %d%s%s%s",
                t.job.gpus, t.job.gbs, t.job.seq, t.config.tp, t.config.pp, t.config.vp, t.config.dp,
                layout.c_str(), experts.c_str(), t.config.mbs, t.config.zero, t.config.sp ? " sp" : "",
                recompute.c_str(), t.config.overlap_grad_reduce ? "" : " no-overlap-grad-reduce");
  return buf;
}

void write_text(const fs::path& path, const std::string& text, std::vector<fs::path>& files) {
  std::ofstream out(path);
  if (!out) throw InputError("--out: cannot write " + path.string());
  out << text;
  files.push_back(path);
}
}  // namespace

void check_tune_engine(Engine engine, const std::string& where) {
  if (engine != Engine::kMegatron && engine != Engine::kMegatronDeepSpeed && engine != Engine::kTorchtitan)
    throw InputError(
        where +
        ": tune reads its trials' logs back from Megatron-LM, Megatron-DeepSpeed and torchtitan; use "
        "megatron, megatron-deepspeed or torchtitan");
}

TuneResult write_tune_loop(const TuneRequest& r) {
  check_tune_engine(r.engine, "--emit");
  const bool torchtitan = r.engine == Engine::kTorchtitan;
  if (torchtitan) {
    const auto [family, flavor] = torchtitan_family_flavor(r.model);
    if (family.empty() || (family != "llama3" && torchtitan_catalog_model(family, flavor).empty()))
      throw InputError(
          "--emit torchtitan: calibrate reads back the torchtitan configs of the llama3 flavors and of the "
          "catalog models torchtitan builds (qwen3-30b-a3b), and " +
          r.model.name + " is neither; use --emit megatron");
    const bool v02 = r.torchtitan_version == TorchtitanVersion::kV02;
    if (v02 && family != "llama3")
      throw InputError("--engine-version 0.2: torchtitan v0.2.x's TOML config writes llama3 flavors only; " +
                       r.model.name + " is none: tune it for torchtitan main (drop --engine-version)");
    // main runs rowwise Float8 only; v0.2.x's TOML trials (which calibrate
    // reads back too) run tensorwise, as priced.
    if (torchtitan_version_problem(r.torchtitan_version, r.job))
      throw InputError(
          "--emit torchtitan: torchtitan main's Float8 converter runs rowwise scaling only, and parplan "
          "prices tensorwise: add --engine-version 0.2 (v0.2.x's TOML trials, tensorwise Float8), or tune a "
          "bf16 job");
  }
  std::error_code ec;
  if (fs::exists(r.out_dir, ec) && !fs::is_directory(r.out_dir, ec))
    throw InputError("--out " + r.out_dir.string() +
                     ": is a file, not a directory; give a new or empty directory for the trials");
  if (fs::exists(r.out_dir, ec) && !fs::is_empty(r.out_dir, ec))
    throw InputError("--out " + r.out_dir.string() + ": the directory is not empty; give a new one");
  // A pin that cannot hold is named as `plan` names it, before any search.
  check_plan_pins(r.model, r.job);
  bool stopped_at_deadline = false, no_valid_split = false;
  std::string infeasible_reason;
  auto candidates =
      candidate_trials(r.model, r.cluster, r.job,
                       {r.deadline, &stopped_at_deadline, parse_engine_selection(engine_name(r.engine)),
                        &infeasible_reason, &no_valid_split});
  TuneResult result;
  result.stopped_at_deadline = stopped_at_deadline;
  // As `plan` answers the same job: a job no config divides is bad input,
  // one whose configs do not fit is infeasible, naming what binds.
  if (candidates.empty() && !stopped_at_deadline) {
    if (no_valid_split) throw InputError(infeasible_reason);
    result.infeasible = infeasible_reason;
    return result;
  }
  std::string engine_violation;
  std::vector<Trial> accepted;
  for (const auto& t : candidates) {
    // torchtitan's FSDP always overlaps its reduce-scatters: no config
    // exposes them, so that probe would run as the plan it came from.
    if (torchtitan && !t.config.overlap_grad_reduce) continue;
    // The hierarchical partition is written for torchtitan as HSDP but
    // costed as DeepSpeed's scheme: its log would be read back as another
    // config. (hpZ under torchtitan is HSDP both ways.)
    if (torchtitan && t.config.zero >= 2 && t.config.hierarchical_partition) continue;
    const auto violations = engine_rule_violations(trial_plan(r, t), r.engine);
    if (violations.empty())
      accepted.push_back(t);
    else if (engine_violation.empty())
      engine_violation = violations.front();
  }
  if (accepted.empty() && stopped_at_deadline) {
    // A valid request with no answer in the time given: exit 1, as plan.
    result.infeasible = "--time-limit reached before the plan search found a plan to try; raise --time-limit";
    return result;
  }
  if (accepted.empty()) {
    result.infeasible =
        "no plan that " + std::string(engine_name(r.engine)) + " accepts; " +
        (engine_violation.empty() ? std::string("the plans the trials come from cannot be read back")
                                  : "the best plan breaks: " + engine_violation);
    return result;
  }
  const auto constants = tune_constants(r.cluster);
  result.trials = choose_trials(r.model, r.cluster, accepted, constants, r.trials);
  for (const auto& c : identifiable_constants(r.cluster, trial_runs(r.model, result.trials), constants, 1e-3))
    result.pinned.push_back(c.key);

  // run_trials.sh starts the trials one after another from one shell; a
  // torchrun trial over several nodes needs its launch.sh started on every
  // one of them (NODE_RANK, MASTER_ADDR), which one shell cannot do.
  if (r.launcher == Launcher::kTorchrun) {
    for (std::size_t i = 0; i < result.trials.size(); ++i) {
      const Trial& t = result.trials[i];
      const int nodes = emit_detail::layout_of(trial_plan(r, t)).nnodes;
      if (nodes > 1)
        throw InputError(
            "--launcher torchrun: trial " + std::to_string(i + 1) + " (" + t.name + ") runs on " +
            std::to_string(nodes) +
            " nodes, and run_trials.sh starts the trials from one shell, which cannot start "
            "torchrun on every node; use --launcher slurm (each trial one sbatch --wait), or a job "
            "of one node");
    }
  }
  // A parent that is a file, or no permission: one line, not an internal
  // error.
  fs::create_directories(r.out_dir / "logs", ec);
  if (ec)
    throw WriteError("--out " + r.out_dir.string() + ": cannot create the directory (" + ec.message() +
                     "); give a path where a new directory can be made");
  std::string script =
      "#!/usr/bin/env bash\n# Runs the trials one after another; each log goes to logs/NAME.log.\n"
      "set -euo pipefail\ncd \"$(dirname \"$0\")\"\nmkdir -p logs\nexport TRAIN_ITERS=\"${TRAIN_ITERS:-" +
      std::to_string(r.train_iters) + "}\"\n" +
      (torchtitan
           ? "# torchtitan's launch scripts read TRAIN_STEPS; each trial's config goes beside its log\n"
             "# (logs/NAME.py or .toml), where calibrate reads the parallel config the log does not print.\n"
             "export TRAIN_STEPS=\"$TRAIN_ITERS\"\n"
           : "");
  std::string table = "| trial | why | config | predicted step (s) |\n|---|---|---|---|\n";
  std::string layout_note;
  for (std::size_t i = 0; i < result.trials.size(); ++i) {
    const Trial& t = result.trials[i];
    char prefix[40];
    std::snprintf(prefix, sizeof prefix, "trial-%02d-", static_cast<int>(i + 1));
    const std::string dir = prefix + t.name;
    EmitOptions options;
    options.engine = r.engine;
    options.launcher = r.launcher;
    options.out_dir = r.out_dir / dir;
    options.torchtitan_version = r.torchtitan_version;
    // The scripts' header and #SBATCH -t are sized for what the trial runs.
    options.train_iters = r.train_iters;
    const auto files = emit_launch_files(trial_plan(r, t), options);
    result.files.insert(result.files.end(), files.begin(), files.end());
    const std::string log = "logs/" + dir + ".log";
    // torchtitan: the trial's job config (main's Python module, v0.2.x's
    // TOML), copied beside its log, where calibrate reads it.
    std::string config_file, config_ext;
    for (const auto& f : files)
      if (f.extension() == ".py" || f.extension() == ".toml") {
        config_file = f.filename().string();
        config_ext = f.extension().string();
      }
    if (torchtitan && config_file.empty())
      throw InputError("--emit torchtitan: the trial's files hold no job config to read the log against");
    if (torchtitan) script += "cp " + dir + "/" + config_file + " logs/" + dir + config_ext + "\n";
    if (r.launcher == Launcher::kSlurm)
      script += "sbatch --wait --output=" + log + " --export=ALL,TRAIN_ITERS=\"$TRAIN_ITERS\"" +
                (torchtitan ? ",TRAIN_STEPS=\"$TRAIN_STEPS\"" : "") + " " + dir + "/job.sbatch\n";
    else
      script += "bash " + dir + "/launch.sh > " + log + " 2>&1\n";
    char step[32];
    std::snprintf(step, sizeof step, "%.3f", t.predicted_step_s);
    table += "| " + dir + " | " + t.why + " | " + config_text(t, r.model.is_moe()) + " | " + step + " |\n";
    if (t.expert_layout && layout_note.empty())
      layout_note =
          "Which expert layout is faster is for the logs to say: parplan's MoE predictions are off by "
          "up to a third on published runs, and have ranked two expert layouts the wrong way round "
          "(docs/cost-model-moe.md in parplan). If " +
          dir + " runs faster than trial-01-" + result.trials.front().name +
          ", plan with its layout pinned (`--ep " + std::to_string(t.config.ep) +
          "`): the calibrated profile's constants are shared by "
          "every layout and may still rank them the other way.\n\n";
    if (r.simulate) {
      const CostReport truth = estimate_cost(r.model, *r.simulate, t.job, t.config);
      // A trial that fits the planning profile may not fit the simulated
      // cluster: it fails as a real one would, and calibrate leaves it out.
      // (Against what a process can allocate, as the plan's memory check.)
      const double usable_bytes = r.simulate->device.usable_hbm_bytes();
      if (truth.memory.peak_bytes > usable_bytes) {
        write_text(trial_log_path(r.out_dir, dir),
                   simulated_oom_log(truth.memory.peak_bytes / kGiB, usable_bytes / kGiB), result.files);
        ++result.simulated_oom;
      } else if (torchtitan) {
        write_text(
            trial_log_path(r.out_dir, dir),
            simulated_torchtitan_log(r.model, t.job, t.config, truth.time.step_s, r.train_iters,
                                     r.simulate->device.peak_bf16_flops_per_s, truth.memory.peak_bytes / kGiB,
                                     r.simulate->device.hbm_bytes / kGiB),
            result.files);
        std::error_code ec;
        const fs::path beside_log = r.out_dir / "logs" / (dir + config_ext);
        fs::copy_file(r.out_dir / dir / config_file, beside_log, ec);
        if (ec) throw InputError("--out: cannot write " + beside_log.string());
        result.files.push_back(beside_log);
      } else {
        write_text(
            trial_log_path(r.out_dir, dir),
            simulated_megatron_log(r.model, t.job, t.config, truth.time.step_s, r.train_iters, 10, r.engine),
            result.files);
      }
    }
  }
  write_text(r.out_dir / "run_trials.sh", script, result.files);
  fs::permissions(r.out_dir / "run_trials.sh", fs::perms::owner_exec | fs::perms::group_exec,
                  fs::perm_options::add);

  std::string pinned, fit_keys;
  for (const auto& k : result.pinned) {
    pinned += (pinned.empty() ? "" : ", ") + k;
    fit_keys += (fit_keys.empty() ? "" : ",") + k;
  }
  const std::string out = r.out_dir.string();
  std::string readme =
      "# Tuning loop: " + r.model.name + " on " + r.cluster.name + ", " + std::to_string(r.job.gpus) +
      " GPUs\n\n" +
      "Written by `parplan tune`. The trials are the best plan and runs chosen so that together they pin "
      "down " +
      "the profile constants the plans depend on (" + pinned + ").\n\n" + table + "\n" + layout_note +
      "\n## The loop\n\n"
      "Run these commands from the directory `parplan tune` ran in: their paths are relative to it.\n\n"
      "1. Run the trials (" +
      std::to_string(r.train_iters) + " iterations each; set the variables each launch " +
      (torchtitan ? std::string("script asks for, e.g. HF_ASSETS_PATH):\n\n")
                  : std::string("script asks for, e.g. MEGATRON_LM, DATA_PATH, TOKENIZER_MODEL):\n\n")) +
      "       bash " + out + "/run_trials.sh\n\n" +
      (r.simulate ? "   (This directory was written with `--simulate`: the logs are already in " + out +
                        "/logs, as the simulated cluster would write them. Skip this step: the script "
                        "would replace them with real runs' logs.)\n\n"
                  : std::string()) +
      "2. Fit the profile to the logs:\n\n"
      "       parplan calibrate --cluster " +
      r.cluster_arg + " --runs " + out + "/logs --fit '" + fit_keys + "' --out " + out +
      "/calibrated.yaml\n\n"
      "3. Plan again with the calibrated profile:\n\n"
      "       parplan plan --job " +
      r.job_file + " --cluster " + out + "/calibrated.yaml --engine " + engine_name(r.engine) +
      // v0.2.x's files are costed as v0.2.x runs them only when written.
      (torchtitan && r.torchtitan_version == TorchtitanVersion::kV02
           ? " --emit torchtitan --engine-version 0.2 --out " + out + "/next"
           : std::string()) +
      "\n";
  write_text(r.out_dir / "README.md", readme, result.files);
  return result;
}

}  // namespace parplan
