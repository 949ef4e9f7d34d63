// How far off parplan was on published runs like the one a user plans: the
// held-out runs (calibration/heldout-published-runs.yaml, which no profile
// was fitted to) on the same hardware profile, predicted as they are, and
// their step-time errors among those that share the plan's precision (fp8
// or 16-bit), kind of model (MoE or dense), sequence length class (long:
// 32K tokens and up), element-wise kernels (fused by the engine, or eager
// PyTorch's one kernel per operator) and weight sharding (ZeRO-3 / FSDP or
// not). A
// profile's calibration error says how well it fits its own runs; this says
// how well it predicted runs it never saw, where that is known.
#pragma once

#include <optional>
#include <string>

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

struct HeldoutAlike {
  int runs = 0;
  double mean_abs_error = 0;  // fraction of the measured step time
  double max_abs_error = 0;
  /// Signed mean error: negative when parplan predicted those runs too fast.
  double mean_error = 0;
  /// What the runs share with the plan, e.g. "fp8, dense, seq < 32K".
  std::string alike;
};

/// The runs a plan is compared with share all five traits where at least
/// this many do; else the sharding, then the precision, is let go.
inline constexpr int kHeldoutAlikeMinRuns = 3;

/// Sequences of this many tokens and more count as long.
inline constexpr int kHeldoutLongSeq = 32768;

/// nullopt when the profile has no held-out runs, fewer than
/// kHeldoutAlikeMinRuns share even the kind of model, the length class and
/// the element-wise kernels,
/// or the run file cannot be read (the data directory lacks it): the
/// annotation is left out rather than guessed. The runs are read and
/// predicted once per process.
std::optional<HeldoutAlike> heldout_alike(const ClusterSpec& cluster, const ModelSpec& model,
                                          const JobSpec& job, const ParallelConfig& config);

/// One line for the tables: "28 published runs like this (fp8, dense, seq <
/// 32K): mean |error| 4.0 %, worst 8.7 %, predicted 1.2 % too fast on
/// average", or "none on this profile".
std::string heldout_alike_text(const std::optional<HeldoutAlike>& alike);

}  // namespace parplan
