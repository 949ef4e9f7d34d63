// Plan: a chosen configuration with everything needed to report it and to
// write its launch files.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "cost/cost_report.h"
#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

/// Whether `c` is PyTorch FSDP's hybrid sharding (HSDP) as `job`'s engine
/// runs it: an hpZ group with exact collectives under a PyTorch-FSDP engine.
inline bool is_hsdp(const ParallelConfig& c, const JobSpec& job) {
  return c.zeropp() && job.pytorch_fsdp() && c.hpz_ranks > 1 && !c.qwz && !c.qgz;
}

/// torchtitan's degrees of an HSDP config: "HSDP (shard N x replicate R)",
/// or "HSDP (shard N x cp C x replicate R)" (FSDP over dp_shard x cp).
inline std::string hsdp_label(const ParallelConfig& c) {
  const int group = std::min(c.hpz_ranks, c.dp * c.cp);
  std::string out = "HSDP (shard ";
  if (c.cp > 1 && group % c.cp == 0)
    out += std::to_string(group / c.cp) + " x cp " + std::to_string(c.cp);
  else
    out += std::to_string(group);
  return out + " x replicate " + std::to_string(c.dp * c.cp / std::max(1, group)) + ")";
}

struct Plan {
  ModelSpec model;
  ClusterSpec cluster;
  JobSpec job;
  ParallelConfig config;
  CostReport cost;
};

}  // namespace parplan
