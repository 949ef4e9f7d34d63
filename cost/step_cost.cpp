#include "cost/step_cost.h"

#include <algorithm>

#include "cost/collectives.h"
#include "cost/compute_time.h"
#include "cost/flops.h"
#include "cost/memory.h"
#include "cost/parameters.h"
#include "cost/stage_layout.h"

namespace parplan {

const char* limiter_name(Limiter limiter) {
  switch (limiter) {
    case Limiter::kCompute: return "compute";
    case Limiter::kBubble: return "pipeline bubble";
    case Limiter::kTpComm: return "tensor-parallel communication";
    case Limiter::kCpComm: return "context-parallel communication";
    case Limiter::kPpComm: return "pipeline point-to-point communication";
    case Limiter::kDpComm: return "data-parallel communication";
    case Limiter::kMemory: return "memory";
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
  if (model.is_moe() && (c.dp * c.cp) % c.ep != 0) return "ep must divide dp * cp";
  if (c.recompute == Recompute::kFull && c.recompute_layers * c.vp > model.layers)
    return "recompute layers exceed the layers of a stage";
  return nullptr;
}

namespace {

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
  const double moe_fraction = model.is_moe() ? static_cast<double>(moe_layer_count(model)) / model.layers : 0.0;
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
  double activations_bytes = 0;
  double buffers_bytes = 0;
  double peak_bytes = 0;
};

StageMemory stage_memory(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         const ParallelConfig& c, const StageLoad& load, int stage) {
  const DeviceSpec& device = cluster.device;
  StageMemory memory;
  memory.states = model_state_bytes(load.params, c.zero, c.dp * c.cp, job.optimizer_state_bytes_per_param());
  if (c.hpz_ranks > 1 && c.zero >= 3) memory.states.params_bytes += 2.0 * load.params / c.hpz_ranks;

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
  memory.peak_bytes = (memory.states.total() + activations) * (1.0 + device.allocator_headroom_fraction) + buffers;
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
  const int candidates[3] = {0, c.pp - 1, c.pp > 2 ? 1 : 0};
  for (int stage : candidates) {
    const StageLoad load = stage_load(model, job, c, stage);
    const StageMemory memory = stage_memory(model, cluster, job, c, load, stage);
    if (memory.peak_bytes > out.peak_bytes) {
      out.peak_bytes = memory.peak_bytes;
      out.params_bytes = memory.states.params_bytes;
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

LayerComm layer_comm(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                     const ParallelConfig& c, const LayerComputeTimes& times) {
  LayerComm comm;
  const double tokens = static_cast<double>(c.mbs) * job.seq / c.cp;
  if (c.tp > 1) {
    // Two all-reduces of b s h in each direction (with sp: all-gather +
    // reduce-scatter of the same total volume).
    const GroupSpan span = group_span(cluster, c.tp, 1);
    const double one = all_reduce_s(cluster, span, 2.0 * tokens * model.hidden);
    comm.tp_forward_s = 2.0 * one;
    comm.tp_backward_s = 2.0 * one;
  }
  if (c.cp > 1) {
    // Ring attention: cp - 1 steps pass this rank's keys and values (forward)
    // and their gradients too (backward), overlapped with attention compute.
    const GroupSpan span = group_span(cluster, c.cp, c.tp);
    const double kv_bytes = 2.0 * 2.0 * tokens * model.kv_groups * model.head_dim / c.tp;
    const double step_s = all_gather_s(cluster, span, kv_bytes * c.cp) / std::max(1, c.cp - 1);
    const double forward = (c.cp - 1) * step_s;
    comm.cp_forward_s = std::max(0.0, forward - times.attention_forward_s);
    comm.cp_backward_s = std::max(0.0, 2.0 * forward - 2.0 * times.attention_forward_s);
  }
  if (model.is_moe() && c.ep > 1) {
    // Dispatch and combine all-to-alls of tokens * top_k * h, each direction.
    const GroupSpan span = group_span(cluster, c.ep, c.tp * c.cp);
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
  double p2p_s = 0;  // point-to-point per micro-batch on the critical path
};

PerLayerCosts per_layer_costs(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                              const ParallelConfig& c) {
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
  costs.comm = layer_comm(model, cluster, job, c, costs.dense);
  costs.edges = edge_compute_times(model, device, peak, tokens, c.tp);
  // Point-to-point: activations forward and gradients backward, once per
  // chunk boundary, b s h / t elements (scatter-gather or sp).
  if (c.pp > 1) {
    const double bytes = 2.0 * tokens * model.hidden / c.tp;
    costs.p2p_s = 2.0 * c.vp * point_to_point_s(cluster, c.tp * c.cp * c.dp, bytes);
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
  return t;
}

}  // namespace

MemoryBreakdown estimate_memory(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                const ParallelConfig& config) {
  return memory_breakdown(model, cluster, job, config);
}

StageCoefficients stage_coefficients(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                     const ParallelConfig& config, int stage) {
  StageCoefficients k;
  const PerLayerCosts costs = per_layer_costs(model, cluster, job, config);
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
  k.layer_time_s = t2.total() - t1.total();
  k.extra_time_s = t1.total() - k.layer_time_s;
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
  const PerLayerCosts costs = per_layer_costs(model, cluster, job, c);
  StageTime slowest;
  StageLoad slowest_load;
  double max_params = 0;
  const int probe[3] = {0, c.pp - 1, c.pp > 2 ? 1 : 0};
  for (int stage : probe) {
    const StageLoad load = stage_load(model, job, c, stage);
    max_params = std::max(max_params, load.params);
    const StageTime t = stage_time(c, costs, load);
    if (t.total() > slowest.total()) slowest = t, slowest_load = load;
  }

  TimeBreakdown& time = report.time;
  time.compute_s = m * slowest.compute_s;
  time.tp_comm_s = m * slowest.tp_s;
  time.cp_comm_s = m * slowest.cp_s;
  time.pp_comm_s = m * slowest.pp_s;
  time.bubble_s = (c.pp - 1) * slowest.total() / c.vp;

  // Data-parallel traffic over the dp x cp group (Megatron's distributed
  // optimizer and gradient reduction span both).
  const int shard = c.dp * c.cp;
  if (shard > 1) {
    const GroupSpan span = group_span(cluster, shard, c.tp);
    const double grad_bytes = (c.qgz ? 0.5 : 2.0) * max_params;
    const double weight_bytes = (c.qwz ? 1.0 : 2.0) * max_params;
    if (c.zero >= 3) {
      // Weights gathered for every micro-batch's forward and backward (hpZ
      // gathers the backward inside its secondary group), gradients
      // reduce-scattered every micro-batch; prefetching overlaps it with the
      // micro-batch's compute.
      const GroupSpan hpz = group_span(cluster, std::min(c.hpz_ranks, shard), c.tp);
      const double gather_forward = all_gather_s(cluster, span, weight_bytes);
      const double gather_backward =
          c.hpz_ranks > 1 ? all_gather_s(cluster, hpz, 2.0 * max_params) : gather_forward;
      const double reduce = all_gather_s(cluster, span, grad_bytes);
      const double per_micro_batch = gather_forward + gather_backward + reduce;
      const double hidden = c.overlap_grad_reduce ? slowest.compute_s : 0.0;
      time.dp_comm_s = m * std::max(0.0, per_micro_batch - hidden);
    } else {
      const double reduce = c.zero == 0 ? all_reduce_s(cluster, span, grad_bytes)
                                        : all_gather_s(cluster, span, grad_bytes);
      const double gather = c.zero == 0 ? 0.0 : all_gather_s(cluster, span, weight_bytes);
      // Overlap hides the reduction behind the last micro-batch's backward
      // and the parameter gather behind the next step's first forward.
      const double reduce_window = c.overlap_grad_reduce ? slowest.backward_last_s : 0.0;
      const double gather_window = c.overlap_grad_reduce ? slowest.forward_s : 0.0;
      time.dp_comm_s = std::max(0.0, reduce - reduce_window) + std::max(0.0, gather - gather_window);
    }
  }
  time.optimizer_s = optimizer_step_s(device, max_params / (c.zero >= 1 ? shard : 1));
  time.exposed_comm_s = time.tp_comm_s + time.cp_comm_s + time.pp_comm_s + time.dp_comm_s;
  time.step_s = time.compute_s + time.bubble_s + time.exposed_comm_s + time.optimizer_s;

  report.memory = memory_breakdown(model, cluster, job, c);
  report.params = total_params(model, job.seq);
  double recomputed_fraction = 0;
  if (c.recompute == Recompute::kFull && slowest_load.layers > 0)
    recomputed_fraction = static_cast<double>(recomputed_layers(c, slowest_load.layers)) / slowest_load.layers;
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

  const double parts[6] = {time.compute_s, time.bubble_s, time.tp_comm_s,
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
