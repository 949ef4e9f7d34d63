// parplan scatter: per-step heterogeneity-adaptive sequence parallelism
// (FlexSP) for the variable-length batches of a training run.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "src/cli/common_flags.h"

namespace parplan {

struct ScatterFlags {
  std::string lengths, model, cluster, coefficients;
  /// Unset unless given: with --coefficients, giving them is refused.
  std::optional<std::string> precision, recompute;
  /// Given but empty is refused, not read as "the coefficients' sizes".
  std::optional<std::string> group_sizes;
  std::string solver = "cbc", out, svg;
  std::optional<int> gpus, zero;
  /// The step --svg draws (0-based).
  int svg_step = 0;
  double step_time_limit_ms = 50;
  /// Per step, after the plan search: milliseconds of ruin and recreate.
  double improve_ms = 0;
  /// --format, --time-limit (the whole command), --solver-time-limit (each
  /// step's MILP, on top of --step-time-limit-ms), --no-timings.
  CommonFlags common;
};

CLI::App* register_scatter(CLI::App& app, ScatterFlags& flags);
int run_scatter(const ScatterFlags& flags);

}  // namespace parplan
