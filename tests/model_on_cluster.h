// The fixture many cost tests start from: a model on a cluster with a job's
// size (GPUs, global batch, sequence) and a parallel config to fill in.
#pragma once

#include <string>
#include <utility>

#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan::test {

struct ModelOnCluster {
  ModelSpec model;
  ClusterSpec cluster;
  JobSpec job;
  ParallelConfig config;
  ModelOnCluster(ModelSpec model_spec, const std::string& cluster_name, int gpus, int gbs, int seq)
      : model(std::move(model_spec)), cluster(load_cluster(cluster_name)) {
    job.gpus = gpus;
    job.gbs = gbs;
    job.seq = seq;
  }
  ModelOnCluster(const std::string& model_name, const std::string& cluster_name, int gpus, int gbs, int seq)
      : ModelOnCluster(load_model(model_name), cluster_name, gpus, gbs, seq) {}
  CostReport cost() const { return estimate_cost(model, cluster, job, config); }
};

}  // namespace parplan::test
