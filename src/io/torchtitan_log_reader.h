// torchtitan training logs: the metrics lines (step, loss, memory, tps,
// tflops, mfu) give the step time and peak memory; the log lacks the parallel
// config, so the TOML job file beside it (and optional flags) give it.
#pragma once

#include <string>

#include "cost/spec/cluster_spec.h"
#include "solvers/fit_run.h"

namespace parplan {

/// True when `text` holds torchtitan metrics lines (`step: N  loss: ...
/// tps: ...`), colour codes or not.
bool looks_like_torchtitan_log(const std::string& text);

/// The log at `path` with its job file: `<stem>.toml` (v0.2.x) or `<stem>.py`
/// (main's Python config) beside it, or the one `.toml` or `.py` in its
/// directory; `<stem>.flags` (torchrun / train.py command-line
/// flags, `--section.key value`) overrides the TOML and may give the world
/// size (`--nnodes`, `--nproc_per_node`). Throws InputError naming the file.
FitRun read_torchtitan_log(const std::string& path, const ClusterSpec& cluster);

/// How the job file beside a log is written: v0.2.x's TOML, or torchtitan
/// main's Python config module (src/io/torchtitan_python_config.h).
enum class TorchtitanJobFormat { kToml, kPython };

/// The same from texts (tests): the log, the job config, the flags (may be
/// empty); `job_origin` names the job file in messages (default: the log's
/// name with "(job file)").
FitRun parse_torchtitan_log(const std::string& log_text, const std::string& job_text,
                            const std::string& flags_text, const std::string& origin,
                            const ClusterSpec& cluster,
                            TorchtitanJobFormat format = TorchtitanJobFormat::kToml,
                            const std::string& job_origin = "");

}  // namespace parplan
