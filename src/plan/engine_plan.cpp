#include "src/plan/engine_plan.h"

#include <algorithm>

#include "src/emit/emit.h"

namespace parplan {

namespace {
// The capability tables leave out rules that depend on the model or the
// exact layout (torchtitan's flavors, Megatron's interleaving group rule):
// search deeper than asked so enough ranked plans survive them.
constexpr int kMinSearchDepth = 64;

// The ranked plans an engine of the selection accepts, each tagged with it;
// the first violation seen goes to `first_violation`.
std::vector<RankedConfig> accepted_plans(const ModelSpec& model, const ClusterSpec& cluster,
                                         const JobSpec& job, const PlannerOptions& options,
                                         const std::vector<RankedConfig>& ranked_plans,
                                         std::string* first_violation) {
  std::vector<RankedConfig> accepted;
  for (RankedConfig ranked : ranked_plans) {
    // An allowed unreleased scheme is checked as the engine it extends.
    const ParallelConfig released = options.allow_unreleased && ranked.config.hierarchical_partition
                                        ? released_part(ranked.config)
                                        : ranked.config;
    const Plan candidate{model, cluster, job, released, ranked.cost};
    // The tagged engine first, then the others of the selection.
    int engine = -1;
    std::string violation;
    for (int i = -1; i < options.engines.count && engine < 0; ++i) {
      const int e = i < 0 ? ranked.engine : static_cast<int>(options.engines.engines[i]);
      if (e < 0 || capability_problem(engine_capabilities(static_cast<Engine>(e)), model, job, released))
        continue;
      const auto violations = engine_rule_violations(candidate, static_cast<Engine>(e));
      if (violations.empty())
        engine = e;
      else if (violation.empty())
        violation = violations.front();
    }
    if (engine < 0) {
      if (first_violation->empty()) *first_violation = violation;
      continue;
    }
    ranked.engine = engine;
    accepted.push_back(ranked);
  }
  return accepted;
}

// Each deepening searches this many times as deep.
constexpr int kDeepeningFactor = 8;
}  // namespace

EnginePlanResult plan_for_engines(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                  const PlannerOptions& options, int top) {
  EnginePlanResult out;
  // A model an engine cannot build breaks its rules in every plan: when no
  // engine of the selection can, say so without searching (the search would
  // deepen until it held every plan).
  out.model_refused = options.engines.count > 0;
  for (int i = 0; i < options.engines.count && out.model_refused; ++i) {
    const std::vector<std::string> problems = engine_model_problems(model, options.engines.engines[i]);
    out.model_refused = !problems.empty();
    if (out.model_refused && out.engine_violation.empty()) out.engine_violation = problems.front();
  }
  if (out.model_refused) return out;
  out.engine_violation.clear();
  PlannerOptions deep = options;
  deep.top_k = std::max(top, kMinSearchDepth);
  out.planner = plan_job(model, cluster, job, deep);
  PlannerResult& result = out.planner;
  if (result.ranked.empty()) return out;
  std::vector<RankedConfig> accepted =
      accepted_plans(model, cluster, job, options, result.ranked, &out.engine_violation);
  // Every plan searched may break a rule the capability tables leave out
  // (torchtitan's flavors): the union's best plans can all be one engine's
  // that refuses the model while another engine's lie deeper. Search
  // deeper until one is accepted or the search holds no more plans.
  while (accepted.empty() && static_cast<long>(result.ranked.size()) >= deep.top_k &&
         !result.search.stopped_at_deadline) {
    deep.top_k *= kDeepeningFactor;
    result = plan_job(model, cluster, job, deep);
    out.engine_violation.clear();
    accepted = accepted_plans(model, cluster, job, options, result.ranked, &out.engine_violation);
  }
  const RankedConfig searched_best = result.ranked.front();
  if (accepted.empty()) {
    result.ranked.clear();
    return out;
  }
  // The recommendation looks at every accepted plan, not only the --top shown.
  out.recommended.why = recommend_plan(cluster, accepted);
  out.recommended.plan = accepted[static_cast<std::size_t>(out.recommended.why.index)];
  if (static_cast<int>(accepted.size()) > top) accepted.resize(static_cast<std::size_t>(std::max(1, top)));
  result.ranked = std::move(accepted);
  out.engine_violation.clear();
  const RankedConfig& best = result.ranked.front();
  if (best.config.tp != searched_best.config.tp || best.cost.time.step_s != searched_best.cost.time.step_s) {
    SolverBackend backend = parse_backend(options.solver);
    result.certificates = certify(model, cluster, job, best.config, backend, options.solver_time_limit_s);
  }
  // The notes describe the plan actually reported.
  result.notes = plan_notes(model, cluster, job, best.config, best.cost);
  for (const std::string& note : deepspeed_extension_notes(Plan{model, cluster, job, best.config, best.cost}))
    result.notes.push_back(note);
  if (!out.recommended.why.reason.empty()) result.notes.push_back(out.recommended.why.reason);
  return out;
}

AcrossEnginesResult plan_across_engines(const ModelSpec& model, const ClusterSpec& cluster,
                                        const std::vector<EngineJob>& jobs, const PlannerOptions& options,
                                        int top) {
  AcrossEnginesResult best;
  std::vector<EngineOptimum> optima;
  for (const EngineJob& each : jobs) {
    PlannerOptions alone = options;
    alone.engines = single_engine(each.engine);
    EnginePlanResult planned = plan_for_engines(model, cluster, each.job, alone, top);
    EngineOptimum optimum;
    optimum.engine = each.engine;
    if (planned.planner.ranked.empty()) {
      const SearchResult& search = planned.planner.search;
      const std::string prefix = std::string(engine_name(each.engine)) + ": ";
      const std::string& violation = planned.engine_violation;
      optimum.reason =
          planned.model_refused
              ? "cannot build the model as it is: " +
                    (violation.rfind(prefix, 0) == 0 ? violation.substr(prefix.size()) : violation)
          : !violation.empty()               ? "no plan it accepts; the best breaks: " + violation
          : !search.engine_refusal.empty()   ? "does not run this job: " + search.engine_refusal
          : search.infeasible_reason.empty() ? std::string("no feasible plan")
                                             : "no feasible plan: " + search.infeasible_reason;
      optima.push_back(std::move(optimum));
      continue;
    }
    optimum.best = planned.planner.ranked.front();
    optima.push_back(optimum);
    const double step_s = optimum.best.cost.time.step_s;
    if (best.found && step_s >= best.planned.planner.ranked.front().cost.time.step_s) continue;
    best.planned = std::move(planned);
    best.job = each.job;
    best.found = true;
  }
  // Fastest first (the search order on a tie, as the choice above), then
  // the engines without a plan.
  std::stable_sort(optima.begin(), optima.end(), [](const EngineOptimum& a, const EngineOptimum& b) {
    if (a.reason.empty() != b.reason.empty()) return a.reason.empty();
    return a.reason.empty() && a.best.cost.time.step_s < b.best.cost.time.step_s;
  });
  best.planned.planner.engine_optima = std::move(optima);
  return best;
}

std::vector<Engine> engines_running(const EngineSelection& selection, const Plan& plan,
                                    std::string* why_not) {
  std::vector<Engine> out;
  for (int i = 0; i < selection.count; ++i) {
    const Engine e = selection.engines[i];
    const EngineCapabilities& caps = engine_capabilities(e);
    // Every reason at once, so that a user fixing the config sees them all:
    // the engine's argument rules (each says what to do), or the capability
    // table's where no rule catches the config.
    const char* problem = capability_problem(caps, plan.model, plan.job, plan.config);
    const bool explain = why_not != nullptr && why_not->empty();
    std::string reason;
    if (problem == nullptr || explain)
      for (const std::string& violation : engine_rule_violations(plan, e))
        reason += (reason.empty() ? "" : reason.back() == '.' ? " " : "; ") + violation;
    if (reason.empty() && problem != nullptr)
      reason = std::string(caps.name) + ": " + problem + " (" + caps.revision + ")";
    if (reason.empty())
      out.push_back(e);
    else if (why_not != nullptr && why_not->empty())
      *why_not = reason;
  }
  return out;
}

}  // namespace parplan
