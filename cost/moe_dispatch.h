// MoE token dispatch and combine: the all-to-all volume of one MoE layer
// and its time over the tiers the expert-parallel group spans, flat or
// hierarchical (intra-node first, one copy per destination node across
// nodes, as DeepEP's normal kernels and DeepSeek-V3 do).
#pragma once

#include "cost/collectives.h"
#include "cost/moe.h"
#include "cost/spec/cluster_spec.h"
#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"
#include "cost/spec/parallel_config.h"

namespace parplan {

/// Bytes one rank sends in one dispatch (or combine) of a flat all-to-all:
/// its `tokens` x top_k copies of h elements of `element_bytes`, of which
/// the (ep - 1) / ep bound for other ranks leave it (the formula of
/// Megatron's alltoall dispatcher; Rajbhandari et al. 2022, DeepSpeed-MoE).
double dispatch_bytes(const ModelSpec& model, double tokens, double element_bytes, int ep);

/// Expected number of distinct nodes, out of `nodes`, the top-k experts of
/// one token land on when experts are spread evenly: nodes (1 - (1 - 1/nodes)^k),
/// capped at `node_limit` (node-limited routing; 0 = no limit).
double expected_destination_nodes(int nodes, int top_k, int node_limit);

struct DispatchShape {
  double tokens = 0;          ///< tokens this rank routes (b s / (cp tp))
  double element_bytes = 2;   ///< 2: every emitted engine dispatches 16-bit hidden states
  double load_factor = 1.0;   ///< the busiest rank receives this much over the mean
  bool hierarchical = false;  ///< intra-node first (DeepEP) instead of flat
  /// Sent bytes over the uncompressed volume: LSH-MoE (Nie et al. 2024,
  /// NeurIPS) sends bucket centroids of similar tokens instead of the tokens.
  double compression = 1.0;
};

/// Time of one dispatch of the group `span` (ep ranks). Flat: every copy
/// crosses the tier between its source and destination (all_to_all_s).
/// Hierarchical: across nodes one copy per distinct remote destination node,
/// then NVLink forwarding of the top-k copies; the two run pipelined
/// (DeepEP), so the slower one sets the time.
double dispatch_s(const ClusterSpec& cluster, const GroupSpan& span, const ModelSpec& model,
                  const DispatchShape& shape);

/// Compute of one MoE layer for one micro-batch, split where Megatron's
/// overlapped schedule splits it: the attention side (everything before the
/// dispatch: norms, attention, router) and the expert side, each direction.
/// `unpaired_share`: the share of the layer's forward and backward passes
/// that have no pass of another micro-batch beside them (the pipeline's
/// warm-up forwards and cool-down backwards; the first forward and the last
/// backward of a step without a pipeline).
struct MoeLayerCompute {
  double attention_forward_s = 0;
  double attention_backward_s = 0;
  double experts_forward_s = 0;
  double experts_backward_s = 0;
  double unpaired_share = 0;
};

/// Exposed expert-parallel communication of one MoE layer for one
/// micro-batch on the pipeline stage starting at `first_rank` (the ep
/// all-to-alls scaled by job.a2a_compression; the experts' compute is not
/// reduced, which keeps the estimate conservative): dispatch and
/// combine forward (the hierarchical dispatch in fp8 under fp8 training, as
/// DeepSeek-V3 with DeepEP; the flat one, Megatron's alltoall dispatcher,
/// sends the 16-bit hidden states; the combine in bf16), their gradients
/// backward (bf16), plus the etp group's
/// all-gather / reduce-scatter of the dispatched rows. With ep_overlap a
/// micro-batch's forward runs beside another's backward in four phases, each
/// exchange beside one compute part (Megatron's
/// TransformerLayerSchedulePlan.run): the backward combine beside the
/// forward attention, the forward dispatch beside the expert backward, the
/// backward dispatch beside the expert forward, the forward combine beside
/// the attention backward. A phase ends when both its parts have, so an
/// exchange longer than its partner is exposed by the difference, however
/// much compute the other phases leave idle (cost/overlap.h). Passes without
/// a partner expose their exchanges whole.
struct EpLayerComm {
  double forward_s = 0;
  double backward_s = 0;
};
EpLayerComm moe_layer_comm(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                           const ParallelConfig& config, const MoeLayerCompute& compute, int first_rank);

/// The share of one stage's micro-batch passes that Megatron's overlapped
/// schedule runs without a partner: with a pipeline, the interleaved
/// schedule's warm-up forwards (2 (pp - rank - 1) + (vp - 1) pp, plus the
/// one extra it schedules under the overlap, schedules.py
/// get_pp_rank_microbatches) over the stage's m vp passes, and as many
/// cool-down backwards; without one (combined_1f1b_schedule_for_no_pipelining)
/// the first forward and the last backward of the m micro-batches.
double ep_overlap_unpaired_share(const ParallelConfig& config, int stage);

/// Whether the expert-parallel group of `config` spans more than one node.
bool ep_spans_nodes(const ClusterSpec& cluster, const ParallelConfig& config);
/// The dispatch options of a given config (estimate, check): hierarchical
/// all-to-all when the ep group spans nodes (DeepEP's internode kernels),
/// and the overlapped all-to-all wherever Megatron's rules allow it.
void apply_moe_defaults(const ModelSpec& model, const ClusterSpec& cluster, ParallelConfig& config);

}  // namespace parplan
