// parplan tune: writes the trial runs of the auto-tuning loop (launch files
// through src/emit, a script that runs them with logs at known paths, a
// README of the loop) and, with a true profile, the logs it would produce.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "src/emit/emit.h"
#include "src/tune/trials.h"

namespace parplan {

struct TuneRequest {
  ModelSpec model;
  ClusterSpec cluster;
  JobSpec job;
  /// As the user gave them (for the README's commands).
  std::string job_file, cluster_arg;
  int trials = 6;
  Engine engine = Engine::kMegatron;
  /// torchtitan: main's Python configs or v0.2.x's TOML (the job already
  /// costed as that version runs it: cost_as_torchtitan_version).
  TorchtitanVersion torchtitan_version = TorchtitanVersion::kMain;
  Launcher launcher = Launcher::kSlurm;
  std::filesystem::path out_dir;
  int train_iters = 30;
  /// --simulate: the cluster that "runs" the trials.
  std::optional<ClusterSpec> simulate;
  /// --time-limit: the plan search stops here (trials from the best so far).
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

struct TuneResult {
  std::vector<Trial> trials;
  /// Constants the trials pin down (rank check of their design).
  std::vector<std::string> pinned;
  std::vector<std::filesystem::path> files;
  /// The deadline stopped the plan search: the trials come from the best
  /// plans found so far.
  bool stopped_at_deadline = false;
  /// Not empty when no plan of the job fits or passes the engine's rules:
  /// the binding constraint, as `plan` names it (then nothing is written).
  std::string infeasible;
  /// --simulate: trials that ran out of memory on the simulated cluster
  /// (their logs end in PyTorch's out-of-memory error).
  int simulated_oom = 0;
};

/// Throws InputError (naming `where`: --emit, or the job file's engine
/// field) unless calibrate reads back the logs of `engine`'s trials.
void check_tune_engine(Engine engine, const std::string& where);

/// Throws InputError: engine whose logs calibrate cannot read, an out
/// directory that is not empty, a job no config even divides.
TuneResult write_tune_loop(const TuneRequest& request);

/// DIR/logs/NAME.log: where trial NAME's log goes.
std::filesystem::path trial_log_path(const std::filesystem::path& out_dir, const std::string& trial_dir);

}  // namespace parplan
