#include "src/cli/engine_cost.h"

#include <cstdio>

#include "cost/step_cost.h"
#include "src/plan/engine_plan.h"

namespace parplan {

bool attention_named(const JobFlags& flags, const ResolvedJob& r) {
  return flags.attention.has_value() || r.file_attention_given;
}

ParallelConfig config_on_engine(const JobFlags& flags, const ResolvedJob& r, ParallelConfig config,
                                Engine engine) {
  // Unnamed, the attention is each engine's own, as plan searches it: the
  // profile's, but flash on torchtitan, which runs SDPA only.
  if (!attention_named(flags, r))
    config.flash_attention = r.cluster.default_flash_attention || engine == Engine::kTorchtitan;
  return config;
}

EngineCost cost_on_engines(const JobFlags& flags, const ResolvedJob& r, const ParallelConfig& config,
                           const EngineSelection& selection) {
  EngineCost out{r.job, config, estimate_cost(r.model, r.cluster, r.job, config), -1, {}};
  if (!selection.any) return out;
  bool chosen = false;
  for (const EngineJob& each : jobs_per_engine(flags)) {
    const ParallelConfig config_here = config_on_engine(flags, r, config, each.engine);
    const CostReport cost = estimate_cost(r.model, r.cluster, each.job, config_here);
    if (engines_running(single_engine(each.engine), Plan{r.model, r.cluster, each.job, config_here, cost},
                        nullptr)
            .empty())
      continue;
    out.per_engine.push_back({each.engine, cost.time.step_s, cost.memory.fits});
    // A fit first, then the faster; the union's order on a tie.
    const bool better = !chosen || cost.memory.fits > out.cost.memory.fits ||
                        (cost.memory.fits == out.cost.memory.fits && cost.time.step_s < out.cost.time.step_s);
    if (!better) continue;
    out.job = each.job;
    out.config = config_here;
    out.cost = cost;
    out.engine = static_cast<int>(each.engine);
    chosen = true;
  }
  return out;
}

std::string per_engine_text(const EngineCost& costed) {
  std::string text;
  char step[32];
  for (std::size_t i = 0; i < costed.per_engine.size(); ++i) {
    const EngineCost::OnEngine& e = costed.per_engine[i];
    std::snprintf(step, sizeof step, "%.3f s", e.step_s);
    text += std::string(i ? ", " : " ") + engine_capabilities(e.engine).name + " (" + step +
            (e.fits ? ")" : ", does not fit)");
  }
  return text;
}

std::string why_no_engine_runs(const JobFlags& flags, const ResolvedJob& r, const ParallelConfig& config) {
  std::string reasons;
  for (const EngineJob& each : jobs_per_engine(flags)) {
    const ParallelConfig config_here = config_on_engine(flags, r, config, each.engine);
    const CostReport cost = estimate_cost(r.model, r.cluster, each.job, config_here);
    std::string why;
    if (!engines_running(single_engine(each.engine), Plan{r.model, r.cluster, each.job, config_here, cost},
                         &why)
             .empty())
      continue;
    reasons += (reasons.empty() ? "" : "; ") + why;
  }
  return reasons;
}

}  // namespace parplan
