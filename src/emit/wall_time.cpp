#include "src/emit/wall_time.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "src/io/input_error.h"

namespace parplan {
namespace {

std::string hours_text(double seconds) {
  std::ostringstream out;
  out.precision(3);
  out << seconds / 3600.0 << " h";
  return out.str();
}

const WallTimeBin* bin_for(const BatchLimits& limits, int nodes) {
  for (const WallTimeBin& bin : limits.bins)
    if (nodes >= bin.min_nodes && nodes <= bin.max_nodes) return &bin;
  return nullptr;
}

}  // namespace

void WallTime::drop_site_limit() {
  capped = false;
  checkpoint_interval = 0;
  exit_minutes = 0;
  notes.clear();
}

std::string slurm_time(long long seconds) {
  const long long days = seconds / 86400;
  const long long h = seconds % 86400 / 3600, m = seconds % 3600 / 60, s = seconds % 60;
  char buffer[64];
  if (days > 0)
    std::snprintf(buffer, sizeof buffer, "%lld-%02lld:%02lld:%02lld", days, h, m, s);
  else
    std::snprintf(buffer, sizeof buffer, "%02lld:%02lld:%02lld", h, m, s);
  return buffer;
}

WallTime plan_wall_time(const Plan& plan, int nodes, long long train_iters, double hours) {
  if (train_iters > 0 && hours > 0) throw InputError("--train-iters and --hours: give one of them, not both");
  if (train_iters < 0 || train_iters > 1000000000LL)
    throw InputError("--train-iters must be between 1 and 1000000000");
  if (hours < 0 || hours > 8760) throw InputError("--hours must be above 0 and at most 8760 (one year)");
  WallTime w;
  const double margin = std::max(kStepTimeMargin, plan.cluster.calibration.calibrated()
                                                      ? plan.cluster.calibration.max_step_error
                                                      : plan.cluster.device.peak_uncertainty);
  const double step_s = std::max(plan.cost.time.step_s, 0.0) * (1.0 + margin);
  std::ostringstream how;
  how.precision(4);
  double needed_s = 0;
  if (hours > 0) {
    needed_s = hours * 3600.0;
    if (needed_s <= kStartupAllowanceS)
      throw InputError("--hours " + std::to_string(hours) +
                       " leaves no time for training after the 15-minute start-up allowance; give more");
    w.train_iters = step_s > 0 ? static_cast<long long>((needed_s - kStartupAllowanceS) / step_s) : 1;
    w.train_iters = std::max(w.train_iters, 1LL);
    how << "--hours " << hours << ": " << w.train_iters << " iterations fit at " << step_s
        << " s each after the start-up allowance";
  } else {
    w.train_iters = train_iters > 0 ? train_iters : kDefaultTrainIters;
    needed_s = static_cast<double>(w.train_iters) * step_s + kStartupAllowanceS;
    how << w.train_iters << " iterations"
        << (train_iters > 0 ? " (--train-iters)" : " (assumed: --train-iters not given)") << " x " << step_s
        << " s";
  }
  w.explanation.push_back(how.str());
  {
    std::ostringstream rule;
    rule << "= predicted step " << plan.cost.time.step_s << " s + "
         << static_cast<int>(std::lround(margin * 100))
         << " % margin (the profile's calibration error or 10 %), + "
         << static_cast<int>(kStartupAllowanceS / 60) << " min start-up allowance (assumed)";
    w.explanation.push_back(rule.str());
  }
  // Whole minutes; the tolerance keeps 70.0000001 min (float error) at 70.
  w.seconds = static_cast<long long>(std::ceil(needed_s / 60.0 - 1e-6)) * 60;
  w.iters_that_fit = w.train_iters;
  const BatchLimits& limits = plan.cluster.batch_limits;
  if (!limits.bins.empty()) {
    const WallTimeBin* bin = bin_for(limits, nodes);
    if (bin == nullptr)
      throw InputError("--emit: " + std::to_string(nodes) + " nodes is outside every wall-time bin of " +
                       plan.cluster.name + "'s batch_limits; use fewer nodes or extend the profile's bins");
    w.limit_s = bin->max_hours * 3600.0;
    std::ostringstream cap;
    cap << "site limit for " << nodes << " nodes (" << bin->min_nodes << "-" << bin->max_nodes
        << "): " << slurm_time(static_cast<long long>(w.limit_s)) << ", " << limits.source;
    w.explanation.push_back(cap.str());
    if (static_cast<double>(w.seconds) > w.limit_s) {
      w.capped = true;
      w.seconds = static_cast<long long>(w.limit_s);
      w.iters_that_fit = step_s > 0
                             ? static_cast<long long>(std::max(0.0, w.limit_s - kStartupAllowanceS) / step_s)
                             : w.train_iters;
      // Megatron measures its minutes from the start of its Python process:
      // the start-up allowance before it is spent again on the final save.
      w.exit_minutes =
          std::max(1LL, static_cast<long long>(std::floor((w.limit_s - kStartupAllowanceS - step_s) / 60.0)));
      w.checkpoint_interval = std::clamp(w.iters_that_fit / 4, 1LL, kCheckpointIntervalIters);
      std::ostringstream note;
      note << "the run needs " << hours_text(needed_s) << " but " << plan.cluster.name << " allows "
           << hours_text(w.limit_s) << " for " << nodes << " nodes; -t asks for the limit, in which about "
           << w.iters_that_fit << " of " << w.train_iters
           << " iterations fit: the scripts save a checkpoint every " << w.checkpoint_interval
           << " iterations (Megatron's when CHECKPOINT_DIR is set); resubmit job.sbatch to resume";
      w.notes.push_back(note.str());
      w.explanation.push_back("capped: about " + std::to_string(w.iters_that_fit) + " of " +
                              std::to_string(w.train_iters) + " iterations fit; a checkpoint every " +
                              std::to_string(w.checkpoint_interval) +
                              " iterations, resubmit to resume from the newest");
    }
  } else if (w.seconds > 24 * 3600) {
    w.notes.push_back(plan.cluster.name + " states no wall-time limit (batch_limits) and the run needs " +
                      hours_text(needed_s) + "; check your partition's MaxTime (sinfo -o '%P %l')");
  }
  return w;
}

}  // namespace parplan
