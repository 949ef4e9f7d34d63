// The wall time a Slurm script asks for: the training length (--train-iters,
// --hours, or an assumed default) at the plan's predicted step time plus a
// start-up allowance, capped at the site's limit for the job's node count
// (the profile's batch_limits).
#pragma once

#include <string>
#include <vector>

#include "src/plan/plan.h"

namespace parplan {

/// Iterations assumed when neither --train-iters nor --hours is given: the
/// length of Megatron-LM's and torchtitan's example runs (torchtitan's
/// llama3_8b/70b recipes: training.steps = 1000).
inline constexpr long long kDefaultTrainIters = 1000;
/// Start-up allowance (assumed, not measured): loading modules and Python
/// packages from a shared file system, communicator set-up over the whole
/// job, checkpoint loading and the first iterations' kernel tuning/compilation.
/// OLCF reports torchrun alone adding up to 10 minutes on Frontier; 15 minutes
/// covers an srun launch with a checkpoint load at scale.
inline constexpr double kStartupAllowanceS = 900;
/// Checkpoint interval when nothing forces a shorter one: Megatron-LM's
/// examples and torchtitan's recipes save every 500 steps
/// (CheckpointManager.Config(interval=500) in llama3/config_registry.py).
inline constexpr long long kCheckpointIntervalIters = 500;
/// Margin on the predicted step time when the profile states no larger
/// measured error (its calibration block's max_step_error).
inline constexpr double kStepTimeMargin = 0.10;

struct WallTime {
  /// What `#SBATCH -t` asks for, whole minutes.
  long long seconds = 0;
  /// Iterations the scripts run by default.
  long long train_iters = 0;
  /// Iterations that fit in `seconds` (train_iters unless capped).
  long long iters_that_fit = 0;
  /// The site's limit for the node count (0: the profile states none).
  double limit_s = 0;
  bool capped = false;
  /// When capped: save a checkpoint every this many iterations (a quarter of
  /// what fits, at most kCheckpointIntervalIters), so a resubmitted job resumes
  /// where the last one stopped; 0 when not capped.
  long long checkpoint_interval = 0;
  /// When capped: Megatron's --exit-duration-in-mins, after which it saves a
  /// checkpoint and exits inside the limit; 0 when not capped.
  long long exit_minutes = 0;
  /// Comment lines (without "# ") saying how the time was chosen.
  std::vector<std::string> explanation;
  /// Sentences for stderr (the cap, an unknown limit over 24 h).
  std::vector<std::string> notes;

  /// torchrun has no wall-time limit to meet: forget the cap and its notes.
  void drop_site_limit();
};

/// Throws InputError when train_iters/hours are out of range, --hours leaves no
/// time after the start-up allowance, or the profile's bins do not cover `nodes`.
WallTime plan_wall_time(const Plan& plan, int nodes, long long train_iters, double hours);

/// Slurm's time format: HH:MM:SS, or D-HH:MM:SS from 24 hours on.
std::string slurm_time(long long seconds);

}  // namespace parplan
