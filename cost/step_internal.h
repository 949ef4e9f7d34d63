// Internals of the step-cost model shared by its files (pipeline schedule,
// data-parallel/ZeRO cost, stage memory): the per-stage and per-layer structs
// and the functions that build them. Not part of the cost model's interface.
#pragma once

#include "cost/collectives.h"
#include "cost/compute_time.h"
#include "cost/memory.h"
#include "cost/moe.h"
#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan::detail {

// How the ZeRO-3 family shards one stage's model states over its
// data-parallel group: group sizes of each partition and collective.
struct ShardGroups {
  int shard = 1;      // the whole data-parallel group (dp * cp)
  int params = 1;     // 16-bit weights (primary partition)
  int forward = 1;    // forward all-gather
  int backward = 1;   // backward all-gather (secondary partition)
  int grads = 1;      // gradient reduce-scatter per micro-batch
  int optimizer = 1;  // optimizer states
};

/// Group sizes of each ZeRO partition and collective for the data-parallel
/// group `span` of one stage.
ShardGroups shard_groups(const ClusterSpec& cluster, const ParallelConfig& c, const GroupSpan& span);
/// The shard group of PyTorch FSDP's hybrid sharding (HSDP: FSDP2 over a
/// 2-D mesh, FSDP1 HYBRID_SHARD), which is what a PyTorch FSDP engine runs
/// for a ZeRO-3 plan with hpz_ranks > 1: weights, gradients and optimizer
/// states sharded over hpz_ranks ranks and replicated across the others,
/// not DeepSpeed hpZ's secondary weight copy beside a full partition. 0 when
/// the plan is not HSDP.
int hsdp_shard_ranks(const JobSpec& job, const ParallelConfig& c);
/// The routed experts' shard group under HSDP: torchtitan borrows the
/// expert-parallel ranks from dp_shard x cp x tp and shards the experts over
/// the rest of that block (its dp_shard_mod_ep mesh), replicated across
/// dp_replicate, so hsdp x tp / (ep x etp) of the expert-data-parallel
/// ranks; 0 when the plan is not HSDP or that group is all of them.
int hsdp_expert_shard_ranks(const JobSpec& job, const ParallelConfig& c);
/// Ranks of the data-parallel group `span` inside one domain of `level`.
int level_ranks(const ClusterSpec& cluster, const GroupSpan& span, PartitionLevel level);

// Everything about one pipeline stage that memory and time need.
struct StageLoad {
  int layers = 0;
  double moe_layers = 0;
  double params = 0;  // before ZeRO sharding; without the routed experts
  // Routed-expert parameters on this rank (split over etp x ep), sharded
  // by ZeRO over the expert-data-parallel group.
  double expert_params = 0;
  // Multi-token-prediction modules on this stage (the last), and whether
  // their layer is an MoE layer.
  int mtp = 0;
  bool mtp_moe = false;
  bool first = false;
  bool last = false;
  // The FSDP unit gathered first in the forward and reduced last in the
  // backward: the embedding on the first stage, else one layer (dense
  // parameters, split over tp).
  double edge_unit_params = 0;
  // Of `params`, the transformer blocks' linear weights: what an fp8
  // FSDP all-gather moves in fp8 (JobSpec::fsdp_fp8_all_gather).
  double linear_params = 0;
};

/// Stage `stage` holding `layers` layers (or the layout's own count).
StageLoad stage_load(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c, int stage,
                     int layers);
StageLoad stage_load(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c, int stage);

/// The stages of a split that is not custom whose time or memory can be the
/// largest: the first and the last (embedding, head, the most micro-batches
/// in flight) and, of the middle ones, the earliest of each mix of layers
/// and MoE layers that no earlier middle stage holds at least as much of
/// (an earlier stage holds more micro-batches in flight, the same mix costs
/// the same time). `all`: more mixes than fit; look at every stage.
struct CriticalStages {
  static constexpr int kMax = 16;
  int count = 0;
  int stage[kMax] = {};
  bool all = false;
};
CriticalStages critical_stages(const ModelSpec& model, const ParallelConfig& c);
ActivationShape activation_shape(const JobSpec& job, const ParallelConfig& c);
/// The MoE block of one micro-batch on one rank under config `c`.
MoeShape moe_shape(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c);
/// Layers of a stage that full recomputation recomputes.
int recomputed_layers(const ParallelConfig& c, int stage_layer_count);

struct StageMemory {
  ModelStateBytes states;
  double secondary_bytes = 0;
  double activations_bytes = 0;
  double buffers_bytes = 0;
  double peak_bytes = 0;
};

StageMemory stage_memory(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         const ParallelConfig& c, const StageLoad& load, int stage);
/// The most loaded stage's memory.
MemoryBreakdown memory_breakdown(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                 const ParallelConfig& c);

// Per-layer, per-micro-batch communication on the critical path.
struct LayerComm {
  double tp_forward_s = 0;
  double tp_backward_s = 0;
  /// The forward's two sequence-parallel all-gathers alone.
  double tp_forward_gathers_s = 0;
  double cp_forward_s = 0;
  double cp_backward_s = 0;
  double ep_forward_s = 0;
  double ep_backward_s = 0;
  /// All-gather of a partitioned checkpoint before its layer is recomputed.
  double checkpoint_gather_s = 0;
};

// Everything per layer and per micro-batch that stage times are built from.
struct PerLayerCosts {
  LayerComputeTimes dense, moe;
  LayerComm comm;
  EdgeComputeTimes edges;
  double p2p_s = 0;             // point-to-point per micro-batch on the critical path
  double overlap_slowdown = 0;  // compute slowdown beside overlapped traffic
  /// Forward work selective recomputation repeats per dense / MoE layer:
  /// Megatron's attention core, or all but what torchtitan's op policy
  /// keeps (selective_recompute_s).
  double selective_dense_s = 0, selective_moe_s = 0;
  /// Tensor-parallel traffic selective recomputation replays per layer:
  /// torchtitan's op policy saves the reduce-scatters' outputs but not the
  /// sequence-parallel all-gathers', so the backward gathers the attention's
  /// and the FFN's inputs again (half the forward's TP traffic); 0 otherwise.
  double selective_tp_s = 0;
  /// What a dense layer's full recomputation leaves out of its forward
  /// (cost/recompute_replay.h): the FFN's output projection GEMM, and of its
  /// forward tensor-parallel traffic the reduction of that projection's
  /// output; 0 where the whole layer is replayed.
  double full_recompute_skipped_s = 0, full_recompute_skipped_tp_s = 0;
  /// Megatron's --recompute-modules mlp / moe replay the FFN's half of a
  /// dense layer's forward TP traffic and an MoE layer's forward dispatch
  /// and combine, per layer.
  double selective_dense_tp_s = 0, selective_moe_ep_s = 0;
  /// An MoE layer's expert block in the forward pass (router, permutation,
  /// experts, combine), for the moe module.
  double moe_block_forward_s = 0;
  /// FSDP2's copy-out of the gathered parameters (JobSpec::fsdp_copy_out),
  /// seconds per parameter of the stage and per unshard; 0 when it does not
  /// apply. ZeRO-3 unshards every unit in the forward and again in the
  /// backward of each micro-batch.
  double unshard_copy_s_per_param = 0;
  /// FSDP2's copy of each unit's gradients into the reduce-scatter input
  /// (in the reduce dtype), or FSDP1's cast and division of them, once per
  /// micro-batch in the backward: seconds per parameter of the stage; 0
  /// when it does not apply.
  double reduce_copy_in_s_per_param = 0;
  /// The engine's summing of micro-batch gradients outside the GEMM
  /// (cost/grad_accumulation.h): seconds per parameter of the stage and per
  /// micro-batch, in its backward; 0 when it does not apply.
  double grad_accumulate_s_per_param = 0;
};

/// The forward time selective recomputation repeats in one layer whose
/// compute times are `times`: the attention core (Megatron), or under
/// torchtitan's op policy the whole forward but the attention kernel and
/// the matmuls it keeps (wq, wv, w1: every other one, cost/memory.cpp; the
/// others' share of the weight-GEMM FLOPs is replayed, as are the
/// element-wise kernels and casts, whose outputs it does not keep). MoE
/// layers: the attention core.
double selective_recompute_s(const ModelSpec& model, const JobSpec& job, const LayerComputeTimes& times,
                             bool is_moe);

/// Whether every pipeline boundary (and the interleaved schedule's wrap from
/// the last stage to the first) runs over the same link, so that every stage
/// pays the same point-to-point time.
bool pipeline_links_alike(const ClusterSpec& cluster, const ParallelConfig& c);

/// `stage` places the groups (its first rank) and its pipeline boundaries.
PerLayerCosts per_layer_costs(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                              const ParallelConfig& c, int stage = 0);

struct StageTime {
  double compute_s = 0;  // one micro-batch, all chunks of the stage
  double tp_s = 0;
  double cp_s = 0;
  double pp_s = 0;
  double ep_s = 0;             // MoE dispatch/combine left after overlap
  double backward_last_s = 0;  // backward of one micro-batch (overlap window)
  double forward_s = 0;
  double total() const { return compute_s + tp_s + cp_s + pp_s + ep_s; }
};

/// One micro-batch through all chunks of a stage.
StageTime stage_time(const ParallelConfig& c, const PerLayerCosts& costs, const StageLoad& load);

/// Pipeline fill and drain of the 1F1B schedules: (p - 1) / v of one
/// micro-batch's time through the slowest stage (Narayanan et al. 2021,
/// sec. 2.2: the bubble is (p - 1) / (v m) of the m micro-batches' compute).
double pipeline_bubble_s(int pp, int vp, double stage_micro_batch_s);

// Data-parallel communication of one stage in one step.
struct DpCost {
  double exposed_s = 0;         // left on the critical path after overlap
  double optimizer_params = 0;  // parameters this rank's optimizer updates
  // The overlap window this exchange left unused: a second exchange of the
  // same stage (the experts') may hide only behind that, or a faster GPU,
  // whose shorter window both would subtract in full, could slow the step.
  StageTime window_left;
};

// Over the dp x cp group (Megatron's distributed optimizer and gradient
// reduction span both) of pipeline stage `stage`, for `params` parameters on
// the stage; `window` gives the compute that the traffic may hide behind.
/// `units`: the stage's FSDP units (layers, plus the embedding and the
/// output on the first and last stages) when job.shard_unit is kLayer.
/// `edge_unit_params`: the parameters of the unit gathered first and
/// reduced last (StageLoad), whose exchanges FSDP cannot overlap.
/// `linear_params`: of `params`, the blocks' linear weights, which
/// JobSpec::fsdp_fp8_all_gather gathers in fp8.
DpCost dp_cost(const ClusterSpec& cluster, const JobSpec& job, const ParallelConfig& c, double params,
               const StageTime& window, int m, int stage, TierTraffic* traffic, double units = 0,
               double edge_unit_params = 0, double linear_params = 0);
/// FSDP units of a stage (JobSpec::shard_unit kLayer): one per layer, the
/// embedding and the norm + output head on the first and last stages.
inline double shard_units(const StageLoad& load) {
  return load.layers + load.mtp + (load.first ? 1 : 0) + (load.last ? 1 : 0);
}

/// The tied word embedding's gradient all-reduce between the first and the
/// last pipeline stage, which both hold it (Megatron-LM's
/// _allreduce_word_embedding_grads in finalize_model_grads, after the
/// schedule; DeepSpeed's PipelineEngine ReduceTiedGrads instruction before
/// ReduceGrads): exposed, in the gradient dtype; 0 without a pipeline, an
/// untied head, or ZeRO-3 (whose engines shard the embedding instead).
double tied_embedding_reduce_s(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                               const ParallelConfig& c);

/// The same for the stage's routed-expert parameters over the
/// expert-data-parallel group (edp ranks, stride etp * ep: MoE parallel
/// folding); zero when the model has no experts on the stage.
DpCost expert_dp_cost(const ClusterSpec& cluster, const JobSpec& job, const ParallelConfig& c,
                      double expert_params, const StageTime& window, int m, int stage, TierTraffic* traffic,
                      double units = 0);

}  // namespace parplan::detail
