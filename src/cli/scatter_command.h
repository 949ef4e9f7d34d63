// parplan scatter: per-step heterogeneity-adaptive sequence parallelism
// (FlexSP) for the variable-length batches of a training run.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace parplan {

struct ScatterFlags {
  std::string lengths, model, cluster, precision = "bf16", recompute = "none", coefficients, group_sizes;
  std::string solver = "cbc", format = "table", out;
  std::optional<int> gpus, zero;
  double step_time_limit_ms = 50;
  std::optional<double> time_limit_s;
  bool no_timings = false;
};

CLI::App* register_scatter(CLI::App& app, ScatterFlags& flags);
int run_scatter(const ScatterFlags& flags);

}  // namespace parplan
