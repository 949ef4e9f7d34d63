// The planning policy of `plan`: the search in the engines' spaces, each
// ranked plan re-checked against its engine's own argument rules, and the
// certificates and notes of the plan that survives.
#pragma once

#include <string>
#include <vector>

#include "src/plan/plan.h"
#include "src/plan/planner.h"
#include "src/plan/recommend.h"

namespace parplan {

struct EnginePlanResult {
  PlannerResult planner;
  /// When `planner.ranked` is empty after the engine rules: the first rule
  /// the best plan broke (empty when the search itself found nothing).
  std::string engine_violation;
  /// Whether engine_violation is of the model itself (engine_model_problems,
  /// for every engine of the selection): no plan was searched, none could
  /// run.
  bool model_refused = false;
  /// The recommended plan (src/plan/recommend.h); its why.index is 0 when
  /// it is the optimum, planner.ranked.front().
  RecommendedPlan recommended;
};

/// Plans `job` for the engines of `options.engines`, keeping `top` plans
/// that an engine of the selection accepts (engine_rule_violations), each
/// tagged with that engine. Throws InputError as plan_job does.
EnginePlanResult plan_for_engines(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                  const PlannerOptions& options, int top);

/// A job as one engine runs it: the engine's recipe, the user's own recipe
/// choices on top (src/emit/engine_capabilities.h, apply_engine_defaults).
struct EngineJob {
  Engine engine = Engine::kMegatron;
  JobSpec job;
};

struct AcrossEnginesResult {
  EnginePlanResult planned;
  /// The job of the engine whose plans `planned` holds.
  JobSpec job;
  /// Whether any engine has a plan.
  bool found = false;
};

/// --engine any: plans each engine alone under its own recipe
/// (plan_for_engines, `options.engines` narrowed to it) and keeps the engine
/// whose optimum is fastest, the first of `jobs` on a tie: its plans, its
/// recommendation and its job, so every number is the engine's as it runs
/// the plan. Engines are searched in turn, not in one union space, because
/// each costs the same config differently (loss and attention kernels,
/// HSDP, gradient schedule).
AcrossEnginesResult plan_across_engines(const ModelSpec& model, const ClusterSpec& cluster,
                                        const std::vector<EngineJob>& jobs, const PlannerOptions& options,
                                        int top);

/// The engines of `selection` that run `plan` (capability table, then the
/// engine's own rules); `why_not` gets every reason of the first engine
/// that does not, "; "-separated.
std::vector<Engine> engines_running(const EngineSelection& selection, const Plan& plan, std::string* why_not);

}  // namespace parplan
