// Stage memory: what one pipeline stage holds (model states after ZeRO
// sharding, activations of the micro-batches in flight, buffers) and the
// most loaded stage's breakdown.
#include <algorithm>

#include "cost/collectives.h"
#include "cost/grad_sync_schedule.h"
#include "cost/memory.h"
#include "cost/moe.h"
#include "cost/parameters.h"
#include "cost/stage_layout.h"
#include "cost/step_cost.h"
#include "cost/step_internal.h"

namespace parplan::detail {

namespace {
// MoE layers among the `layers` of `stage`: the model's MoE fraction (time
// and memory stay affine in the layer count, as the stage-split
// coefficients need), or with `exact` counted by index for the stage's own
// layout without interleaving (DeepSeek-V3's dense first layers all sit on
// stage 0).
double stage_moe_layers(const ModelSpec& model, const ParallelConfig& c, int stage, int layers, bool exact) {
  if (!model.is_moe() || layers <= 0) return 0.0;
  if (exact && c.vp == 1) {
    int start = 0;
    for (int s = 0; s < stage; ++s) start += stage_layers(model.layers, c, s);
    return moe_layers_before(model, start + layers) - moe_layers_before(model, start);
  }
  return static_cast<double>(moe_layer_count(model)) / model.layers * layers;
}

StageLoad stage_load_counted(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c, int stage,
                             int layers, bool exact);
}  // namespace

MoeShape moe_shape(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c) {
  MoeShape shape;
  shape.tokens = static_cast<double>(c.mbs) * job.seq / c.cp;
  shape.tp = c.tp;
  shape.etp = c.etp;
  shape.ep = c.ep;
  shape.load_factor = moe_load_factor(model, job, c);
  return shape;
}

StageLoad stage_load(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c, int stage,
                     int layers) {
  return stage_load_counted(model, job, c, stage, layers, false);
}

namespace {
StageLoad stage_load_counted(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c, int stage,
                             int layers, bool exact) {
  StageLoad load;
  load.layers = layers;
  load.first = stage == 0;
  load.last = stage == c.pp - 1;
  load.moe_layers = stage_moe_layers(model, c, stage, layers, exact);
  const double dense_layers = load.layers - load.moe_layers;
  const double shared = attention_params(model) + layer_norm_params(model);
  double params = (load.layers * shared + dense_layers * dense_ffn_params(model)) / c.tp;
  load.linear_params = (load.layers * attention_params(model) + dense_layers * dense_ffn_params(model) +
                        load.moe_layers * shared_expert_params(model)) /
                       c.tp;
  if (load.moe_layers > 0) {
    // The router is replicated over tp, shared experts split like a dense
    // FFN, routed experts over etp x ep (sharded apart, over edp).
    params += load.moe_layers * (router_params(model) + shared_expert_params(model) / c.tp);
    load.expert_params = load.moe_layers * routed_expert_params(model) / (c.etp * c.ep);
  }
  load.edge_unit_params = load.layers > 0 ? params / load.layers : 0.0;
  if (load.last && model.mtp_layers > 0) {
    load.mtp = model.mtp_layers;
    load.mtp_moe = model.is_moe();
    const double routed = model.is_moe() ? model.mtp_layers * routed_expert_params(model) : 0.0;
    params +=
        (mtp_params(model) - routed - model.mtp_layers * (model.is_moe() ? router_params(model) : 0.0)) /
            c.tp +
        model.mtp_layers * (model.is_moe() ? router_params(model) : 0.0);
    load.expert_params += routed / (c.etp * c.ep);
  }
  if (load.first) {
    params += embedding_params(model, job.seq) / c.tp;
    load.edge_unit_params = embedding_params(model, job.seq) / c.tp;
  }
  if (load.last) {
    // An untied head, or with pp > 1 Megatron's copy of the tied embedding.
    const double head = model.tied_embeddings ? (c.pp > 1 ? model.vocab * double(model.hidden) : 0.0)
                                              : untied_head_params(model);
    params += head / c.tp;
  }
  load.params = params;
  return load;
}

}  // namespace

StageLoad stage_load(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c, int stage) {
  return stage_load_counted(model, job, c, stage, stage_layers(model.layers, c, stage), true);
}

CriticalStages critical_stages(const ModelSpec& model, const ParallelConfig& c) {
  CriticalStages out;
  if (c.custom_split()) {
    out.all = true;
    return out;
  }
  out.stage[out.count++] = 0;
  if (c.pp > 1) out.stage[out.count++] = c.pp - 1;
  // The middle stages' mixes, counted incrementally over the layer index
  // (stage_moe_layers with `exact`, without its per-stage rescan).
  double kept_layers[CriticalStages::kMax], kept_moe[CriticalStages::kMax];
  int kept = 0;
  int start = stage_layers(model.layers, c, 0);
  for (int stage = 1; stage + 1 < c.pp; ++stage) {
    const int layers = stage_layers(model.layers, c, stage);
    double moe = 0;
    if (model.is_moe() && c.vp == 1) {
      moe = moe_layers_before(model, start + layers) - moe_layers_before(model, start);
    } else {
      moe = stage_moe_layers(model, c, stage, layers, false);
    }
    start += layers;
    bool dominated = false;
    for (int k = 0; k < kept && !dominated; ++k)
      dominated =
          kept_layers[k] >= layers && kept_moe[k] >= moe && kept_layers[k] - kept_moe[k] >= layers - moe;
    if (dominated) continue;
    if (out.count == CriticalStages::kMax) {
      out.all = true;
      return out;
    }
    kept_layers[kept] = layers, kept_moe[kept] = moe, ++kept;
    out.stage[out.count++] = stage;
  }
  return out;
}

ActivationShape activation_shape(const JobSpec& job, const ParallelConfig& c) {
  ActivationShape shape;
  shape.seq = job.seq;
  shape.micro_batch = c.mbs;
  shape.tp = c.tp;
  shape.cp = c.cp;
  shape.sp = c.sp;
  shape.flash_attention = c.flash_attention;
  shape.recompute = c.recompute;
  // Only where fp8 linear layers save the fp8 cast of their inputs
  // (Transformer Engine); torchao's keep the 16-bit input (JobSpec).
  shape.fp8 = job.precision == Precision::kFp8 && job.fp8_saves_cast;
  shape.cross_entropy = job.cross_entropy;
  shape.selective_checkpoint = job.selective_checkpoint;
  shape.recompute_modules = job.recompute_modules;
  shape.moe_probs_in_activation = job.moe_probs_in_activation;
  shape.partitioned_checkpoint = partitions_checkpoints(job, c);
  shape.eager_elementwise = !job.fused_elementwise;
  return shape;
}

int recomputed_layers(const ParallelConfig& c, int stage_layer_count) {
  if (c.recompute != Recompute::kFull) return 0;
  if (c.recompute_layers <= 0) return stage_layer_count;
  return std::min(stage_layer_count, c.recompute_layers * c.vp);
}

StageMemory stage_memory(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         const ParallelConfig& c, const StageLoad& load, int stage) {
  const DeviceSpec& device = cluster.device;
  StageMemory memory;
  memory.states =
      model_state_bytes(load.params, job.optimizer_shard_stage(c.zero), c.dp * c.cp,
                        job.optimizer_state_bytes_per_param(c.zero),
                        gradient_bytes_per_param(job.precision, c.zero, job.grad_reduce_for(c.zero)));
  if (c.hierarchical_partition && c.zero >= 3) {
    const GroupSpan span = group_span_at(cluster, c.dp * c.cp, c.tp, stage * c.tp * c.cp * c.dp, c.world());
    const ShardGroups g = shard_groups(cluster, c, span);
    memory.states.params_bytes = 2.0 * load.params / g.params;
    if (g.backward < g.params) memory.secondary_bytes = 2.0 * load.params / g.backward;
    memory.states.params_bytes += memory.secondary_bytes;
    memory.states.grads_bytes = 2.0 * load.params / g.grads;
    memory.states.optimizer_bytes = job.optimizer_state_bytes_per_param(c.zero) * load.params / g.optimizer;
  } else if (job.pytorch_fsdp() && c.zero >= 3) {
    const int hsdp = hsdp_shard_ranks(job, c);
    if (hsdp > 0)
      memory.states =
          model_state_bytes(load.params, c.zero, hsdp, job.optimizer_state_bytes_per_param(c.zero),
                            gradient_bytes_per_param(job.precision, c.zero, job.grad_reduce_for(c.zero)));
    keep_fsdp_fp32_shards(memory.states, load.params, hsdp > 0 ? hsdp : c.dp * c.cp);
  } else if (c.hpz_ranks > 1 && c.zero >= 3) {
    // hpZ: a secondary copy of the weights sharded over hpz_ranks ranks
    // (Wang et al. 2023: M / k more per device).
    memory.secondary_bytes = 2.0 * load.params / c.hpz_ranks;
    memory.states.params_bytes += memory.secondary_bytes;
  }

  if (load.expert_params > 0) {
    // Distributed optimizer / ZeRO over the expert-data-parallel group, or
    // HSDP's expert shard group.
    const int expert_hsdp = hsdp_expert_shard_ranks(job, c);
    const int expert_shard = expert_hsdp > 0 ? expert_hsdp : c.edp();
    const ModelStateBytes experts =
        model_state_bytes(load.expert_params, job.optimizer_shard_stage(c.zero), expert_shard,
                          job.optimizer_state_bytes_per_param(c.zero),
                          gradient_bytes_per_param(job.precision, c.zero, job.grad_reduce_for(c.zero)));
    ModelStateBytes expert_states = experts;
    if (job.pytorch_fsdp() && c.zero >= 3)
      keep_fsdp_fp32_shards(expert_states, load.expert_params, expert_shard);
    memory.states.params_bytes += expert_states.params_bytes;
    memory.states.grads_bytes += expert_states.grads_bytes;
    memory.states.optimizer_bytes += expert_states.optimizer_bytes;
  }
  // ZeRO-2 reduced once per step accumulates the step's gradients unsharded
  // first: FSDP2 keeps the unsharded accumulated gradient in the reduce
  // dtype (torch/distributed/fsdp/_fully_shard/_fsdp_param.py
  // to_accumulated_grad_if_needed), Llama 3 "FP32 gradient accumulation
  // during backward computation over multiple micro-batches" (Dubey et al.
  // 2024, sec. 3.3.2).
  // So does ZeRO-3 beside PyTorch's pipelining (pipeline_defers_sharded_sync).
  const int m = c.micro_batches();
  // Beside PyTorch's pipelining even one micro-batch's gradients wait
  // unsharded for the reduction after the stage's last backward.
  const bool deferred =
      pipeline_defers_sharded_sync(job.grad_sync, c.zero, c.pp) && (c.zero == 2 || job.pytorch_fsdp());
  const bool deferred_zero3 = deferred && c.zero >= 3;
  if ((c.zero == 2 && m > 1 && grad_sync_plan(job.grad_sync, c.zero, c.pp, m).reductions == 1) || deferred)
    memory.states.grads_bytes +=
        gradient_bytes_per_param(job.precision, c.zero, job.grad_reduce_for(c.zero)) *
        (load.params + load.expert_params);

  ActivationShape shape = activation_shape(job, c);
  ActivationShape stored = shape;
  stored.recompute = c.recompute == Recompute::kSelective ? Recompute::kSelective : Recompute::kNone;
  double full_layer = layer_activation_bytes(model, stored);
  double moe_layer = full_layer;
  if (model.is_moe()) {
    moe_layer = moe_layer_activation_bytes(model, stored, moe_shape(model, job, c));
    if (load.layers > 0)
      full_layer = ((load.layers - load.moe_layers) * full_layer + load.moe_layers * moe_layer) / load.layers;
  }
  const double input_only = layer_input_bytes(model, shape);
  const int recomputed = recomputed_layers(c, load.layers);
  const double in_flight = in_flight_micro_batches(c, stage);
  double activations = in_flight * ((load.layers - recomputed) * full_layer + recomputed * input_only);
  // Recomputing a layer rebuilds its full activations for one micro-batch;
  // so does torchtitan's op-level checkpointing (everything it did not keep).
  double rebuilt = 0;
  if (recomputed > 0) rebuilt += full_layer;
  // Megatron's mlp / moe modules rebuild one block's internals during its
  // layer's backward.
  if (recomputed == 0 && (megatron_recomputes(stored, &RecomputeModules::mlp) ||
                          megatron_recomputes(stored, &RecomputeModules::moe))) {
    ActivationShape inner = stored;
    inner.recompute_modules.mlp = inner.recompute_modules.moe = false;
    double transient = 0;
    if (load.layers > load.moe_layers)
      transient = layer_activation_bytes(model, inner) - layer_activation_bytes(model, stored);
    if (load.moe_layers > 0) {
      const MoeShape s = moe_shape(model, job, c);
      transient = std::max(transient, moe_layer_activation_bytes(model, inner, s) -
                                          moe_layer_activation_bytes(model, stored, s));
    }
    rebuilt += transient;
  }
  if (recomputed == 0 && c.recompute == Recompute::kSelective &&
      job.selective_checkpoint == SelectiveCheckpoint::kTorchtitanOps) {
    // The layer's backward rebuilds what the checkpoint did not keep; what
    // it kept is counted above.
    ActivationShape whole = shape;
    whole.recompute = Recompute::kNone;
    rebuilt += layer_activation_bytes(model, whole) - layer_activation_bytes(model, stored);
  }
  // Embedding dropout's output and mask (Korthikanti sec. 4.3); without
  // dropout the embedding output is the first layer's input, counted there.
  if (load.first && model.dropout > 0)
    activations += in_flight * 3.0 * job.seq * c.mbs / c.cp * model.hidden / (c.sp ? c.tp : 1);
  // The loss holds its logits at the start of the backward and has given
  // them up (its gradient consumed by the output layer) before the last
  // layer is rebuilt, so the two transients do not add (measured on an
  // H100: calibration/h100-kernels/memory_fsdp.csv).
  activations += std::max(rebuilt, load.last ? logits_bytes(model, shape) : 0.0);
  // Multi-token-prediction modules: their layer and their own logits.
  if (load.mtp > 0) activations += load.mtp * (moe_layer + logits_bytes(model, shape));
  memory.activations_bytes = activations;

  double buffers = device.reserved_bytes;
  if (c.zero >= 3) {
    // Gathered weights of the layer being computed and the one prefetched.
    const double layer_params = load.layers > 0 ? ((load.params + load.expert_params) / load.layers) : 0.0;
    double gathered = 2.0 * 2.0 * layer_params;
    // Beside a pipeline each backward leaves the stage's 16-bit weights
    // gathered until the next forward reshards them unit by unit, while that
    // forward's activations grow: at the backward's end the stage holds all
    // its weights and one micro-batch's activations less than at the peak.
    if (deferred_zero3 && in_flight > 0)
      gathered = std::max(gathered, 2.0 * (load.params + load.expert_params) - activations / in_flight);
    buffers += gathered;
  }
  memory.buffers_bytes = buffers;
  // Allocator fragmentation applies to transient allocations (activations);
  // the model states live in buffers allocated once (Megatron's contiguous
  // param/grad buffers, DeepSpeed's contiguous_gradients, the optimizer's
  // flat states) that do not fragment.
  const double transient = activations * (1.0 + device.allocator_headroom_fraction);
  memory.peak_bytes = memory.states.total() + transient + buffers;
  // PyTorch's FSDP frees the gradients before each step and reduce-scatters
  // each unit's as its backward ends, while the activations go: with one
  // micro-batch a step, the sharded gradients and the activations peak at
  // the two ends of the backward, not together (measured on an H100:
  // calibration/h100-kernels/memory_fsdp.csv). More micro-batches keep the
  // earlier ones' gradients through the later ones' activations.
  if (job.pytorch_fsdp() && c.zero >= 2 && c.micro_batches() == 1)
    memory.peak_bytes = memory.states.total() - memory.states.grads_bytes +
                        std::max(memory.states.grads_bytes, transient) + buffers;
  return memory;
}

MemoryBreakdown memory_breakdown(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                 const ParallelConfig& c) {
  MemoryBreakdown out;
  out.capacity_bytes = job.memory_budget_bytes(cluster.device.usable_hbm_bytes());
  ActivationShape shape = activation_shape(job, c);
  out.activations_per_layer_bytes = layer_activation_bytes(model, shape);
  // An MoE model's layers keep more (the routed copies): the mean over the
  // model's layers.
  const int moe_layers = moe_layer_count(model);
  if (moe_layers > 0 && model.layers > 0)
    out.activations_per_layer_bytes =
        ((model.layers - moe_layers) * out.activations_per_layer_bytes +
         moe_layers * moe_layer_activation_bytes(model, shape, moe_shape(model, job, c))) /
        model.layers;
  // Stage 0 holds the most micro-batches; the last stage holds the logits;
  // a middle stage may hold one layer more than either, or more MoE layers.
  // A custom split may give any stage the most layers: look at all of them.
  const CriticalStages critical = critical_stages(model, c);
  const int count = critical.all ? c.pp : critical.count;
  for (int i = 0; i < count; ++i) {
    const int stage = critical.all ? i : critical.stage[i];
    const StageLoad load = stage_load(model, job, c, stage);
    const StageMemory memory = stage_memory(model, cluster, job, c, load, stage);
    if (memory.peak_bytes > out.peak_bytes) {
      out.peak_bytes = memory.peak_bytes;
      out.params_bytes = memory.states.params_bytes;
      out.params_secondary_bytes = memory.secondary_bytes;
      out.grads_bytes = memory.states.grads_bytes;
      out.optimizer_bytes = memory.states.optimizer_bytes;
      out.activations_bytes = memory.activations_bytes;
      out.buffers_bytes = memory.buffers_bytes;
      out.peak_stage = stage;
    }
  }
  out.fits = out.peak_bytes <= out.capacity_bytes;
  return out;
}

}  // namespace parplan::detail

namespace parplan {

MemoryBreakdown estimate_memory(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                const ParallelConfig& config) {
  return detail::memory_breakdown(model, cluster, job, config);
}

}  // namespace parplan
