// Plan: a chosen configuration with everything needed to report it and to
// write its launch files.
#pragma once

#include <vector>

#include "cost/cost_report.h"
#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

struct Plan {
  ModelSpec model;
  ClusterSpec cluster;
  JobSpec job;
  ParallelConfig config;
  CostReport cost;
};

}  // namespace parplan
