#include "cost/step_cost.h"

#include <algorithm>
#include <cmath>

#include "cost/collectives.h"
#include "cost/compute_time.h"
#include "cost/flops.h"
#include "cost/memory.h"
#include "cost/overlap.h"
#include "cost/parameters.h"
#include "cost/stage_layout.h"

namespace parplan {

const char* limiter_name(Limiter limiter) {
  switch (limiter) {
    case Limiter::kCompute:
      return "compute";
    case Limiter::kBubble:
      return "pipeline bubble";
    case Limiter::kTpComm:
      return "tensor-parallel communication";
    case Limiter::kCpComm:
      return "context-parallel communication";
    case Limiter::kPpComm:
      return "pipeline point-to-point communication";
    case Limiter::kDpComm:
      return "data-parallel communication";
    case Limiter::kMemory:
      return "memory";
  }
  return "compute";
}

const char* config_problem(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c) {
  if (c.tp < 1 || c.pp < 1 || c.cp < 1 || c.dp < 1 || c.vp < 1 || c.mbs < 1 || c.ep < 1)
    return "every parallel size and the micro-batch size must be at least 1";
  if (c.world() != job.gpus) return "tp * cp * pp * dp must equal the number of GPUs";
  if (model.heads % c.tp != 0) return "tp must divide the attention heads";
  if (!model.uses_mla() && model.kv_groups % c.tp != 0 && c.tp % model.kv_groups != 0)
    return "tp must divide the key/value groups (or be a multiple of them)";
  if (model.ffn_hidden % c.tp != 0) return "tp must divide the FFN width";
  if (c.gbs % (c.mbs * c.dp) != 0) return "gbs must be divisible by mbs * dp";
  if (job.seq % (c.cp > 1 ? 2 * c.cp : 1) != 0) return "seq must be divisible by 2 * cp";
  if (c.sp && c.tp == 1) return "sequence parallelism needs tp > 1";
  if (c.pp > model.layers) return "pp must not exceed the layers";
  if (!layout_is_valid(model.layers, c))
    return "layers must split evenly over pp stages and vp chunks (or give first/last stage layers)";
  if (c.vp > 1 && (c.pp < 2 || c.micro_batches() % c.pp != 0))
    return "the interleaved schedule (vp > 1) needs pp > 1 and micro-batches divisible by pp";
  if (c.zero < 0 || c.zero > 3) return "zero must be 0, 1, 2 or 3";
  if (c.zero >= 2 && c.pp > 1) return "ZeRO-2/3 cannot run with pipeline parallelism";
  if ((c.zeropp() || c.hierarchical_partition) && c.zero != 3)
    return "ZeRO++ (hpZ, qwZ, qgZ) and hierarchical partitioning need ZeRO stage 3";
  if (c.hpz_ranks < 1) return "hpZ partition size must be at least 1";
  if (c.hierarchical_partition) {
    const PartitionPlacement& p = c.partition;
    if (p.params_secondary > p.params)
      return "the secondary weight partition must lie inside the primary one";
    if (p.grads > p.optimizer) return "the gradient partition must lie inside the optimizer partition";
    if (p.params > p.optimizer) return "the weight partition must lie inside the optimizer partition";
  }
  if (model.is_moe() && (c.dp * c.cp) % c.ep != 0) return "ep must divide dp * cp";
  if (c.recompute == Recompute::kFull && c.recompute_layers * c.vp > model.layers)
    return "recompute layers exceed the layers of a stage";
  return nullptr;
}

namespace {

// The tier index of one node, or -1 on a cluster without one.
int node_tier_index(const ClusterSpec& cluster, int tiers) {
  for (int i = 0; i < tiers; ++i)
    if (cluster.tiers[i].ranks == cluster.ranks_per_node) return i;
  return -1;
}

// Ranks of the data-parallel group `span` inside one domain of `level`.
int level_ranks(const ClusterSpec& cluster, const GroupSpan& span, PartitionLevel level) {
  const int size = span.tiers > 0 ? span.members[span.tiers - 1] : 1;
  const int node = node_tier_index(cluster, span.tiers);
  if (level == PartitionLevel::kJob || node < 0) return size;
  const int tier = level == PartitionLevel::kNode ? node : std::max(0, node - 1);
  return span.members[tier];
}

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

ShardGroups shard_groups(const ClusterSpec& cluster, const ParallelConfig& c, const GroupSpan& span) {
  ShardGroups g;
  g.shard = c.dp * c.cp;
  if (c.zero < 3) {
    g.params = g.forward = g.backward = 1;
    g.grads = c.zero >= 2 ? g.shard : 1;
    g.optimizer = c.zero >= 1 ? g.shard : 1;
    return g;
  }
  if (!c.hierarchical_partition) {
    g.params = g.forward = g.grads = g.optimizer = g.shard;
    g.backward = c.hpz_ranks > 1 ? std::min(c.hpz_ranks, g.shard) : g.shard;
    return g;
  }
  g.params = g.forward = level_ranks(cluster, span, c.partition.params);
  g.backward = level_ranks(cluster, span, c.partition.params_secondary);
  g.grads = level_ranks(cluster, span, c.partition.grads);
  g.optimizer = level_ranks(cluster, span, c.partition.optimizer);
  return g;
}

// Everything about one pipeline stage that memory and time need.
struct StageLoad {
  int layers = 0;
  double moe_layers = 0;
  double params = 0;  // before ZeRO sharding
  bool first = false;
  bool last = false;
};

StageLoad stage_load(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c, int stage,
                     int layers) {
  StageLoad load;
  load.layers = layers;
  load.first = stage == 0;
  load.last = stage == c.pp - 1;
  const double moe_fraction =
      model.is_moe() ? static_cast<double>(moe_layer_count(model)) / model.layers : 0.0;
  load.moe_layers = moe_fraction * load.layers;
  const double dense_layers = load.layers - load.moe_layers;
  const double shared = attention_params(model) + layer_norm_params(model);
  double params = (load.layers * shared + dense_layers * dense_ffn_params(model)) / c.tp;
  if (load.moe_layers > 0) params += load.moe_layers * moe_ffn_params(model) / (c.tp * c.ep);
  if (load.first) params += embedding_params(model, job.seq) / c.tp;
  if (load.last) {
    // An untied head, or with pp > 1 Megatron's copy of the tied embedding.
    const double head = model.tied_embeddings ? (c.pp > 1 ? model.vocab * double(model.hidden) : 0.0)
                                              : untied_head_params(model);
    params += head / c.tp;
  }
  load.params = params;
  return load;
}

StageLoad stage_load(const ModelSpec& model, const JobSpec& job, const ParallelConfig& c, int stage) {
  return stage_load(model, job, c, stage, stage_layers(model.layers, c, stage));
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
  return shape;
}

int recomputed_layers(const ParallelConfig& c, int stage_layer_count) {
  if (c.recompute != Recompute::kFull) return 0;
  if (c.recompute_layers <= 0) return stage_layer_count;
  return std::min(stage_layer_count, c.recompute_layers * c.vp);
}

struct StageMemory {
  ModelStateBytes states;
  double secondary_bytes = 0;
  double activations_bytes = 0;
  double buffers_bytes = 0;
  double peak_bytes = 0;
};

StageMemory stage_memory(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         const ParallelConfig& c, const StageLoad& load, int stage) {
  const DeviceSpec& device = cluster.device;
  StageMemory memory;
  memory.states = model_state_bytes(load.params, c.zero, c.dp * c.cp, job.optimizer_state_bytes_per_param(),
                                    gradient_bytes_per_param(job.precision, c.zero));
  if (c.hierarchical_partition && c.zero >= 3) {
    const GroupSpan span = group_span_at(cluster, c.dp * c.cp, c.tp, stage * c.tp * c.cp * c.dp);
    const ShardGroups g = shard_groups(cluster, c, span);
    memory.states.params_bytes = 2.0 * load.params / g.params;
    if (g.backward < g.params) memory.secondary_bytes = 2.0 * load.params / g.backward;
    memory.states.params_bytes += memory.secondary_bytes;
    memory.states.grads_bytes = 2.0 * load.params / g.grads;
    memory.states.optimizer_bytes = job.optimizer_state_bytes_per_param() * load.params / g.optimizer;
  } else if (c.hpz_ranks > 1 && c.zero >= 3) {
    // hpZ: a secondary copy of the weights sharded over hpz_ranks ranks
    // (Wang et al. 2023: M / k more per device).
    memory.secondary_bytes = 2.0 * load.params / c.hpz_ranks;
    memory.states.params_bytes += memory.secondary_bytes;
  }

  ActivationShape shape = activation_shape(job, c);
  ActivationShape stored = shape;
  stored.recompute = c.recompute == Recompute::kSelective ? Recompute::kSelective : Recompute::kNone;
  const double full_layer = layer_activation_bytes(model, stored);
  const double input_only = layer_input_bytes(model, shape);
  const int recomputed = recomputed_layers(c, load.layers);
  const double in_flight = in_flight_micro_batches(c, stage);
  double activations = in_flight * ((load.layers - recomputed) * full_layer + recomputed * input_only);
  // Recomputing a layer rebuilds its full activations for one micro-batch.
  if (recomputed > 0) activations += full_layer;
  // Embedding output and its dropout mask (Korthikanti sec. 4.3).
  if (load.first) activations += in_flight * 3.0 * job.seq * c.mbs / c.cp * model.hidden / (c.sp ? c.tp : 1);
  if (load.last) activations += logits_bytes(model, shape);
  memory.activations_bytes = activations;

  double buffers = device.reserved_bytes;
  if (c.zero >= 3) {
    // Gathered weights of the layer being computed and the one prefetched.
    const double layer_params = load.layers > 0 ? (load.params / load.layers) : 0.0;
    buffers += 2.0 * 2.0 * layer_params * c.dp * c.cp / std::max(1, c.dp * c.cp);
  }
  memory.buffers_bytes = buffers;
  memory.peak_bytes =
      (memory.states.total() + activations) * (1.0 + device.allocator_headroom_fraction) + buffers;
  return memory;
}

MemoryBreakdown memory_breakdown(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                 const ParallelConfig& c) {
  MemoryBreakdown out;
  out.capacity_bytes = cluster.device.hbm_bytes;
  ActivationShape shape = activation_shape(job, c);
  out.activations_per_layer_bytes = layer_activation_bytes(model, shape);
  // Stage 0 holds the most micro-batches; the last stage holds the logits;
  // a middle stage may hold one layer more than either.
  // A custom split may give any stage the most layers: look at all of them.
  const int candidates[3] = {0, c.pp - 1, c.pp > 2 ? 1 : 0};
  const int count = c.custom_split() ? c.pp : 3;
  for (int i = 0; i < count; ++i) {
    const int stage = c.custom_split() ? i : candidates[i];
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

// Per-layer, per-micro-batch communication on the critical path.
struct LayerComm {
  double tp_forward_s = 0;
  double tp_backward_s = 0;
  double cp_forward_s = 0;
  double cp_backward_s = 0;
  double ep_forward_s = 0;
  double ep_backward_s = 0;
};

// `stage` places the groups on a heterogeneous cluster (its first rank).
LayerComm layer_comm(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                     const ParallelConfig& c, const LayerComputeTimes& times, int stage) {
  LayerComm comm;
  const int first = stage * c.tp * c.cp * c.dp;
  const double tokens = static_cast<double>(c.mbs) * job.seq / c.cp;
  if (c.tp > 1) {
    // Two all-reduces of b s h in each direction (with sp: all-gather +
    // reduce-scatter of the same total volume).
    const GroupSpan span = group_span_at(cluster, c.tp, 1, first);
    const double one = all_reduce_s(cluster, span, 2.0 * tokens * model.hidden);
    comm.tp_forward_s = 2.0 * one;
    comm.tp_backward_s = 2.0 * one;
  }
  if (c.cp > 1) {
    // Ring attention: cp - 1 steps pass this rank's keys and values (forward)
    // and their gradients too (backward), overlapped with attention compute.
    const GroupSpan span = group_span_at(cluster, c.cp, c.tp, first);
    const double kv_bytes = 2.0 * 2.0 * tokens * model.kv_groups * model.head_dim / c.tp;
    const double step_s = all_gather_s(cluster, span, kv_bytes * c.cp) / std::max(1, c.cp - 1);
    const double forward = (c.cp - 1) * step_s;
    const double slowdown = cluster.device.overlap_compute_slowdown;
    comm.cp_forward_s = exposed_after_overlap_s(forward, times.attention_forward_s, slowdown);
    comm.cp_backward_s = exposed_after_overlap_s(2.0 * forward, 2.0 * times.attention_forward_s, slowdown);
  }
  if (model.is_moe() && c.ep > 1) {
    // Dispatch and combine all-to-alls of tokens * top_k * h, each direction.
    const GroupSpan span = group_span_at(cluster, c.ep, c.tp * c.cp, first);
    const double one = all_to_all_s(cluster, span, 2.0 * tokens * model.top_k * model.hidden / c.tp);
    comm.ep_forward_s = 2.0 * one;
    comm.ep_backward_s = 2.0 * one;
  }
  return comm;
}

// Everything per layer and per micro-batch that stage times are built from.
struct PerLayerCosts {
  LayerComputeTimes dense, moe;
  LayerComm comm;
  EdgeComputeTimes edges;
  double p2p_s = 0;             // point-to-point per micro-batch on the critical path
  double overlap_slowdown = 0;  // compute slowdown beside overlapped traffic
};

// Pipeline point-to-point time of one micro-batch on `stage` of a
// heterogeneous cluster: each boundary at its own link (the node group's
// fabric, or the link between groups); the stage waits on its slower side.
double heterogeneous_p2p_s(const ClusterSpec& cluster, const ParallelConfig& c, int stage, double bytes) {
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

PerLayerCosts per_layer_costs(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                              const ParallelConfig& c, int stage = 0) {
  PerLayerCosts costs;
  const DeviceSpec& device = cluster.device;
  const double peak = device.peak_flops_per_s(job.precision);
  const double tokens = static_cast<double>(c.mbs) * job.seq / c.cp;
  LayerShape shape;
  shape.tokens = tokens;
  shape.seq = job.seq;
  shape.tp = c.tp;
  shape.sp = c.sp;
  shape.flash_attention = c.flash_attention;
  costs.dense = layer_compute_times(model, device, peak, shape);
  if (model.is_moe()) {
    shape.is_moe = true;
    costs.moe = layer_compute_times(model, device, peak, shape);
  }
  costs.comm = layer_comm(model, cluster, job, c, costs.dense, stage);
  costs.edges = edge_compute_times(model, device, peak, tokens, c.tp);
  costs.overlap_slowdown = device.overlap_compute_slowdown;
  // Point-to-point: activations forward and gradients backward, once per
  // chunk boundary, b s h / t elements (scatter-gather or sp).
  if (c.pp > 1) {
    const double bytes = 2.0 * tokens * model.hidden / c.tp;
    costs.p2p_s = cluster.heterogeneous() ? 2.0 * c.vp * heterogeneous_p2p_s(cluster, c, stage, bytes)
                                          : 2.0 * c.vp * point_to_point_s(cluster, c.tp * c.cp * c.dp, bytes);
  }
  return costs;
}

struct StageTime {
  double compute_s = 0;  // one micro-batch, all chunks of the stage
  double tp_s = 0;
  double cp_s = 0;
  double pp_s = 0;
  double backward_last_s = 0;  // backward of one micro-batch (overlap window)
  double forward_s = 0;
  double total() const { return compute_s + tp_s + cp_s + pp_s; }
};

// One micro-batch through all chunks of a stage.
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
    extra = dense_layers * dense.attention_forward_s + load.moe_layers * moe.attention_forward_s;
  } else if (recomputed > 0) {
    const double per_layer = (dense_layers * dense.forward_s + load.moe_layers * moe.forward_s) / load.layers;
    extra = recomputed * per_layer;
  }
  if (load.first) t.forward_s += edges.embedding_s, backward += edges.embedding_s;
  if (load.last) t.forward_s += edges.head_forward_s, backward += edges.head_backward_s;
  t.compute_s = t.forward_s + backward + extra;
  t.backward_last_s = backward + extra;
  t.tp_s = load.layers * (dense_comm.tp_forward_s + dense_comm.tp_backward_s) +
           recomputed * dense_comm.tp_forward_s;
  t.cp_s = load.layers * (dense_comm.cp_forward_s + dense_comm.cp_backward_s) +
           recomputed * dense_comm.cp_forward_s;
  t.cp_s += load.moe_layers * (dense_comm.ep_forward_s + dense_comm.ep_backward_s);
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

// Data-parallel communication of one stage in one step.
struct DpCost {
  double exposed_s = 0;         // left on the critical path after overlap
  double optimizer_params = 0;  // parameters this rank's optimizer updates
};

// Over the dp x cp group (Megatron's distributed optimizer and gradient
// reduction span both) of pipeline stage `stage`, for `params` parameters on
// the stage; `window` gives the compute that the traffic may hide behind.
DpCost dp_cost(const ClusterSpec& cluster, const JobSpec& job, const ParallelConfig& c, double params,
               const StageTime& window, int m, int stage, TierTraffic* traffic) {
  DpCost out;
  const int shard = c.dp * c.cp;
  const double slowdown = cluster.device.overlap_compute_slowdown;
  out.optimizer_params = params / (c.zero >= 1 ? shard : 1);
  if (shard <= 1) return out;
  const int first = stage * c.tp * c.cp * c.dp;
  const GroupSpan span = group_span_at(cluster, shard, c.tp, first);
  const double weight_bytes = (c.qwz ? 1.0 : 2.0) * params;
  if (c.zero >= 3) {
    // qgZ quantizes every gradient exchange, the hierarchical scheme's
    // once-per-step reduction between partition replicas included.
    const double grad_bytes = (c.qgz ? 0.5 : 2.0) * params;
    const ShardGroups g = shard_groups(cluster, c, span);
    out.optimizer_params = params / g.optimizer;
    // `size` consecutive members of the group, or one member of each of
    // `size` consecutive domains of `apart` members.
    const auto sub = [&](int size, int apart) { return group_span_at(cluster, size, c.tp * apart, first); };
    // Every micro-batch: weights gathered for the forward (over the primary
    // partition) and the backward (over the secondary one: hpZ, or the
    // hierarchical scheme's), gradients reduce-scattered into their
    // partition; prefetching overlaps it with the micro-batch's compute.
    // DeepSpeed issues one collective per bucket (stage3_prefetch_bucket_size
    // 5e7 and reduce_bucket_size 5e8 elements, the values parplan emits);
    // only ring collectives make the count matter.
    const double gather_calls = std::ceil(params / 5e7);
    const double reduce_calls = std::ceil(params / 5e8);
    const double gather_forward =
        bucketed_all_gather_s(cluster, sub(g.forward, 1), weight_bytes, gather_calls, traffic, m);
    const bool secondary = c.hierarchical_partition ? g.backward != g.forward : c.hpz_ranks > 1;
    const double gather_backward =
        secondary ? bucketed_all_gather_s(cluster, sub(g.backward, 1), 2.0 * params, gather_calls, traffic, m)
                  : bucketed_all_gather_s(cluster, sub(g.forward, 1), weight_bytes, gather_calls, traffic, m);
    // qgZ reduces through DeepSpeed's own hierarchical all-to-all (inside
    // the node, then across nodes), not a ring.
    const double reduce =
        c.qgz ? all_gather_s(cluster, sub(g.grads, 1), grad_bytes, traffic, m)
              : bucketed_all_gather_s(cluster, sub(g.grads, 1), grad_bytes, reduce_calls, traffic, m);
    const double per_micro_batch = gather_forward + gather_backward + reduce;
    // Once per step, between the replicas of partitions that do not span
    // the group: gradient shards reduce-scattered into the optimizer
    // partition (all-reduced across its replicas) as the last backward
    // frees them, updated weights gathered back into the weight partition
    // before the next forward needs them. Flat ZeRO-3 has none of it.
    double step_reduce = 0;
    double step_gather = 0;
    if (g.optimizer > g.grads)
      step_reduce += bucketed_all_gather_s(cluster, sub(g.optimizer / g.grads, g.grads), grad_bytes / g.grads,
                                           std::ceil(params / g.grads / 5e8), traffic, 1);
    if (shard > g.optimizer)
      step_reduce +=
          all_reduce_s(cluster, sub(shard / g.optimizer, g.optimizer), grad_bytes / g.optimizer, traffic, 1);
    if (g.optimizer > g.params)
      step_gather +=
          bucketed_all_gather_s(cluster, sub(g.optimizer / g.params, g.params), 2.0 * params / g.params,
                                std::ceil(params / g.params / 5e8), traffic, 1);
    const double hidden = c.overlap_grad_reduce ? window.compute_s : 0.0;
    // The step's exchanges can use what the micro-batch's own traffic leaves
    // idle of the last backward (the reduction) and of the first forward
    // (the weight gather).
    const double backward_slack =
        c.overlap_grad_reduce ? std::max(0.0, window.backward_last_s - gather_backward - reduce) : 0.0;
    const double forward_slack =
        c.overlap_grad_reduce ? std::max(0.0, window.forward_s - gather_forward) : 0.0;
    out.exposed_s = m * exposed_after_overlap_s(per_micro_batch, hidden, slowdown) +
                    exposed_after_overlap_s(step_reduce, backward_slack, slowdown) +
                    exposed_after_overlap_s(step_gather, forward_slack, slowdown);
    return out;
  }
  const double grad_bytes = gradient_bytes_per_param(job.precision, c.zero) * params;
  const double reduce = c.zero == 0 ? all_reduce_s(cluster, span, grad_bytes, traffic)
                                    : all_gather_s(cluster, span, grad_bytes, traffic);
  const double gather = c.zero == 0 ? 0.0 : all_gather_s(cluster, span, weight_bytes, traffic);
  // Overlap hides the reduction behind the last micro-batch's backward
  // and the parameter gather behind the next step's first forward.
  const double reduce_window = c.overlap_grad_reduce ? window.backward_last_s : 0.0;
  const double gather_window = c.overlap_grad_reduce ? window.forward_s : 0.0;
  out.exposed_s = exposed_after_overlap_s(reduce, reduce_window, slowdown) +
                  exposed_after_overlap_s(gather, gather_window, slowdown);
  return out;
}

}  // namespace

int partition_ranks(const ClusterSpec& cluster, const ParallelConfig& config, PartitionLevel level) {
  const GroupSpan span = group_span_at(cluster, config.dp * config.cp, config.tp, 0);
  return level_ranks(cluster, span, level);
}

void apply_zeropp(const ClusterSpec& cluster, ParallelConfig& c) {
  c.zero = 3;
  c.hierarchical_partition = false;
  c.hpz_ranks = std::max(1, partition_ranks(cluster, c, PartitionLevel::kNode));
  c.qwz = c.qgz = true;
}

void apply_hierarchical_partition(ParallelConfig& c, const PartitionPlacement& placement) {
  c.zero = 3;
  c.hierarchical_partition = true;
  c.partition = placement;
  c.hpz_ranks = 1;
  c.qwz = c.qgz = true;
}

const char* placement_problem(const ClusterSpec& cluster, const ParallelConfig& c) {
  if (!c.hierarchical_partition) return nullptr;
  const int shard = c.dp * c.cp;
  const PartitionLevel levels[4] = {c.partition.params, c.partition.params_secondary, c.partition.grads,
                                    c.partition.optimizer};
  int previous = 1;
  for (PartitionLevel level : {PartitionLevel::kPackage, PartitionLevel::kNode, PartitionLevel::kJob}) {
    const int ranks = partition_ranks(cluster, c, level);
    if (shard % ranks != 0 || ranks % previous != 0)
      return "a partition level's ranks must divide the data-parallel group (and the next level's)";
    previous = ranks;
  }
  for (PartitionLevel level : levels)
    if (partition_ranks(cluster, c, level) < 1) return "a partition level holds no rank";
  return nullptr;
}

MemoryBreakdown estimate_memory(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                const ParallelConfig& config) {
  return memory_breakdown(model, cluster, job, config);
}

StageCoefficients stage_coefficients(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                     const ParallelConfig& config, int stage) {
  StageCoefficients k;
  const PerLayerCosts costs = per_layer_costs(model, cluster, job, config, stage);
  // Time and memory are affine in the stage's layer count: read the slope
  // and intercept off one and two layers.
  // With full recomputation of every layer (recompute_layers 0) time and
  // memory stay affine; with a fixed count they are read off as if every
  // layer were recomputed.
  ParallelConfig as_given = config;
  if (as_given.recompute == Recompute::kFull) as_given.recompute_layers = 0;
  const StageLoad one = stage_load(model, job, as_given, stage, 1);
  const StageLoad two = stage_load(model, job, as_given, stage, 2);
  const StageTime t1 = stage_time(as_given, costs, one);
  const StageTime t2 = stage_time(as_given, costs, two);
  double total1 = t1.total(), total2 = t2.total();
  if (cluster.heterogeneous()) {
    // Stages on different fabrics differ in their data-parallel exchange:
    // spread its exposed time over the step's micro-batches.
    const int m = std::max(1, as_given.micro_batches());
    total1 += dp_cost(cluster, job, as_given, one.params, t1, m, stage, nullptr).exposed_s / m;
    total2 += dp_cost(cluster, job, as_given, two.params, t2, m, stage, nullptr).exposed_s / m;
  }
  k.layer_time_s = total2 - total1;
  k.extra_time_s = total1 - k.layer_time_s;
  const StageMemory m1 = stage_memory(model, cluster, job, as_given, one, stage);
  const StageMemory m2 = stage_memory(model, cluster, job, as_given, two, stage);
  k.layer_memory_bytes = m2.peak_bytes - m1.peak_bytes;
  k.fixed_memory_bytes = m1.peak_bytes - k.layer_memory_bytes;
  // Full recomputation of one layer: its forward (and tp traffic) again, and
  // the activations it keeps shrink to its input.
  k.recompute_time_s = (costs.dense.forward_s + costs.comm.tp_forward_s + costs.comm.cp_forward_s);
  ParallelConfig stored = config;
  stored.recompute = Recompute::kNone;
  ActivationShape shape = activation_shape(job, stored);
  const double kept = layer_activation_bytes(model, shape) - layer_input_bytes(model, shape);
  k.recompute_saved_bytes =
      in_flight_micro_batches(config, stage) * kept * (1.0 + cluster.device.allocator_headroom_fraction);
  return k;
}

CostReport estimate_cost(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         const ParallelConfig& c) {
  CostReport report;
  const DeviceSpec& device = cluster.device;
  const double peak = device.peak_flops_per_s(job.precision);
  const int m = c.micro_batches();
  StageTime slowest;
  StageLoad slowest_load;
  TimeBreakdown& time = report.time;
  if (!cluster.heterogeneous() && !c.custom_split()) {
    const PerLayerCosts costs = per_layer_costs(model, cluster, job, c);
    double max_params = 0;
    const int probe[3] = {0, c.pp - 1, c.pp > 2 ? 1 : 0};
    for (int stage : probe) {
      const StageLoad load = stage_load(model, job, c, stage);
      max_params = std::max(max_params, load.params);
      const StageTime t = stage_time(c, costs, load);
      if (t.total() > slowest.total()) slowest = t, slowest_load = load;
    }
    const DpCost dp = dp_cost(cluster, job, c, max_params, slowest, m, 0, &report.dp_traffic);
    time.dp_comm_s = dp.exposed_s;
    time.optimizer_s = optimizer_step_s(device, dp.optimizer_params);
  } else {
    // Stages differ (their node groups' fabrics, or an arbitrary split):
    // every stage on its own; the step waits for the slowest pipeline stage
    // and the slowest data-parallel exchange.
    for (int stage = 0; stage < c.pp; ++stage) {
      const PerLayerCosts costs = per_layer_costs(model, cluster, job, c, stage);
      const StageLoad load = stage_load(model, job, c, stage);
      const StageTime t = stage_time(c, costs, load);
      if (t.total() > slowest.total()) slowest = t, slowest_load = load;
      TierTraffic traffic;
      const DpCost dp = dp_cost(cluster, job, c, load.params, t, m, stage, &traffic);
      if (stage == 0 || dp.exposed_s > time.dp_comm_s)
        time.dp_comm_s = dp.exposed_s, report.dp_traffic = traffic;
      time.optimizer_s = std::max(time.optimizer_s, optimizer_step_s(device, dp.optimizer_params));
    }
  }
  time.compute_s = m * slowest.compute_s;
  time.tp_comm_s = m * slowest.tp_s;
  time.cp_comm_s = m * slowest.cp_s;
  time.pp_comm_s = m * slowest.pp_s;
  time.bubble_s = (c.pp - 1) * slowest.total() / c.vp;
  time.exposed_comm_s = time.tp_comm_s + time.cp_comm_s + time.pp_comm_s + time.dp_comm_s;
  time.step_s = time.compute_s + time.bubble_s + time.exposed_comm_s + time.optimizer_s;

  report.memory = memory_breakdown(model, cluster, job, c);
  report.params = total_params(model, job.seq);
  double recomputed_fraction = 0;
  if (c.recompute == Recompute::kFull && slowest_load.layers > 0)
    recomputed_fraction =
        static_cast<double>(recomputed_layers(c, slowest_load.layers)) / slowest_load.layers;
  const StepFlops flops = step_flops(model, c.gbs, job.seq, c.recompute, recomputed_fraction);
  report.model_flops = flops.model_flops;
  report.hardware_flops = flops.hardware_flops;

  Throughput& tput = report.throughput;
  const double world = c.world();
  tput.tokens_per_s = static_cast<double>(c.gbs) * job.seq / time.step_s;
  tput.model_tflops_per_gpu = flops.model_flops / time.step_s / world / 1e12;
  tput.hardware_tflops_per_gpu = flops.hardware_flops / time.step_s / world / 1e12;
  tput.mfu = tput.model_tflops_per_gpu * 1e12 / peak;
  tput.hfu = tput.hardware_tflops_per_gpu * 1e12 / peak;

  const double parts[6] = {time.compute_s, time.bubble_s,  time.tp_comm_s,
                           time.cp_comm_s, time.pp_comm_s, time.dp_comm_s};
  const Limiter names[6] = {Limiter::kCompute, Limiter::kBubble, Limiter::kTpComm,
                            Limiter::kCpComm,  Limiter::kPpComm, Limiter::kDpComm};
  // The limiter is the largest cost beside compute, if it takes at least a
  // tenth of the step; otherwise compute.
  int worst = 1;
  for (int i = 2; i < 6; ++i) worst = parts[i] > parts[worst] ? i : worst;
  if (parts[worst] < 0.1 * time.step_s) worst = 0;
  report.limiter = report.memory.fits ? names[worst] : Limiter::kMemory;
  return report;
}

}  // namespace parplan
