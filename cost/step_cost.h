// The cost model's entry point: memory per device and step time of one
// ParallelConfig for a job. Pure: same inputs, same numbers; no allocation.
#pragma once

#include "cost/cost_report.h"
#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

/// Predicts one config. The config must be structurally valid (dimensions
/// multiply to the world, layers lay out over stages); see config_problem().
CostReport estimate_cost(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         const ParallelConfig& config);
/// The same, with the config's memory already computed by estimate_memory
/// (the search checks the fit first and would compute it twice).
CostReport estimate_cost(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         const ParallelConfig& config, const MemoryBreakdown& memory);

/// Step time only: estimate_cost(...).time without memory, FLOPs and
/// throughput (the search's lower bound per shape).
TimeBreakdown estimate_step_time(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                 const ParallelConfig& config);

/// Memory only (cheaper; the search prunes with it before timing).
MemoryBreakdown estimate_memory(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                const ParallelConfig& config);

/// Per-stage linear model for the stage-split and recompute formulations:
/// stage time per micro-batch = extra + layers * layer_time (+ recomputed *
/// recompute_time); peak memory = fixed + layers * layer_memory (- recomputed
/// * recompute_saved), for the config as given (with full recomputation:
/// every layer recomputed); recompute_* are the marginal cost and saving of
/// recomputing one more layer in full.
struct StageCoefficients {
  double layer_time_s = 0;
  double extra_time_s = 0;
  double layer_memory_bytes = 0;
  double fixed_memory_bytes = 0;
  double recompute_time_s = 0;
  double recompute_saved_bytes = 0;
};
/// With `recompute_terms` false, recompute_time_s and recompute_saved_bytes
/// are left 0 (the stage split reads only the time and memory lines).
StageCoefficients stage_coefficients(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                     const ParallelConfig& config, int stage, bool recompute_terms = true);

/// Ranks of the config's data-parallel group (dp x cp, on pipeline stage 0)
/// inside one domain of `level`: 2 for a package of Frontier with tp 1, 8
/// for its node, dp * cp for the job.
int partition_ranks(const ClusterSpec& cluster, const ParallelConfig& config, PartitionLevel level);

/// ZeRO++ as DeepSpeed ships it on top of ZeRO-3 (Wang et al. 2023): hpZ
/// over the data-parallel ranks of one node, qwZ int8 weights, qgZ int4
/// gradients. Sets zero 3.
void apply_zeropp(const ClusterSpec& cluster, ParallelConfig& config);
/// Hierarchical partitioning with `placement` (default: the 3-level scheme,
/// weights per package, gradients per node, optimizer over the job) and the
/// quantized collectives it builds on. Sets zero 3.
void apply_hierarchical_partition(ParallelConfig& config, const PartitionPlacement& placement = {});

/// Why a hierarchical placement cannot be laid on this cluster (nullptr when
/// it can): the level groups must tile the data-parallel group.
const char* placement_problem(const ClusterSpec& cluster, const ParallelConfig& config);

/// Why a config cannot run at all (nullptr when it can): sizes that do not
/// divide, layouts Megatron rejects. Returned text names the rule.
const char* config_problem(const ModelSpec& model, const JobSpec& job, const ParallelConfig& config);

}  // namespace parplan
