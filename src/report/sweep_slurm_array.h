// --emit-slurm-array: the launch files of every feasible sweep point
// (emit_launch_files under Slurm) and a Slurm job array that runs them:
// DIR/point-NNNN/, DIR/points.txt, DIR/array.sbatch, DIR/submit_all.sh.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "src/emit/emit.h"
#include "src/plan/sweep.h"

namespace parplan {

struct SlurmArrayOptions {
  /// The engine of a point whose plan carries no engine tag; a tagged point
  /// (SweepOutcome::engine) is written for its own engine.
  Engine engine = Engine::kMegatron;
  /// Must not exist, or be an empty directory.
  std::filesystem::path dir;
  /// Array tasks running at once (the %K of --array=0-N%K).
  int array_parallel = 4;
  /// --train-iters / --hours: each point's -t follows the same rule as plan
  /// --emit (src/emit/wall_time.h), capped at the site's limit.
  long long train_iters = 0;
  double hours = 0;
  /// The torchtitan config system written (--engine-version).
  TorchtitanVersion torchtitan_version = TorchtitanVersion::kMain;
};

/// One array task.
struct SlurmArrayTask {
  /// Row of the point in the sweep (SweepPoint::index).
  int row = 0;
  /// The point's directory, relative to the array directory (point-NNNN, NNNN = row).
  std::string point_dir;
  /// From the point's own job.sbatch.
  int nodes = 0;
  int gpus_per_node = 0;  ///< 0 when the script does not ask for GPUs per node
  std::string time;       ///< -t
};

struct SlurmArrayResult {
  /// Absolute.
  std::filesystem::path dir;
  /// Task i of the array is tasks[i] (line i+1 of points.txt).
  std::vector<SlurmArrayTask> tasks;
  /// Feasible points left out, one line each: the point and why (engine rules).
  std::vector<std::string> skipped;
};

/// The array directory made absolute; throws InputError naming
/// --emit-slurm-array unless it is absent or an empty directory whose parent
/// can be created.
std::filesystem::path check_slurm_array_dir(const std::filesystem::path& dir);

/// Writes the array. Nothing is written when no feasible point can be emitted
/// (tasks empty). On failure, whatever was written is removed and InputError
/// is thrown.
SlurmArrayResult emit_slurm_array(const SweepGrid& grid, const std::vector<SweepOutcome>& outcomes,
                                  const SlurmArrayOptions& options);

/// "0-3,5,7-8" from ascending task ids.
std::string slurm_array_ranges(const std::vector<int>& ids);

}  // namespace parplan
