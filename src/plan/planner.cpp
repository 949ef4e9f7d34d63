#include "src/plan/planner.h"

#include <stdexcept>

#include "solvers/solve.h"
#include "src/io/input_error.h"

namespace parplan {

namespace {
void check_pins(const ModelSpec& model, const JobSpec& job) {
  const SearchPins& p = job.pins;
  const auto need = [&](bool ok, const std::string& text) {
    if (!ok) throw InputError(text);
  };
  need(p.tp <= 0 || model.heads % p.tp == 0,
       "--tp " + std::to_string(p.tp) + " does not divide the model's " + std::to_string(model.heads) + " attention heads");
  need(p.tp <= 0 || job.gpus % p.tp == 0, "--tp " + std::to_string(p.tp) + " does not divide --gpus " + std::to_string(job.gpus));
  need(p.pp <= 0 || p.pp <= model.layers,
       "--pp " + std::to_string(p.pp) + " exceeds the model's " + std::to_string(model.layers) + " layers");
  need(p.pp <= 0 || job.gpus % p.pp == 0, "--pp " + std::to_string(p.pp) + " does not divide --gpus " + std::to_string(job.gpus));
  need(p.cp <= 0 || job.seq % (p.cp > 1 ? 2 * p.cp : 1) == 0,
       "--cp " + std::to_string(p.cp) + ": --seq must be divisible by 2 * cp");
  need(p.mbs <= 0 || job.gbs % p.mbs == 0, "--mbs " + std::to_string(p.mbs) + " does not divide --gbs " + std::to_string(job.gbs));
  const long model_ranks = static_cast<long>(p.tp > 0 ? p.tp : 1) * (p.pp > 0 ? p.pp : 1) * (p.cp > 0 ? p.cp : 1);
  need(job.gpus % model_ranks == 0, "the pinned tp * pp * cp = " + std::to_string(model_ranks) +
                                        " does not divide --gpus " + std::to_string(job.gpus));
}
}  // namespace

PlannerResult plan_job(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                       const PlannerOptions& options) {
  SolverBackend backend;
  try {
    backend = parse_backend(options.solver);
  } catch (const std::invalid_argument&) {
    throw InputError("--solver must be cbc, glpk or exhaustive (got '" + options.solver + "')");
  }
  (void)backend;
  check_pins(model, job);
  PlannerResult result;
  SearchOptions search;
  search.top_k = options.top_k;
  result.search = search_configs(model, cluster, job, search);
  result.ranked = result.search.best;
  return result;
}

}  // namespace parplan
