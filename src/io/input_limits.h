// Upper bounds on every size a user gives (flags, job files, models), and the
// check that a loaded model/cluster/job stays inside them. They keep every
// product the planner forms (tp*pp*cp, nodes*GPUs per node, gbs*seq, layers
// per stage) far from int overflow and every search finite. docs/errors.md
// lists them.
#pragma once

#include <cstdint>
#include <string>

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

/// GPUs (ranks) in a job: 2^20, ten times the largest clusters built (2024:
/// about 100,000 GPUs).
inline constexpr std::int64_t kMaxGpus = 1 << 20;
/// Nodes of a job or a cluster profile.
inline constexpr std::int64_t kMaxNodes = 1 << 20;
/// Global batch, in sequences, and micro-batch.
inline constexpr std::int64_t kMaxGbs = 1 << 24;
/// Sequence length, in tokens.
inline constexpr std::int64_t kMaxSeq = 1 << 24;
/// Transformer layers of a model (published models have at most a few hundred).
inline constexpr std::int64_t kMaxLayers = 10000;
/// Hidden size, FFN size, heads and other per-layer widths.
inline constexpr std::int64_t kMaxWidth = 1 << 20;
/// Virtual pipeline stages the search tries per rank (a pinned vp may be
/// larger, up to the layers per stage).
inline constexpr int kMaxSearchVp = 64;
/// Points of one sweep (models x GPU counts x global batches).
inline constexpr std::int64_t kMaxSweepPoints = 100000;
/// Bytes of one input file (job, model, cluster): 1 MiB, hundreds of times
/// the largest real one.
inline constexpr std::int64_t kMaxInputFileBytes = 1 << 20;
/// Bytes of any other YAML input (run files, problems): 16 MiB, tens of
/// thousands of runs; parsing that much takes a few seconds.
inline constexpr std::int64_t kMaxYamlFileBytes = 16 << 20;
/// JSON inputs nest at most this deep (a config.json: 3 levels; scatter's
/// steps: 2): deeper would overflow the stack where a value is quoted back.
inline constexpr int kMaxJsonDepth = 64;
/// --time-limit and --solver-time-limit, in seconds (a week).
inline constexpr double kMinTimeLimitS = 0.001;
inline constexpr double kMaxTimeLimitS = 7 * 24 * 3600.0;

/// Throws InputError naming the field and the bound when the model, the
/// cluster or the job is outside the limits above (or a product of them
/// would not fit in an int).
void check_input_limits(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job);

/// tp * pp * cp of a config as a 64-bit product (no overflow for any int
/// sizes).
inline std::int64_t model_ranks(std::int64_t tp, std::int64_t pp, std::int64_t cp) { return tp * pp * cp; }

/// fp8 needs fp8 tensor cores, which a profile states with peak_fp8_tflops
/// (Transformer Engine and torchao's float8 refuse devices before Hopper/Ada,
/// MI250X has none): without it an fp8 job is refused, not timed at the bf16
/// peak. `where` names the field for the error line.
void check_precision_supported(const ClusterSpec& cluster, Precision precision, const std::string& where);

}  // namespace parplan
