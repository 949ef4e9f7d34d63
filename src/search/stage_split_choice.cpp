// The layer-to-stage split and the recomputed-layer count the search gives
// each candidate (declared in search.h). The split is solved for the
// candidate's own ZeRO stage, sharding and recomputation: a split solved for
// ZeRO-0 without recomputation would miss the plans only they make fit.
#include <algorithm>

#include "cost/stage_layout.h"
#include "cost/step_cost.h"
#include "solvers/stage_split.h"
#include "src/search/search.h"

namespace parplan {

StageSplitInput stage_split_input(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                  const ParallelConfig& config, bool every_stage, bool first_last) {
  StageSplitInput in;
  in.layers = model.layers;
  in.stages = config.pp;
  // Megatron's layout (equal middle stages) on a uniform cluster; on a
  // heterogeneous one every stage runs at its own speed: the general split,
  // or Megatron's layout over the stages' own speeds (first_last).
  in.equal_middle_stages = !cluster.heterogeneous() || first_last;
  if (cluster.heterogeneous()) every_stage = true;
  in.layer_time_s.resize(config.pp);
  in.extra_time_s.resize(config.pp);
  in.layer_memory_bytes.resize(config.pp);
  in.extra_memory_bytes.resize(config.pp);
  in.memory_cap_bytes.assign(config.pp, job.memory_budget_bytes(cluster.device.usable_hbm_bytes()));
  ParallelConfig even = config;
  even.first_stage_layers = even.last_stage_layers = 0;
  even.stage_split = {};
  // Stage 1 holds the most in-flight micro-batches of the middle stages, so
  // unless asked for every stage it stands for all of them.
  StageCoefficients middle;
  if (config.pp > 2 && !every_stage) middle = stage_coefficients(model, cluster, job, even, 1, false);
  for (int s = 0; s < config.pp; ++s) {
    const bool edge = s == 0 || s == config.pp - 1;
    const StageCoefficients k =
        edge || every_stage ? stage_coefficients(model, cluster, job, even, s, false) : middle;
    in.layer_time_s[s] = k.layer_time_s;
    in.extra_time_s[s] = std::max(0.0, k.extra_time_s);
    in.layer_memory_bytes[s] = std::max(0.0, k.layer_memory_bytes);
    in.extra_memory_bytes[s] = std::max(0.0, k.fixed_memory_bytes);
  }
  return in;
}

bool even_split(const ParallelConfig& config) {
  return config.first_stage_layers == 0 && config.last_stage_layers == 0 && !config.custom_split();
}

bool same_split(const ParallelConfig& a, const ParallelConfig& b) {
  return a.first_stage_layers == b.first_stage_layers && a.last_stage_layers == b.last_stage_layers &&
         a.stage_split == b.stage_split;
}

bool apply_stage_split(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                       ParallelConfig& config, bool memory_capped, bool first_last) {
  if (config.pp < 2 || config.vp != 1) return false;
  // A heterogeneous cluster's stages run at their own speeds: the general
  // split (every stage its own count), which is also the only layout there
  // when pp does not divide the layers. Its coefficients are read off one
  // and two layers per stage, so the even layout they start from need not
  // be one a run could use.
  const bool general = cluster.heterogeneous() && !first_last;
  if (general && config.pp > ParallelConfig::kMaxSplitStages) return false;
  ParallelConfig even = config;
  even.first_stage_layers = even.last_stage_layers = 0;
  even.stage_split = {};
  StageSplitInput input = stage_split_input(model, cluster, job, even, general, first_last);
  if (!memory_capped) input.memory_cap_bytes.clear();
  const StageSplitResult split = stage_split_fast(input);
  if (!split.feasible()) return false;
  bool uneven = model.layers % config.pp != 0;
  for (int layers : split.layers_per_stage) uneven = uneven || layers != model.layers / config.pp;
  config = even;
  if (!uneven) return true;
  // A general split whose middle stages hold the same layers is Megatron's
  // first/last split: written so, as a job file or a launch file gives it.
  bool equal_middle = true;
  for (int s = 2; s + 1 < config.pp; ++s)
    equal_middle = equal_middle && split.layers_per_stage[s] == split.layers_per_stage[1];
  if (general && !equal_middle) {
    for (int s = 0; s < config.pp; ++s)
      config.stage_split[s] = static_cast<std::uint16_t>(split.layers_per_stage[s]);
  } else {
    config.first_stage_layers = split.layers_per_stage.front();
    config.last_stage_layers = split.layers_per_stage.back();
  }
  return true;
}

int min_recompute_layers(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         ParallelConfig config) {
  config.recompute = Recompute::kFull;
  // The largest chunk bounds the count: an uneven split's big stage holds
  // more than layers / (pp * vp).
  const int largest = max_chunk_layers(model.layers, config);
  // Memory falls monotonically as more layers are recomputed: binary search.
  config.recompute_layers = largest;
  if (!estimate_memory(model, cluster, job, config).fits) return -1;
  int low = 1, high = largest;
  while (low < high) {
    const int mid = (low + high) / 2;
    config.recompute_layers = mid;
    if (estimate_memory(model, cluster, job, config).fits)
      high = mid;
    else
      low = mid + 1;
  }
  return low;
}

}  // namespace parplan
