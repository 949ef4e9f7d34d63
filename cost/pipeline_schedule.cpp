// Pipeline schedule: per-layer communication (tp, cp, ep) on the critical
// path, one micro-batch through a stage (compute, recomputation, p2p with
// interleaved overlap) and the 1F1B / interleaved bubble.
#include <algorithm>

#include "cost/collectives.h"
#include "cost/compute_time.h"
#include "cost/cp_merge_passes.h"
#include "cost/grad_accumulation.h"
#include "cost/memory.h"
#include "cost/micro_pipeline_tp.h"
#include "cost/mla.h"
#include "cost/moe.h"
#include "cost/moe_dispatch.h"
#include "cost/moe_host_sync.h"
#include "cost/overlap.h"
#include "cost/pytorch_cp_exchange.h"
#include "cost/recompute_replay.h"
#include "cost/sequence_dim_copies.h"
#include "cost/sharded_grad_passes.h"
#include "cost/step_internal.h"
#include "cost/tp_comm_overlap.h"

namespace parplan::detail {

namespace {

// PyTorch's context_parallel with rotate method "allgather" (torchtitan's
// default), torch/distributed/tensor/experimental/_attention.py
// (cost/pytorch_cp_exchange.h has the loop step by step). The K/V it moves
// are what the attention kernel takes, at the query-head width in
// torchtitan (repeat_kv). Each pass gathers every rank's K/V once (the
// backward again); the backward sends the dK/dV (fp32, the accumulators'
// dtype) to rank r + 1 after each of its cp blocks (dkv_rotater,
// _RotateMethod.ALL_TO_ALL: permute_tensor). Eager, the gather hides behind
// the first block and each send behind the next block; compiled
// (torch.compile: job.fused_elementwise), every collective is waited on as
// soon as it is issued.
void pytorch_cp_comm(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                     const ParallelConfig& c, const LayerComputeTimes& times, int first, double tokens,
                     LayerComm& comm) {
  const GroupSpan span = group_span_at(cluster, c.cp, c.tp, first, c.world());
  const double kv_bytes = 2.0 * tokens * torchtitan_sdpa_kv_elements_per_token(model, c.tp);
  const double gather_s = all_gather_s(cluster, span, kv_bytes * c.cp);
  // The ring moves in lockstep: its slowest hop (the wrap from the last
  // rank to the first included) sets each step.
  double hop_s = 0;
  for (int k = 0; k < c.cp; ++k)
    hop_s = std::max(hop_s, point_to_point_between_s(cluster, first + k * c.tp, first + (k + 1) % c.cp * c.tp,
                                                     2.0 * kv_bytes));
  const PytorchCpExposedSeconds exposed = pytorch_cp_exposed_s(
      c.cp, gather_s, hop_s, times.attention_forward_s / c.cp, times.attention_backward_s / c.cp,
      cluster.device.overlap_compute_slowdown, job.fused_elementwise);
  comm.cp_forward_s = exposed.forward_s;
  comm.cp_backward_s = exposed.backward_s;
}

// Megatron's context parallelism (Transformer Engine's
// AttnFuncWithCPAndKVP2P, cp_comm_type p2p): cp steps, one block of
// attention each; at each of the first cp - 1 the rank sends the K/V it
// holds to rank r + 1 and receives rank r - 1's, waited on at the next
// step, so each transfer hides behind one block. The backward's cp steps
// each send while their block runs and wait after it: the K/V at the first
// step, the K/V and the dK/dV accumulated so far (twice the bytes) at the
// middle ones, the dK/dV alone at the last. The ring moves in
// lockstep: its slowest hop (the wrap included) sets every step, so a
// ring that crosses nodes pays a node link per step, not a node's share of
// an all-gather.
void megatron_cp_comm(const ModelSpec& model, const ClusterSpec& cluster, const ParallelConfig& c,
                      const LayerComputeTimes& times, int first, double tokens, LayerComm& comm) {
  const double kv_bytes = 2.0 * 2.0 * tokens * model.kv_groups * model.head_dim / c.tp;
  double hop_s = 0, kv_and_grad_hop_s = 0;
  for (int k = 0; k < c.cp; ++k) {
    const int from = first + k * c.tp, to = first + (k + 1) % c.cp * c.tp;
    hop_s = std::max(hop_s, point_to_point_between_s(cluster, from, to, kv_bytes));
    kv_and_grad_hop_s =
        std::max(kv_and_grad_hop_s, point_to_point_between_s(cluster, from, to, 2.0 * kv_bytes));
  }
  const double slowdown = cluster.device.overlap_compute_slowdown;
  comm.cp_forward_s = (c.cp - 1) * exposed_after_overlap_s(hop_s, times.attention_forward_s / c.cp, slowdown);
  const double block_backward_s = times.attention_backward_s / c.cp;
  comm.cp_backward_s = 2.0 * exposed_after_overlap_s(hop_s, block_backward_s, slowdown) +
                       (c.cp - 2) * exposed_after_overlap_s(kv_and_grad_hop_s, block_backward_s, slowdown);
}

// `stage` places the groups on a heterogeneous cluster (its first rank).
LayerComm layer_comm(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                     const ParallelConfig& c, const LayerComputeTimes& times, int stage) {
  LayerComm comm;
  const int first = stage * c.tp * c.cp * c.dp;
  const double tokens = static_cast<double>(c.mbs) * job.seq / c.cp;
  if (c.tp > 1) {
    // Two all-reduces of b s h in each direction (with sp: all-gather +
    // reduce-scatter of the same total volume).
    const GroupSpan span = group_span_at(cluster, c.tp, 1, first, c.world());
    const double activation_bytes = 2.0 * tokens * model.hidden;
    // torchao's Float8 tensor parallelism casts before it gathers: every
    // all-gather (forward and the backward's) moves fp8, the reduce-scatters
    // 16 bits (JobSpec::fp8_tp_all_gather).
    const bool fp8_gather = job.fp8_tp_all_gather && job.precision == Precision::kFp8 && c.sp;
    const double gather_bytes = fp8_gather ? activation_bytes / 2.0 : activation_bytes;
    const double gather_s = all_gather_s(cluster, span, gather_bytes);
    const double one = fp8_gather ? gather_s + all_gather_s(cluster, span, activation_bytes)
                                  : all_reduce_s(cluster, span, activation_bytes);
    comm.tp_forward_s = 2.0 * one;
    comm.tp_backward_s = 2.0 * one;
    const double slowdown = cluster.device.overlap_compute_slowdown;
    if (tp_comm_overlapped(job, c) && job.tp_overlap_mechanism == TpOverlapMechanism::kMicroPipeline) {
      MicroPipelineTpInputs in;
      in.tp = c.tp;
      in.all_gather_s = gather_s;
      in.reduce_scatter_s = all_gather_s(cluster, span, activation_bytes);
      in.shard_copy_s = memory_bound_s(cluster.device, 2.0 * gather_bytes / c.tp);
      in.partial_reduce_s = memory_bound_s(cluster.device, (c.tp + 1.0) * activation_bytes / c.tp);
      in.compute_slowdown = slowdown;
      const MicroPipelineTpSeconds exposed = micro_pipeline_tp_exposed_s(in, times.tp_windows);
      comm.tp_forward_s = exposed.forward_s;
      comm.tp_backward_s = exposed.backward_s;
      comm.tp_forward_gathers_s = exposed.forward_gathers_s;
    } else {
      if (tp_comm_overlapped(job, c)) {
        // Userbuffers pipeline each all-gather / reduce-scatter with the GEMM
        // that consumes or produces it (forward: QKV, projection, FC1, FC2;
        // backward: their data- and weight-gradient GEMMs, twice the work).
        comm.tp_forward_s = exposed_after_overlap_s(comm.tp_forward_s, times.gemm_forward_s, slowdown);
        comm.tp_backward_s =
            exposed_after_overlap_s(comm.tp_backward_s, 2.0 * times.gemm_forward_s, slowdown);
      }
      comm.tp_forward_gathers_s =
          fp8_gather && !tp_comm_overlapped(job, c) ? 2.0 * gather_s : comm.tp_forward_s / 2.0;
    }
    if (job.sp_sequence_dim_copies && c.sp) {
      // The copies around each collective on the sequence dim, on the
      // compute stream (cost/sequence_dim_copies.h).
      SequenceDimCopyShape copies;
      copies.tp = c.tp;
      copies.gather_bytes = gather_bytes;
      copies.scatter_bytes = activation_bytes;
      copies.micro_pipelined =
          tp_comm_overlapped(job, c) && job.tp_overlap_mechanism == TpOverlapMechanism::kMicroPipeline;
      copies.attention_backward_fused = job.fused_elementwise && job.separate_qkv;
      copies.ffn_backward_fused = job.fused_elementwise && job.separate_gate_up && model.gated_ffn;
      const SequenceDimCopySeconds copy = sequence_dim_copy_s(cluster.device, copies);
      comm.tp_forward_s += copy.forward_s;
      comm.tp_backward_s += copy.backward_s;
      comm.tp_forward_gathers_s += copy.forward_gathers_s;
    }
    // DeepSpeed's checkpointing gathers the split layer input over tp
    // (activation_checkpointing/checkpointing.py get_full_inputs).
    if (partitions_checkpoints(job, c))
      comm.checkpoint_gather_s = all_gather_s(cluster, span, 2.0 * tokens * model.hidden);
  }
  if (c.cp > 1) {
    if (job.cp_exchange == ContextParallelExchange::kAllGatherKv) {
      pytorch_cp_comm(model, cluster, job, c, times, first, tokens, comm);
    } else {
      megatron_cp_comm(model, cluster, c, times, first, tokens, comm);
    }
  }
  return comm;
}

// Pipeline point-to-point time of one micro-batch on `stage`: each boundary
// at its own link (inside a node, across nodes; on a heterogeneous cluster
// the node group's fabric or the link between groups); the stage waits on
// its slower side. (Costing every boundary at the link of the stride, as
// before, put a pipeline whose stages share nodes entirely on NVLink even
// where its boundaries cross nodes, and the same plan then cost less on a
// uniform cluster than on a heterogeneous one with the same links: the best
// plan on holmes-mixed came out slower than on holmes-ethernet.)
double stage_p2p_s(const ClusterSpec& cluster, const ParallelConfig& c, int stage, double bytes) {
  const int stride = c.tp * c.cp * c.dp;
  const auto boundary = [&](int from, int to) {
    return point_to_point_between_s(cluster, from * stride, to * stride, bytes);
  };
  double worst = 0;
  if (stage + 1 < c.pp) worst = std::max(worst, boundary(stage, stage + 1));
  if (stage > 0) worst = std::max(worst, boundary(stage - 1, stage));
  // The interleaved schedule wraps from the last stage back to the first.
  if (c.vp > 1 && (stage == 0 || stage == c.pp - 1)) worst = std::max(worst, boundary(c.pp - 1, 0));
  return worst;
}

}  // namespace

bool pipeline_links_alike(const ClusterSpec& cluster, const ParallelConfig& c) {
  if (c.pp < 2) return true;
  const int stride = c.tp * c.cp * c.dp;
  const NetworkTier* first = &tier_between(cluster, 0, stride);
  for (int s = 1; s + 1 < c.pp; ++s)
    if (&tier_between(cluster, s * stride, (s + 1) * stride) != first) return false;
  return c.vp == 1 || &tier_between(cluster, (c.pp - 1) * stride, 0) == first;
}

double selective_recompute_s(const ModelSpec& model, const JobSpec& job, const LayerComputeTimes& times,
                             bool is_moe) {
  if (is_moe || job.selective_checkpoint != SelectiveCheckpoint::kTorchtitanOps)
    return job.recompute_modules.core_attn ? times.attention_forward_s : 0.0;
  const double h = model.hidden;
  const double q = static_cast<double>(model.heads) * model.head_dim;
  const double kv = model.uses_mla() ? q : static_cast<double>(model.kv_groups) * model.head_dim;
  const double f = model.ffn_hidden;
  const double ffn_gemms = model.gated_ffn ? 3.0 : 2.0;
  const double all_gemms = h * q + 2.0 * h * kv + q * h + ffn_gemms * h * f;
  const double recomputed = h * kv + q * h + (model.gated_ffn ? h * f : 0.0);
  // The policy keeps only the outputs of the ops on its save list (mm,
  // SDPA, amax), and every second mm's not even those: the recomputation
  // replays the rest of the block's forward, element-wise kernels and fp8
  // casts included (PREFER_RECOMPUTE for every op off the list,
  // torchtitan/parallelisms/parallelize_llama.py @ 9dec370).
  const double gemm_kept_s = times.gemm_forward_s * (1.0 - recomputed / all_gemms);
  return times.forward_s - times.attention_forward_s - gemm_kept_s;
}

PerLayerCosts per_layer_costs(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                              const ParallelConfig& c, int stage) {
  PerLayerCosts costs;
  const DeviceSpec& device = cluster.device;
  const double peak = device.peak_flops_per_s(job.precision);
  const double tokens = static_cast<double>(c.mbs) * job.seq / c.cp;
  LayerShape shape;
  shape.tokens = tokens;
  shape.seq = job.seq;
  shape.tp = c.tp;
  shape.cp = c.cp;
  shape.cp_exchange = job.cp_exchange;
  shape.transformer_engine = job.transformer_engine;
  shape.sp = c.sp;
  shape.flash_attention = c.flash_attention;
  shape.kernel = job.attention_kernel;
  shape.fused_elementwise = job.fused_elementwise;
  shape.composed_rms_norm = job.composed_rms_norm;
  shape.separate_qkv = job.separate_qkv;
  shape.separate_gate_up = job.separate_gate_up;
  shape.unpadded_attention = job.unpadded_attention;
  shape.document_tokens = job.document_tokens;
  shape.fp8 = job.precision == Precision::kFp8;
  shape.te_layernorm_linear = job.te_layernorm_linear;
  shape.fp8_current_scaling = job.fp8_scaling == Fp8Scaling::kCurrent;
  costs.dense = layer_compute_times(model, device, peak, shape);
  costs.comm = layer_comm(model, cluster, job, c, costs.dense, stage);
  if (model.is_moe()) {
    // Attention as in a dense layer, then the expert block (cost/moe.h) and
    // its token dispatch (cost/moe_dispatch.h).
    shape.is_moe = true;
    costs.moe = layer_compute_times(model, device, peak, shape);
    MoeShape moe;
    moe.tokens = tokens;
    moe.tp = c.tp;
    moe.etp = c.etp;
    moe.ep = c.ep;
    moe.load_factor = moe_load_factor(model, job, c);
    moe.one_grouped_kernel = job.moe_grouped_mm;
    moe.fp8 = shape.fp8 && !job.moe_grouped_mm;
    moe.fp8_split_padding = moe.fp8 && moe_fp8_pads_splits(model, job, c);
    moe.fp8_current_scaling = moe.fp8 && job.fp8_scaling == Fp8Scaling::kCurrent;
    const MoeBlockTimes block = moe_block_times(model, device, peak, moe);
    costs.moe_block_forward_s = block.forward_s;
    costs.moe.forward_s += block.forward_s;
    costs.moe.backward_s += block.backward_s;
    MoeLayerCompute compute;
    compute.attention_forward_s = costs.moe.forward_s - block.forward_s;
    compute.attention_backward_s = costs.moe.backward_s - block.backward_s;
    compute.experts_forward_s = block.forward_s;
    compute.experts_backward_s = block.backward_s;
    compute.unpaired_share = c.ep_overlap ? ep_overlap_unpaired_share(c, stage) : 1.0;
    const EpLayerComm ep = moe_layer_comm(model, cluster, job, c, compute, stage * c.tp * c.cp * c.dp);
    costs.comm.ep_forward_s = ep.forward_s;
    costs.comm.ep_backward_s = ep.backward_s;
    if (job.moe_host_launch_s > 0 && moe_dispatch_waits_on_host(job)) {
      // The expert block and the dispatch's exposed time stand in for the
      // GPU time of the kernels after the wait (the block also holds the
      // router and permutation 1, launched before it).
      MoeSyncLaunchShape launch;
      launch.local_experts = model.experts / c.ep;
      launch.ep_alltoall = c.ep > 1;
      launch.fp8 = moe.fp8;
      launch.fp8_current_scaling = moe.fp8_current_scaling;
      launch.fp8_split_padding = moe.fp8_split_padding;
      costs.moe.forward_s += host_launch_exposed_s(moe_launches_after_host_wait(launch),
                                                   job.moe_host_launch_s, block.forward_s + ep.forward_s);
    }
  }
  if (recompute_skips_last_linear(job)) {
    costs.full_recompute_skipped_s = costs.dense.tp_windows.ffn_out_s;
    // The forward's reductions (reduce-scatters with sp, all-reduces
    // without) are what the gathers leave of its traffic, one after the
    // attention and one after the FFN.
    costs.full_recompute_skipped_tp_s =
        std::max(0.0, costs.comm.tp_forward_s - costs.comm.tp_forward_gathers_s) / 2.0;
  }
  costs.selective_dense_s = selective_recompute_s(model, job, costs.dense, false);
  // Megatron's --recompute-modules mla_up_proj: every layer's query and
  // key/value up projections forward again before the attention backward
  // (their rope is fused into the attention input's copy; not timed).
  const double mla_up_s = job.selective_checkpoint == SelectiveCheckpoint::kAttentionCore &&
                                  job.recompute_modules.mla_up_proj && model.uses_mla()
                              ? mla_up_projection_s(model, device, peak, tokens, c.tp)
                              : 0.0;
  costs.selective_dense_s += mla_up_s;
  // Megatron's --recompute-modules mlp: a dense layer's MLP forward again,
  // with its sequence-parallel gather and reduce-scatter.
  if (job.selective_checkpoint == SelectiveCheckpoint::kAttentionCore && job.recompute_modules.mlp) {
    costs.selective_dense_s += costs.dense.ffn_forward_s;
    costs.selective_dense_tp_s = costs.comm.tp_forward_s / 2.0;
  }
  // _save_list (torchtitan/parallelisms/parallelize_llama.py @ 9dec370,
  // torchtitan/distributed/activation_checkpoint.py later) holds
  // _c10d_functional.reduce_scatter_tensor but no all-gather: every other
  // op is PREFER_RECOMPUTE, the SP all-gathers inside the block included.
  if (job.selective_checkpoint == SelectiveCheckpoint::kTorchtitanOps && c.tp > 1 && c.sp)
    costs.selective_tp_s = costs.comm.tp_forward_gathers_s;
  if (model.is_moe()) {
    costs.selective_moe_s = selective_recompute_s(model, job, costs.moe, true) + mla_up_s;
    if (job.selective_checkpoint == SelectiveCheckpoint::kAttentionCore) {
      // Megatron's output-discarding recomputations, memory-bound: the
      // pre-MLP norm reads and writes its sequence-parallel shard of the
      // hidden states; the experts' activation reads its input(s) (SwiGLU:
      // two halves) and writes FC2's input, for every routed row.
      constexpr double kActivationBytes = 2.0;  // 16-bit activations
      const double norm_tokens = tokens / (c.sp ? c.tp : 1);
      if (job.recompute_modules.layernorm)
        costs.selective_moe_s += memory_bound_s(device, 2.0 * kActivationBytes * norm_tokens * model.hidden);
      // moe: the whole block again, its dispatch and combine included.
      if (job.recompute_modules.moe) {
        costs.selective_moe_s += costs.moe_block_forward_s;
        costs.selective_moe_ep_s = costs.comm.ep_forward_s;
      }
      if (job.recompute_modules.moe_act && !job.recompute_modules.moe) {
        const double rows = tokens / c.tp * model.top_k * c.etp * moe_load_factor(model, job, c);
        const double widths = model.gated_ffn ? 3.0 : 2.0;
        costs.selective_moe_s +=
            memory_bound_s(device, widths * kActivationBytes * rows * model.expert_ffn_hidden / c.etp);
      }
    }
  }
  costs.edges = edge_compute_times(model, device, peak, tokens, c.tp, job.cross_entropy);
  costs.overlap_slowdown = device.overlap_compute_slowdown;
  if (job.fsdp_copy_out && c.zero >= 3 && c.dp * c.cp > 1) {
    // split_with_sizes_copy reads the gathered 16-bit unit and writes it
    // into the parameters.
    constexpr double kCopyOutBytesPerParam = 2.0 * 2.0;
    costs.unshard_copy_s_per_param = memory_bound_s(device, kCopyOutBytesPerParam);
    // foreach_reduce copies the unit's 16-bit gradients into the
    // reduce-scatter input in the reduce dtype (chunk_cat, on the compute
    // stream; torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py), and
    // divides through the collective (ReduceOp.AVG for fp32 and bf16).
    costs.reduce_copy_in_s_per_param = memory_bound_s(
        device, 2.0 + gradient_bytes_per_param(job.precision, c.zero, job.grad_reduce_for(c.zero)));
  } else {
    // FSDP1's or DeepSpeed ZeRO-3's passes (cost/sharded_grad_passes.h),
    // on their reduction stream but taking the GPU's memory bandwidth.
    const double bytes = sharded_grad_pass_bytes(
        job.sharded_grad_passes, c.zero,
        gradient_bytes_per_param(job.precision, c.zero, job.grad_reduce_for(c.zero)), c.dp * c.cp);
    costs.reduce_copy_in_s_per_param = bytes > 0 ? memory_bound_s(device, bytes) : 0.0;
  }
  const double accumulate_bytes =
      grad_accumulation_bytes_per_param(job.grad_accumulation, job.precision, c.zero, c.micro_batches());
  costs.grad_accumulate_s_per_param = accumulate_bytes > 0 ? memory_bound_s(device, accumulate_bytes) : 0.0;
  // Point-to-point: activations forward and gradients backward, once per
  // chunk boundary, b s h / t elements (scatter-gather or sp), or b s h
  // where an engine sends an MoE pipe's activations whole.
  if (c.pp > 1) {
    const bool whole = job.moe_pipe_unpartitioned && model.is_moe() && !c.sp;
    const double bytes = 2.0 * tokens * model.hidden / (whole ? 1 : c.tp);
    costs.p2p_s = 2.0 * c.vp * stage_p2p_s(cluster, c, stage, bytes);
  }
  return costs;
}

StageTime stage_time(const ParallelConfig& c, const PerLayerCosts& costs, const StageLoad& load) {
  const LayerComputeTimes& dense = costs.dense;
  const LayerComputeTimes& moe = costs.moe;
  const LayerComm& dense_comm = costs.comm;
  const EdgeComputeTimes& edges = costs.edges;
  const double dense_layers = load.layers - load.moe_layers;
  const int recomputed = recomputed_layers(c, load.layers);
  StageTime t;
  t.forward_s = dense_layers * dense.forward_s + load.moe_layers * moe.forward_s;
  double backward = dense_layers * dense.backward_s + load.moe_layers * moe.backward_s;
  double extra = 0;
  if (c.recompute == Recompute::kSelective) {
    extra = dense_layers * costs.selective_dense_s + load.moe_layers * costs.selective_moe_s;
  } else if (recomputed > 0) {
    const double per_layer = (dense_layers * (dense.forward_s - costs.full_recompute_skipped_s) +
                              load.moe_layers * moe.forward_s) /
                             load.layers;
    extra = recomputed * per_layer;
  }
  if (load.first) t.forward_s += edges.embedding_s, backward += edges.embedding_s;
  if (load.last) t.forward_s += edges.head_forward_s, backward += edges.head_backward_s;
  const double copy_out_s = costs.unshard_copy_s_per_param * (load.params + load.expert_params);
  t.forward_s += copy_out_s;
  backward += copy_out_s + (costs.reduce_copy_in_s_per_param + costs.grad_accumulate_s_per_param) *
                               (load.params + load.expert_params);
  t.compute_s = t.forward_s + backward + extra;
  t.backward_last_s = backward + extra;
  t.tp_s = load.layers * (dense_comm.tp_forward_s + dense_comm.tp_backward_s) +
           recomputed * (dense_comm.tp_forward_s + dense_comm.checkpoint_gather_s);
  if (c.recompute != Recompute::kSelective && load.layers > 0)
    t.tp_s -= recomputed * dense_layers / load.layers * costs.full_recompute_skipped_tp_s;
  if (c.recompute == Recompute::kSelective) {
    t.tp_s += load.layers * costs.selective_tp_s + dense_layers * costs.selective_dense_tp_s;
  }
  t.cp_s = load.layers * (dense_comm.cp_forward_s + dense_comm.cp_backward_s) +
           recomputed * dense_comm.cp_forward_s;
  t.ep_s = load.moe_layers * (dense_comm.ep_forward_s + dense_comm.ep_backward_s);
  if (c.recompute == Recompute::kSelective) t.ep_s += load.moe_layers * costs.selective_moe_ep_s;
  if (load.layers > 0) t.ep_s += recomputed * load.moe_layers / load.layers * dense_comm.ep_forward_s;
  if (load.mtp) {
    // DeepSeek-V3's multi-token-prediction module runs on the last stage
    // after the main model: its layer and its pass through the head.
    const LayerComputeTimes& mtp_layer = load.mtp_moe ? moe : dense;
    t.forward_s += load.mtp * (mtp_layer.forward_s + edges.head_forward_s);
    backward += load.mtp * (mtp_layer.backward_s + edges.head_backward_s);
    t.compute_s = t.forward_s + backward + extra;
    t.backward_last_s = backward + extra;
    t.ep_s += load.mtp * (dense_comm.ep_forward_s + dense_comm.ep_backward_s);
  }
  t.pp_s = costs.p2p_s;
  if (c.vp > 1 && c.overlap_p2p) {
    // The interleaved schedule posts each chunk's sends and receives and
    // computes the next chunk meanwhile (Megatron-LM main,
    // --overlap-p2p-communication, on by default with vp > 1): only what
    // outlasts a chunk's compute stays on the critical path.
    const double per_chunk_p2p_s = costs.p2p_s / c.vp;
    const double per_chunk_compute_s = t.compute_s / c.vp;
    t.pp_s = c.vp * exposed_after_overlap_s(per_chunk_p2p_s, per_chunk_compute_s, costs.overlap_slowdown);
  }
  return t;
}

double pipeline_bubble_s(int pp, int vp, double stage_micro_batch_s) {
  return (pp - 1) * stage_micro_batch_s / vp;
}

}  // namespace parplan::detail
