// Random jobs and the optimum of a job, shared by the property tests
// (property_monotonic_test.cpp, property_engine_test.cpp).
#pragma once

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/model_loader.h"
#include "src/plan/engine_plan.h"

namespace parplan::property {

/// A job drawn at random: a catalog model, whole nodes, a batch and a sequence.
struct RandomJob {
  std::string model;
  JobSpec job;
};

/// Models small enough to plan in milliseconds, dense and MoE.
inline const std::vector<std::string>& property_models() {
  static const std::vector<std::string> models = {"gpt-1.7b",  "gpt-7.5b",   "llama3-8b",
                                                  "gpt-18.4b", "llama3-70b", "mixtral-8x7b"};
  return models;
}

/// `count` jobs for `cluster`, drawn from a generator seeded with `seed`:
/// 1 to 8 nodes (at most the cluster's), gbs 32..512, seq 1024..8192 (at
/// most a model's learned positions).
inline std::vector<RandomJob> random_jobs(const ClusterSpec& cluster, int count, unsigned seed) {
  std::mt19937 rng(seed);
  const auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const int max_nodes = cluster.nodes > 0 ? std::min(cluster.nodes, 8) : 8;
  std::vector<RandomJob> jobs;
  for (int i = 0; i < count; ++i) {
    RandomJob r;
    r.model = property_models()[static_cast<std::size_t>(pick(static_cast<int>(property_models().size())))];
    const int nodes = 1 << pick(4);
    r.job.gpus = std::min(nodes, max_nodes) * cluster.ranks_per_node;
    r.job.gbs = 32 << pick(5);
    r.job.seq = 1024 << pick(4);
    // Learned position embeddings (the GPT family) stop at their table.
    const ModelSpec model = load_model(r.model);
    if (model.position == PositionKind::kLearned && model.max_positions > 0)
      r.job.seq = std::min(r.job.seq, model.max_positions);
    jobs.push_back(r);
  }
  return jobs;
}

/// The optimum `plan` reports (the fastest predicted plan an engine of the
/// selection accepts) for the default policy: exact collectives, released
/// schemes. Infinity when the job has no plan.
inline RankedConfig optimum(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                            const EngineSelection& engines = {}) {
  PlannerOptions options;
  options.solver = "exhaustive";
  options.engines = engines;
  const EnginePlanResult result = plan_for_engines(model, cluster, job, options, 1);
  if (result.planner.ranked.empty()) {
    RankedConfig none;
    none.cost.time.step_s = std::numeric_limits<double>::infinity();
    return none;
  }
  return result.planner.ranked.front();
}

inline double optimum_s(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job) {
  return optimum(model, cluster, job).cost.time.step_s;
}

}  // namespace parplan::property
