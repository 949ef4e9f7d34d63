#include "cost/step_cost.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "cost/compute_time.h"
#include "cost/flops.h"
#include "cost/memory.h"
#include "cost/parameters.h"
#include "cost/recompute_replay.h"
#include "cost/stage_layout.h"
#include "cost/step_internal.h"

namespace parplan {

using namespace detail;

namespace {
// Per Limiter, in its declaration order: the sentence form for prose and the
// one-word key for table columns and CSV.
struct LimiterNames {
  const char* name;
  const char* key;
};
constexpr LimiterNames kLimiterNames[] = {
    {"compute", "compute"},
    {"pipeline bubble", "bubble"},
    {"tensor-parallel communication", "tp_comm"},
    {"context-parallel communication", "cp_comm"},
    {"pipeline point-to-point communication", "pp_comm"},
    {"data-parallel communication", "dp_comm"},
    {"expert-parallel communication", "ep_comm"},
    {"memory", "memory"},
};
static_assert(std::size(kLimiterNames) == static_cast<std::size_t>(Limiter::kMemory) + 1,
              "one entry per Limiter");

const LimiterNames& limiter_names(Limiter limiter) {
  const auto index = static_cast<std::size_t>(limiter);
  return kLimiterNames[index < std::size(kLimiterNames) ? index : 0];
}
}  // namespace

const char* limiter_name(Limiter limiter) { return limiter_names(limiter).name; }

const char* limiter_key(Limiter limiter) { return limiter_names(limiter).key; }

StageCoefficients stage_coefficients(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                     const ParallelConfig& config, int stage, bool recompute_terms) {
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
    total1 += dp_cost(cluster, job, as_given, one.params, t1, m, stage, nullptr, shard_units(one),
                      one.edge_unit_params, one.linear_params)
                  .exposed_s /
              m;
    total2 += dp_cost(cluster, job, as_given, two.params, t2, m, stage, nullptr, shard_units(two),
                      two.edge_unit_params, two.linear_params)
                  .exposed_s /
              m;
  }
  k.layer_time_s = total2 - total1;
  k.extra_time_s = total1 - k.layer_time_s;
  const StageMemory m1 = stage_memory(model, cluster, job, as_given, one, stage);
  const StageMemory m2 = stage_memory(model, cluster, job, as_given, two, stage);
  k.layer_memory_bytes = m2.peak_bytes - m1.peak_bytes;
  k.fixed_memory_bytes = m1.peak_bytes - k.layer_memory_bytes;
  if (!recompute_terms) return k;
  // Full recomputation of one layer: its forward (and tp traffic) again, and
  // the activations it keeps shrink to its input.
  ParallelConfig recomputing = config;
  recomputing.recompute = Recompute::kFull;
  const double gather_s =
      partitions_checkpoints(job, recomputing)
          ? per_layer_costs(model, cluster, job, recomputing, stage).comm.checkpoint_gather_s
          : 0.0;
  k.recompute_time_s = costs.dense.forward_s + costs.comm.tp_forward_s + costs.comm.cp_forward_s + gather_s;
  // What one more recomputed layer frees: the per-layer slope of the stage's
  // peak without recomputation less its slope with every layer recomputed,
  // read off the memory model itself (an MoE layer's expert activations and
  // dispatch buffers included, which a dense layer's formula would miss).
  ParallelConfig stored = config;
  stored.recompute = Recompute::kNone;
  recomputing.recompute_layers = 0;
  const auto layer_slope = [&](const ParallelConfig& c) {
    return stage_memory(model, cluster, job, c, stage_load(model, job, c, stage, 2), stage).peak_bytes -
           stage_memory(model, cluster, job, c, stage_load(model, job, c, stage, 1), stage).peak_bytes;
  };
  k.recompute_saved_bytes = std::max(0.0, layer_slope(stored) - layer_slope(recomputing));
  return k;
}

namespace {
// `time_only`: the step time and its parts, without memory, FLOPs and
// throughput (the search's lower bound per shape needs nothing else).
CostReport cost_with(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                     const ParallelConfig& c, const MemoryBreakdown* known_memory, bool time_only) {
  CostReport report;
  const DeviceSpec& device = cluster.device;
  const double peak = device.peak_flops_per_s(job.precision);
  const int m = c.micro_batches();
  StageTime slowest;
  StageLoad slowest_load;
  TimeBreakdown& time = report.time;
  if (!cluster.heterogeneous() && !c.custom_split() && pipeline_links_alike(cluster, c)) {
    const PerLayerCosts costs = per_layer_costs(model, cluster, job, c);
    double max_params = 0;
    double max_expert_params = 0;
    double max_units = 0, max_moe_units = 0, max_edge_params = 0, max_linear_params = 0;
    const CriticalStages critical = critical_stages(model, c);
    const int probes = critical.all ? c.pp : critical.count;
    for (int i = 0; i < probes; ++i) {
      const int stage = critical.all ? i : critical.stage[i];
      const StageLoad load = stage_load(model, job, c, stage);
      max_params = std::max(max_params, load.params);
      max_linear_params = std::max(max_linear_params, load.linear_params);
      max_expert_params = std::max(max_expert_params, load.expert_params);
      max_units = std::max(max_units, shard_units(load));
      max_edge_params = std::max(max_edge_params, load.edge_unit_params);
      max_moe_units = std::max(max_moe_units, std::ceil(load.moe_layers));
      const StageTime t = stage_time(c, costs, load);
      if (t.total() > slowest.total()) slowest = t, slowest_load = load;
    }
    const DpCost dp = dp_cost(cluster, job, c, max_params, slowest, m, 0, &report.dp_traffic, max_units,
                              max_edge_params, std::min(max_linear_params, max_params));
    const DpCost edp = expert_dp_cost(cluster, job, c, max_expert_params, dp.window_left, m, 0,
                                      &report.dp_traffic, max_moe_units);
    time.dp_comm_s = dp.exposed_s + edp.exposed_s;
    time.optimizer_s =
        optimizer_step_s(device, dp.optimizer_params + edp.optimizer_params, job.optimizer_kernels);
  } else {
    // Stages differ (their node groups' fabrics, pipeline boundaries on
    // different links, or an arbitrary split):
    // every stage on its own; the step waits for the slowest pipeline stage
    // and the slowest data-parallel exchange.
    for (int stage = 0; stage < c.pp; ++stage) {
      const PerLayerCosts costs = per_layer_costs(model, cluster, job, c, stage);
      const StageLoad load = stage_load(model, job, c, stage);
      const StageTime t = stage_time(c, costs, load);
      if (t.total() > slowest.total()) slowest = t, slowest_load = load;
      TierTraffic traffic;
      const DpCost dp = dp_cost(cluster, job, c, load.params, t, m, stage, &traffic, shard_units(load),
                                load.edge_unit_params, load.linear_params);
      const DpCost edp = expert_dp_cost(cluster, job, c, load.expert_params, dp.window_left, m, stage,
                                        &traffic, std::ceil(load.moe_layers));
      if (stage == 0 || dp.exposed_s + edp.exposed_s > time.dp_comm_s)
        time.dp_comm_s = dp.exposed_s + edp.exposed_s, report.dp_traffic = traffic;
      time.optimizer_s = std::max(
          time.optimizer_s,
          optimizer_step_s(device, dp.optimizer_params + edp.optimizer_params, job.optimizer_kernels));
    }
  }
  time.dp_comm_s += tied_embedding_reduce_s(model, cluster, job, c);
  time.compute_s = m * slowest.compute_s;
  time.tp_comm_s = m * slowest.tp_s;
  time.cp_comm_s = m * slowest.cp_s;
  time.pp_comm_s = m * slowest.pp_s;
  time.ep_comm_s = m * slowest.ep_s;
  time.bubble_s = pipeline_bubble_s(c.pp, c.vp, slowest.total());
  time.exposed_comm_s = time.tp_comm_s + time.cp_comm_s + time.pp_comm_s + time.dp_comm_s + time.ep_comm_s;
  time.step_s = time.compute_s + time.bubble_s + time.exposed_comm_s + time.optimizer_s;

  if (time_only) return report;
  report.memory = known_memory != nullptr ? *known_memory : memory_breakdown(model, cluster, job, c);
  report.params = total_params(model, job.seq);
  double recomputed_fraction = 0;
  if (c.recompute == Recompute::kFull && slowest_load.layers > 0)
    recomputed_fraction =
        static_cast<double>(recomputed_layers(c, slowest_load.layers)) / slowest_load.layers;
  // What selective recomputation repeats depends on its modules (or on
  // torchtitan's op policy), not on the enum alone.
  const bool selective = c.recompute == Recompute::kSelective;
  StepFlops flops =
      step_flops(model, c.gbs, job.seq, selective ? Recompute::kNone : c.recompute, recomputed_fraction);
  if (selective) flops.hardware_flops += selective_recompute_flops(model, job, c.gbs);
  if (recomputed_fraction > 0 && recompute_skips_last_linear(job)) {
    // The replay leaves out each dense layer's FFN output projection.
    const int dense_layers = model.layers - moe_layer_count(model);
    flops.hardware_flops -= recomputed_fraction * dense_layers * 2.0 * static_cast<double>(c.gbs) * job.seq *
                            model.hidden * static_cast<double>(model.ffn_hidden);
  }
  report.model_flops = flops.model_flops;
  report.hardware_flops = flops.hardware_flops;

  Throughput& tput = report.throughput;
  const double world = c.world();
  tput.tokens_per_s = static_cast<double>(c.gbs) * job.seq / time.step_s;
  tput.model_tflops_per_gpu = flops.model_flops / time.step_s / world / 1e12;
  tput.hardware_tflops_per_gpu = flops.hardware_flops / time.step_s / world / 1e12;
  // Utilisation is quoted against the datasheet peak, as published runs
  // quote it, not against a power-limited part's re-clocked one.
  const double datasheet_peak = peak / device.power_clock_ratio;
  tput.mfu = tput.model_tflops_per_gpu * 1e12 / datasheet_peak;
  tput.hfu = tput.hardware_tflops_per_gpu * 1e12 / datasheet_peak;

  const double parts[7] = {time.compute_s, time.bubble_s,  time.tp_comm_s, time.cp_comm_s,
                           time.pp_comm_s, time.dp_comm_s, time.ep_comm_s};
  const Limiter names[7] = {Limiter::kCompute, Limiter::kBubble, Limiter::kTpComm, Limiter::kCpComm,
                            Limiter::kPpComm,  Limiter::kDpComm, Limiter::kEpComm};
  // The limiter is the largest cost beside compute, if it takes at least a
  // tenth of the step; otherwise compute.
  int worst = 1;
  for (int i = 2; i < 7; ++i) worst = parts[i] > parts[worst] ? i : worst;
  if (parts[worst] < 0.1 * time.step_s) worst = 0;
  // A plan within 2 % of its memory budget is memory-bound: it cannot grow
  // its micro-batch or drop recomputation (issue: the limiter says memory).
  constexpr double kMemoryBoundFraction = 0.98;
  const bool memory_bound =
      !report.memory.fits || report.memory.peak_bytes >= kMemoryBoundFraction * report.memory.capacity_bytes;
  report.limiter = memory_bound ? Limiter::kMemory : names[worst];
  return report;
}
}  // namespace

CostReport estimate_cost(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         const ParallelConfig& c) {
  return cost_with(model, cluster, job, c, nullptr, false);
}

CostReport estimate_cost(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                         const ParallelConfig& c, const MemoryBreakdown& memory) {
  return cost_with(model, cluster, job, c, &memory, false);
}

TimeBreakdown estimate_step_time(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                                 const ParallelConfig& c) {
  return cost_with(model, cluster, job, c, nullptr, true).time;
}

}  // namespace parplan
