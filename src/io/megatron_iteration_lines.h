// A Megatron-LM (or Megatron-DeepSpeed) log's iteration lines, which give
// the step time, and its memory reports, which give the peak memory.
#pragma once

#include <string>
#include <vector>

namespace parplan {

/// Iterations whose logging window reaches into the first `kWarmupIterations`
/// are warm-up (allocator growth, NCCL setup, compilation) and skipped.
inline constexpr int kWarmupIterations = 3;

/// What the lines after each launch's warm-up give.
struct MegatronIterationLines {
  /// One per logged window that ran the full global batch with no skipped
  /// or NaN iteration (milliseconds per iteration, as Megatron averages them).
  std::vector<double> times_ms;
  /// Windows of a smaller global batch (--rampup-batch-size).
  int ramp_up_windows = 0;
  /// Windows with a skipped (loss-scale overflow) or NaN iteration: a
  /// skipped iteration runs no optimizer step, so its window is faster than
  /// the run's steps.
  int unclean_windows = 0;
  /// The largest `max reserved` of any rank's memory report (MiB; 0 when the
  /// log has none): the caching allocator's peak, as torchtitan's `memory:`.
  double peak_reserved_mib = 0;
};

/// `blocks`: the first line of each arguments block (a restarted launch
/// counts its warm-up from there). Throws InputError naming the file and
/// line for an elapsed time or memory figure that is no number or no
/// plausible step.
MegatronIterationLines read_megatron_iteration_lines(const std::string& text, const std::string& origin,
                                                     int log_interval, long long full_batch,
                                                     const std::vector<int>& blocks);

}  // namespace parplan
