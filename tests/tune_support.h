// A tune request whose trials' logs are simulated on `truth`: the loop as a
// test runs it (job file and cluster argument as the README prints them).
#pragma once

#include <filesystem>

#include "src/emit/engine_capabilities.h"
#include "src/tune/tune_loop.h"

namespace parplan::test {

/// A job of `gpus` GPUs, `gbs` sequences of `seq` tokens, resolved as
/// `tune --emit ENGINE` resolves it: that engine's recipe.
inline JobSpec recipe_job(const char* engine, int gpus, int gbs, int seq) {
  JobSpec job;
  job.gpus = gpus;
  job.gbs = gbs;
  job.seq = seq;
  apply_engine_recipe(engine, job);
  return job;
}

inline TuneRequest simulated_tune_request(const ModelSpec& model, const ClusterSpec& cluster,
                                          const JobSpec& job, int trials,
                                          const std::filesystem::path& out_dir, const ClusterSpec& truth) {
  TuneRequest r;
  r.model = model;
  r.cluster = cluster;
  r.job = job;
  r.job_file = "job.yaml";
  r.cluster_arg = cluster.name;
  r.trials = trials;
  r.out_dir = out_dir;
  r.simulate = truth;
  return r;
}

}  // namespace parplan::test
