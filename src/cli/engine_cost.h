// --engine any in estimate and check: a config costed on each engine that
// runs it, under that engine's recipe, as plan --engine any searches.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cost/cost_report.h"
#include "src/cli/job_options.h"

namespace parplan {

struct EngineCost {
  /// The job the config is costed under: the chosen engine's (under any),
  /// else the resolved one.
  JobSpec job;
  /// The config as costed: under any without a named attention, with the
  /// chosen engine's own attention (flash on torchtitan).
  ParallelConfig config;
  CostReport cost;
  /// Under any: the engine whose cost `cost` is (an Engine value); -1 when
  /// none runs the config or one engine was asked for.
  int engine = -1;
  /// Under any: every engine that runs the config, with its step time and
  /// whether the config fits in memory under its recipe.
  struct OnEngine {
    Engine engine;
    double step_s;
    bool fits;
  };
  std::vector<OnEngine> per_engine;
};

/// Whether --attention or the job file's config names the attention kernel.
bool attention_named(const JobFlags& flags, const ResolvedJob& resolved);
/// The config as `engine` runs it: unless the attention is named, the
/// engine's own (the profile's; flash on torchtitan), as plan searches it.
ParallelConfig config_on_engine(const JobFlags& flags, const ResolvedJob& resolved, ParallelConfig config,
                                Engine engine);

/// " megatron (61.872 s, does not fit), megatron-deepspeed (66.332 s)".
std::string per_engine_text(const EngineCost& costed);

/// With one engine (or a job file's): the config under the resolved job.
/// Under any: each engine that runs the config (capability table, then its
/// own rules) costs it under its recipe (jobs_per_engine), and the one where
/// it fits, then the fastest, is kept; when none runs it, the resolved job's
/// cost (the union's recipe).
EngineCost cost_on_engines(const JobFlags& flags, const ResolvedJob& resolved, const ParallelConfig& config,
                           const EngineSelection& selection);

/// Under any, when no engine runs the config: each engine's reason, as
/// "megatron: ...; deepspeed: ...".
std::string why_no_engine_runs(const JobFlags& flags, const ResolvedJob& resolved,
                               const ParallelConfig& config);

}  // namespace parplan
