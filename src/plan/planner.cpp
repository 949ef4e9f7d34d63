#include "src/plan/planner.h"

#include <stdexcept>

#include "cost/step_cost.h"
#include "solvers/recompute_split.h"
#include "solvers/solve.h"
#include "solvers/stage_split.h"
#include "cost/stage_layout.h"
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

std::vector<SolverCertificate> certify(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                       const ParallelConfig& config, SolverBackend backend, double time_limit_s) {
  std::vector<SolverCertificate> certificates;
  SolveOptions options;
  options.time_limit_s = time_limit_s;
  if (config.pp > 1 && config.vp == 1) {
    // The layer-to-stage split of the plan, solved as a MILP over every
    // stage's own coefficients.
    const StageSplitInput input = stage_split_input(model, cluster, job, config, true);
    certificates.push_back(stage_split_milp(input, backend, options).certificate);
  }
  if (config.recompute == Recompute::kFull) {
    RecomputeSplitInput input;
    ParallelConfig stored = config;
    stored.recompute = Recompute::kNone;
    for (int s = 0; s < config.pp; ++s) {
      const int layers = stage_layers(model.layers, config, s);
      const StageCoefficients k = stage_coefficients(model, cluster, job, stored, s);
      input.layers_per_stage.push_back(layers);
      input.base_time_s.push_back(k.extra_time_s + layers * k.layer_time_s);
      input.recompute_time_s.push_back(k.recompute_time_s);
      input.memory_bytes.push_back(std::max(0.0, k.fixed_memory_bytes + layers * k.layer_memory_bytes));
      input.saved_bytes_per_layer.push_back(std::max(0.0, k.recompute_saved_bytes));
      input.memory_cap_bytes.push_back(cluster.device.hbm_bytes);
    }
    certificates.push_back(recompute_split_milp(input, backend, options).certificate);
  }
  return certificates;
}

PlannerResult plan_job(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                       const PlannerOptions& options) {
  SolverBackend backend;
  try {
    backend = parse_backend(options.solver);
  } catch (const std::invalid_argument&) {
    throw InputError("--solver must be cbc, glpk or exhaustive (got '" + options.solver + "')");
  }
  check_pins(model, job);
  PlannerResult result;
  SearchOptions search;
  search.top_k = options.top_k;
  result.search = search_configs(model, cluster, job, search);
  result.ranked = result.search.best;
  if (!result.ranked.empty()) result.certificates = certify(model, cluster, job, result.ranked.front().config, backend,
                                                            options.solver_time_limit_s);
  return result;
}

}  // namespace parplan
