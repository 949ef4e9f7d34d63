// Megatron-LM training logs: the printed `arguments` block gives the model
// and the parallel config; the iteration lines (`elapsed time per iteration
// (ms)`) give the step time. Warm-up iterations are skipped and the median
// taken.
#pragma once

#include <string>

#include "cost/spec/cluster_spec.h"
#include "solvers/fit_run.h"
#include "src/io/megatron_iteration_lines.h"

namespace parplan {

/// True when `text` looks like a Megatron-LM log (has iteration lines or an
/// arguments block).
bool looks_like_megatron_log(const std::string& text);

/// Throws InputError naming the file: no arguments block, a model argument
/// missing, no iteration times after warm-up, a config the model cannot
/// express.
FitRun read_megatron_log(const std::string& path, const ClusterSpec& cluster);

/// The same from the log's text (tests).
FitRun parse_megatron_log(const std::string& text, const std::string& origin, const ClusterSpec& cluster);

}  // namespace parplan
