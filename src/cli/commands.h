// The subcommands: each registers its flags and runs when selected.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/cli/job_options.h"
#include "src/cli/scatter_command.h"

namespace parplan {

struct PlanFlags {
  JobFlags job;
  int top = 5;
  std::string solver = "cbc";
  std::string emit, out, launcher, engine_version;
  /// Training length the launch files are sized for (0: not given).
  long long train_iters = 0;
  double hours = 0;
};

struct CheckFlags {
  JobFlags job;
  std::optional<double> max_gap_percent;
  std::string solver = "cbc";
};

struct SweepFlags {
  CommonFlags common;
  std::string models, cluster, gpus, gbs, precision = "bf16";
  int seq = 0;
  std::string csv, json, plot, emit_slurm_array, engine = "any", solver = "cbc";
  /// --engine-version: torchtitan's config system for --emit-slurm-array.
  std::string engine_version;
  /// Unset: 4 with --emit-slurm-array (refused without it).
  std::optional<int> array_parallel;
  long long train_iters = 0;
  double hours = 0;
  bool allow_lossy_comm = false, allow_unreleased = false;
  std::optional<std::string> memory_headroom;
  std::optional<double> power_limit_w;
};

/// skip-paths: without --time-limit the search gets 60 s (it stops earlier
/// at its work bound on most problems).
struct SkipPathsFlags {
  CommonFlags common;
  std::string problem, svg, solver = "cbc";
};

struct CalibrateFlags {
  CommonFlags common;
  std::string cluster, objective = "mean", out, svg, name, solver = "cbc";
  /// Given but empty is refused, not read as "the default selection".
  std::optional<std::string> fit;
  std::vector<std::string> runs;
  bool no_cross_validate = false;
};

struct TuneFlags {
  CommonFlags common;
  /// emit empty: the job file's engine, else megatron.
  std::string job_file, emit, out, simulate, launcher, engine_version;
  int trials = 6, train_iters = 30;
};

/// `parplan experts` (numbers kept as text: parsed as decimal, see
/// experts_command.cpp).
struct ExpertsFlags {
  std::string loads, gpus, nodes, groups, redundant, job_file, model, cluster, solver = "cbc";
  std::string time_limit, solver_time_limit, format = "table", out, svg;
  /// With --model/--cluster: the batch of the predicted step (the job is the
  /// --gpus GPUs of one expert-parallel group).
  std::string gbs, seq;
  bool no_timings = false;
};

struct Commands {
  CLI::App* estimate = nullptr;
  CLI::App* plan = nullptr;
  CLI::App* check = nullptr;
  JobFlags estimate_flags;
  PlanFlags plan_flags;
  CheckFlags check_flags;
  CLI::App* sweep = nullptr;
  SweepFlags sweep_flags;
  CLI::App* skip_paths = nullptr;
  SkipPathsFlags skip_paths_flags;
  CLI::App* scatter = nullptr;
  ScatterFlags scatter_flags;
  CLI::App* calibrate = nullptr;
  CalibrateFlags calibrate_flags;
  CLI::App* tune = nullptr;
  TuneFlags tune_flags;
  CLI::App* experts = nullptr;
  ExpertsFlags experts_flags;
};

void register_commands(CLI::App& app, Commands& commands);
/// --train-iters and --hours of the launch-file writers (plan --emit, sweep --emit-slurm-array).
void add_emit_length_flags(CLI::App& app, long long& train_iters, double& hours);
/// estimate, plan and check: --timeline FILE.svg or FILE.json.
void add_timeline_flag(CLI::App& app, std::string& path);
/// Runs the parsed subcommand; returns the exit code.
int run_selected(CLI::App& app, Commands& commands);

int run_estimate(const JobFlags& flags);
int run_plan(const PlanFlags& flags);
int run_check(const CheckFlags& flags);
int run_sweep(const SweepFlags& flags);
void register_skip_paths(CLI::App& app, Commands& commands);
int run_skip_paths(const SkipPathsFlags& flags);
void register_calibrate(CLI::App& app, Commands& commands);
int run_calibrate(const CalibrateFlags& flags);
void register_tune(CLI::App& app, Commands& commands);
int run_tune(const TuneFlags& flags);
CLI::App* register_experts(CLI::App& app, ExpertsFlags& flags);
int run_experts(const ExpertsFlags& flags);

}  // namespace parplan
