// The subcommands: each registers its flags and runs when selected.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "src/cli/job_options.h"

namespace parplan {

struct PlanFlags {
  JobFlags job;
  int top = 5;
  std::string solver = "cbc";
  std::string emit, out, launcher;
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
  std::string csv, json, plot, emit_slurm_array, engine = "megatron", solver = "cbc";
  int array_parallel = 4;
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
};

void register_commands(CLI::App& app, Commands& commands);
/// Runs the parsed subcommand; returns the exit code.
int run_selected(CLI::App& app, Commands& commands);

int run_estimate(const JobFlags& flags);
int run_plan(const PlanFlags& flags);
int run_check(const CheckFlags& flags);
int run_sweep(const SweepFlags& flags);

}  // namespace parplan
