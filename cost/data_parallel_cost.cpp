// Data-parallel and ZeRO-family cost: how ZeRO-1/2/3, ZeRO++ and the
// hierarchical partition shard model states over the data-parallel group,
// and the exposed time of their collectives in one step.
#include <algorithm>
#include <cmath>

#include "cost/collectives.h"
#include "cost/grad_sync_schedule.h"
#include "cost/memory.h"
#include "cost/overlap.h"
#include "cost/step_cost.h"
#include "cost/step_internal.h"
#include "cost/zero_buckets.h"

namespace parplan::detail {

namespace {
// The tier index of one node, or -1 on a cluster without one.
int node_tier_index(const ClusterSpec& cluster, int tiers) {
  for (int i = 0; i < tiers; ++i)
    if (cluster.tiers[i].ranks == cluster.ranks_per_node) return i;
  return -1;
}
}  // namespace

int level_ranks(const ClusterSpec& cluster, const GroupSpan& span, PartitionLevel level) {
  const int size = span.tiers > 0 ? span.members[span.tiers - 1] : 1;
  const int node = node_tier_index(cluster, span.tiers);
  if (level == PartitionLevel::kJob || node < 0) return size;
  const int tier = level == PartitionLevel::kNode ? node : std::max(0, node - 1);
  return span.members[tier];
}

int hsdp_shard_ranks(const JobSpec& job, const ParallelConfig& c) {
  if (!job.pytorch_fsdp() || c.zero < 3 || c.hierarchical_partition || c.hpz_ranks <= 1) return 0;
  return std::min(c.hpz_ranks, c.dp * c.cp);
}

int hsdp_expert_shard_ranks(const JobSpec& job, const ParallelConfig& c) {
  const int hsdp = hsdp_shard_ranks(job, c);
  const int expert_ranks = std::max(1, c.ep * c.etp);
  if (hsdp <= 0) return 0;
  const long long shard = std::max(1LL, static_cast<long long>(hsdp) * c.tp / expert_ranks);
  return shard < c.edp() ? static_cast<int>(shard) : 0;
}

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

namespace {
// FSDP exchanges the unit it gathers first before any compute can run
// ("The 1st all-gather will not be able to overlap with anything", PyTorch's
// FSDP notes, "FSDP Prefetch Nuances"), and the end of a backward waits for
// its last unit's reduce-scatter (FSDP2's root post-backward callback waits
// for the reduce-scatter stream; FSDP1's for the post-backward stream): one
// call each, over the same group, for that unit's share of the bytes.
// `comm_s` holds them among the rest; they are exposed whatever the window.
double fsdp_exposed_s(double comm_s, double edge_s, double window_s, double slowdown) {
  edge_s = std::min(edge_s, comm_s);
  return edge_s + exposed_after_overlap_s(comm_s - edge_s, window_s, slowdown);
}

// The part of `window_s` that hiding `comm_s` (its first `edge_s` exposed)
// occupies: compute slowed by (1 + slowdown) runs beside it
// (exposed_after_overlap_s), so two exchanges hidden one after the other in
// what each leaves cost exactly what hiding their sum in the window does.
double window_used_s(double comm_s, double edge_s, double window_s, double slowdown) {
  const double hidden_comm_s = std::max(0.0, comm_s - std::min(edge_s, comm_s));
  return std::clamp(hidden_comm_s / (1.0 + slowdown), 0.0, std::max(0.0, window_s));
}

// `window` less what an exchange occupied of the whole micro-batch
// (`compute_used_s`, spread over its forward and backward alike), of its
// last backward and of its first forward.
StageTime window_after(StageTime window, double compute_used_s, double backward_used_s,
                       double forward_used_s) {
  const double left = window.compute_s > 0 ? std::max(0.0, 1.0 - compute_used_s / window.compute_s) : 0.0;
  window.backward_last_s = std::max(0.0, window.backward_last_s * left - backward_used_s);
  window.forward_s = std::max(0.0, window.forward_s * left - forward_used_s);
  window.compute_s = std::max(0.0, window.compute_s - compute_used_s - backward_used_s - forward_used_s);
  return window;
}
}  // namespace

DpCost dp_cost(const ClusterSpec& cluster, const JobSpec& job, const ParallelConfig& c, double params,
               const StageTime& window, int m, int stage, TierTraffic* traffic, double units,
               double edge_unit_params, double linear_params) {
  DpCost out;
  const int shard = c.dp * c.cp;
  const double slowdown = cluster.device.overlap_compute_slowdown;
  const int optimizer_stage = job.optimizer_shard_stage(c.zero);
  out.optimizer_params = params / (optimizer_stage >= 1 ? shard : 1);
  out.window_left = window;
  if (shard <= 1) return out;
  const int first = stage * c.tp * c.cp * c.dp;
  const GroupSpan span = group_span_at(cluster, shard, c.tp, first, c.world());
  // torchtitan's fp8 all-gather sends the fp8 cast of each linear weight's
  // shard, one byte, the rest at 16 bits (JobSpec::fsdp_fp8_all_gather).
  const bool fp8_gather = job.fsdp_fp8_all_gather && job.precision == Precision::kFp8 && c.zero >= 3;
  const double weight_bytes = (c.qwz ? 1.0 : 2.0) * params - (fp8_gather && !c.qwz ? linear_params : 0.0);
  if (c.zero >= 3) {
    // qgZ quantizes every gradient exchange, the hierarchical scheme's
    // once-per-step reduction between partition replicas included. Without
    // it the reduce-scatter moves the reduce dtype: fp32 where the engine
    // reduces in fp32 (torchtitan's FSDP2 mixed_precision_reduce float32,
    // Composer's FSDP1 DEFAULT), twice the 16-bit gradient's bytes.
    const double grad_bytes =
        (c.qgz ? 0.5 : gradient_bytes_per_param(job.precision, c.zero, job.grad_reduce_for(c.zero))) * params;
    ShardGroups g = shard_groups(cluster, c, span);
    // HSDP: every partition is the shard group; FSDP all-reduces each
    // reduce-scattered gradient shard across the replicas with it, unit by
    // unit (FSDP2's post-backward over the mesh's replicate dimension).
    const int hsdp = hsdp_shard_ranks(job, c);
    if (hsdp > 0) g.params = g.forward = g.backward = g.grads = g.optimizer = hsdp;
    out.optimizer_params = params / g.optimizer;
    // `size` consecutive members of the group, or one member of each of
    // `size` consecutive domains of `apart` members.
    const auto sub = [&](int size, int apart) {
      return group_span_at(cluster, size, c.tp * apart, first, c.world());
    };
    // Every micro-batch: weights gathered for the forward (over the primary
    // partition) and the backward (over the secondary one: hpZ, or the
    // hierarchical scheme's), gradients reduce-scattered into their
    // partition; prefetching overlaps it with the micro-batch's compute.
    // DeepSpeed issues one collective per bucket (stage3_prefetch_bucket_size
    // 5e7 and reduce_bucket_size 5e8 elements, the values parplan emits);
    // FSDP (torchtitan's FSDP2, Megatron FSDP) one per unit and direction;
    // only ring collectives make the count matter.
    const bool per_unit = job.shard_unit == ShardUnit::kLayer && units > 0;
    const double gather_calls = per_unit ? units : std::ceil(params / kZeroPrefetchBucketElements);
    const double reduce_calls = per_unit ? units : std::ceil(params / kZeroReduceBucketElements);
    // Beside PyTorch's pipelining the weights stay gathered from each
    // backward to the next forward, so only the forwards before the stage's
    // first backward gather (1F1B: pp - stage of them); the gradients are
    // reduced once, after the last backward (pipeline_defers_sharded_sync).
    const bool deferred = pipeline_defers_sharded_sync(job.grad_sync, c.zero, c.pp);
    const int forward_gathers = deferred ? std::clamp(c.pp - stage, 1, m) : m;
    const int reductions = deferred ? 1 : m;
    const double gather_forward = bucketed_all_gather_s(cluster, sub(g.forward, 1), weight_bytes,
                                                        gather_calls, traffic, forward_gathers);
    const bool secondary = c.hierarchical_partition ? g.backward != g.forward : c.hpz_ranks > 1 && hsdp == 0;
    const double gather_backward =
        secondary ? bucketed_all_gather_s(cluster, sub(g.backward, 1), 2.0 * params, gather_calls, traffic, m)
                  : bucketed_all_gather_s(cluster, sub(g.forward, 1), weight_bytes, gather_calls, traffic, m);
    // qgZ reduces through DeepSpeed's own hierarchical all-to-all (inside
    // the node, then across nodes), not a ring.
    // A ring all-reduce is a reduce-scatter and an all-gather of its bytes.
    const double reduce =
        (c.qgz ? all_gather_s(cluster, sub(g.grads, 1), grad_bytes, traffic, reductions)
               : bucketed_all_gather_s(cluster, sub(g.grads, 1), grad_bytes, reduce_calls, traffic,
                                       reductions)) +
        (hsdp > 0 ? 2.0 * bucketed_all_gather_s(cluster, sub(shard / hsdp, hsdp), grad_bytes / hsdp,
                                                reduce_calls, traffic, 2.0 * reductions)
                  : 0.0);
    const double edge_share = per_unit && params > 0 ? std::min(1.0, edge_unit_params / params) : 0.0;
    const double edge_gather_s =
        edge_share > 0
            ? bucketed_all_gather_s(cluster, sub(g.forward, 1), edge_share * weight_bytes, 1, nullptr, 1)
            : 0.0;
    const double edge_reduce_s =
        edge_share > 0
            ? bucketed_all_gather_s(cluster, sub(g.grads, 1), edge_share * grad_bytes, 1, nullptr, 1)
            : 0.0;
    // Once per step, between the replicas of partitions that do not span
    // the group: gradient shards reduce-scattered into the optimizer
    // partition (all-reduced across its replicas) as the last backward
    // frees them, updated weights gathered back into the weight partition
    // before the next forward needs them. Flat ZeRO-3 has none of it.
    double step_reduce = 0;
    double step_gather = 0;
    if (g.optimizer > g.grads)
      step_reduce +=
          bucketed_all_gather_s(cluster, sub(g.optimizer / g.grads, g.grads), grad_bytes / g.grads,
                                std::ceil(params / g.grads / kZeroReduceBucketElements), traffic, 1);
    if (shard > g.optimizer && hsdp == 0)
      step_reduce +=
          all_reduce_s(cluster, sub(shard / g.optimizer, g.optimizer), grad_bytes / g.optimizer, traffic, 1);
    if (g.optimizer > g.params)
      step_gather +=
          bucketed_all_gather_s(cluster, sub(g.optimizer / g.params, g.params), 2.0 * params / g.params,
                                std::ceil(params / g.params / kZeroReduceBucketElements), traffic, 1);
    // The forward's gathers hide only behind the forward, the backward's
    // gathers and reduce-scatters only behind the backward (its
    // recomputation included): each unit's exchange is prefetched one unit
    // ahead within its pass, and the reduce-scatters trail the backward.
    const double hidden_forward = c.overlap_grad_reduce ? std::min(window.forward_s, window.compute_s) : 0.0;
    const double hidden_backward =
        c.overlap_grad_reduce ? std::max(0.0, window.compute_s - hidden_forward) : 0.0;
    // The step's exchanges can use what the micro-batch's own traffic leaves
    // idle of the last backward (the reduction) and of the first forward
    // (the weight gather).
    const double backward_slack =
        c.overlap_grad_reduce
            ? std::max(0.0, window.backward_last_s - gather_backward - (deferred ? 0.0 : reduce))
            : 0.0;
    const double forward_slack =
        c.overlap_grad_reduce ? std::max(0.0, window.forward_s - gather_forward) : 0.0;
    // A deferred reduction runs after the stage's last backward, beside
    // nothing (the schedule's REDUCE_GRAD action).
    const double backward_comm_s = gather_backward + (deferred ? 0.0 : reduce);
    const double forward_share = static_cast<double>(forward_gathers) / m;
    out.exposed_s =
        forward_gathers * fsdp_exposed_s(gather_forward, edge_gather_s, hidden_forward, slowdown) +
        m * fsdp_exposed_s(backward_comm_s, edge_reduce_s, hidden_backward, slowdown) +
        (deferred ? reduce : 0.0) + exposed_after_overlap_s(step_reduce, backward_slack, slowdown) +
        exposed_after_overlap_s(step_gather, forward_slack, slowdown);
    out.window_left =
        window_after(window,
                     forward_share * window_used_s(gather_forward, edge_gather_s, hidden_forward, slowdown) +
                         window_used_s(backward_comm_s, edge_reduce_s, hidden_backward, slowdown),
                     window_used_s(step_reduce, 0, backward_slack, slowdown),
                     window_used_s(step_gather, 0, forward_slack, slowdown));
    return out;
  }
  const double grad_bytes =
      gradient_bytes_per_param(job.precision, c.zero, job.grad_reduce_for(c.zero)) * params;
  // How many reductions a step runs and what each may hide behind is the
  // engine's schedule (cost/grad_sync_schedule.h): DeepSpeed's ZeRO-2
  // reduce-scatters every micro-batch, Megatron-LM once with the last
  // micro-batch's backward, PyTorch pipelining + FSDP2 once after it.
  const GradSyncPlan sync = grad_sync_plan(job.grad_sync, c.zero, c.pp, m);
  const int reductions = sync.reductions;
  // FSDP's ZeRO-2 (FSDP2 reshard_after_forward False, FSDP1 SHARD_GRAD_OP)
  // reduce-scatters and gathers per unit, as its ZeRO-3 does, and reshards
  // after every backward that reduces: the next micro-batch gathers again.
  const bool per_unit = job.shard_unit == ShardUnit::kLayer && units > 0 && c.zero == 2;
  const int gathers = per_unit ? reductions : 1;
  const double reduce = c.zero == 0 ? all_reduce_s(cluster, span, grad_bytes, traffic, reductions)
                        : per_unit
                            ? bucketed_all_gather_s(cluster, span, grad_bytes, units, traffic, reductions)
                            : all_gather_s(cluster, span, grad_bytes, traffic, reductions);
  // DeepSpeed's BF16_Optimizer all-reduces the fp32 gradients and gathers
  // the weights its partition updated (JobSpec::optimizer_shard_stage).
  const double gather = optimizer_stage == 0 ? 0.0
                        : per_unit
                            ? bucketed_all_gather_s(cluster, span, weight_bytes, units, traffic, gathers)
                            : all_gather_s(cluster, span, weight_bytes, traffic);
  // Overlap hides each reduction behind its micro-batch's backward and the
  // parameter gather behind the next step's first forward; DeepSpeed's
  // ZeRO-1 and BF16_Optimizer gather inside optimizer.step()
  // (all_gather_dp_groups in stage_1_and_2.py and bf16_optimizer.py step).
  const double reduce_window =
      c.overlap_grad_reduce && sync.window == GradSyncWindow::kOwnBackward ? window.backward_last_s : 0.0;
  const double gather_window =
      c.overlap_grad_reduce && job.grad_sync != GradSyncSchedule::kDeepSpeed ? window.forward_s : 0.0;
  const double edge_share = per_unit && params > 0 ? std::min(1.0, edge_unit_params / params) : 0.0;
  const double edge_reduce_s =
      edge_share > 0 ? bucketed_all_gather_s(cluster, span, edge_share * grad_bytes, 1, nullptr, 1) : 0.0;
  const double edge_gather_s =
      edge_share > 0 ? bucketed_all_gather_s(cluster, span, edge_share * weight_bytes, 1, nullptr, 1) : 0.0;
  out.exposed_s = reductions * fsdp_exposed_s(reduce, edge_reduce_s, reduce_window, slowdown) +
                  gathers * fsdp_exposed_s(gather, edge_gather_s, gather_window, slowdown);
  out.window_left = window_after(window, 0, window_used_s(reduce, edge_reduce_s, reduce_window, slowdown),
                                 window_used_s(gather, edge_gather_s, gather_window, slowdown));
  return out;
}

double tied_embedding_reduce_s(const ModelSpec& model, const ClusterSpec& cluster, const JobSpec& job,
                               const ParallelConfig& c) {
  if (!model.tied_embeddings || c.pp <= 1 || c.zero >= 3) return 0.0;
  // Rank order is stage by stage: the last stage's first rank lies
  // (pp - 1) stages of tp x cp x dp ranks after the first's.
  const int stage_ranks = c.tp * c.cp * c.dp;
  const GroupSpan span = group_span_at(cluster, 2, (c.pp - 1) * stage_ranks, 0, c.world());
  const double bytes = static_cast<double>(model.vocab) * model.hidden / c.tp *
                       gradient_bytes_per_param(job.precision, c.zero, job.grad_reduce_for(c.zero));
  return all_reduce_s(cluster, span, bytes);
}

DpCost expert_dp_cost(const ClusterSpec& cluster, const JobSpec& job, const ParallelConfig& c,
                      double expert_params, const StageTime& window, int m, int stage, TierTraffic* traffic,
                      double units) {
  if (expert_params <= 0) return {};
  // The expert-data-parallel group as a data-parallel group of edp ranks
  // spaced etp * ep apart; it spans the stage's tp * cp * dp ranks, so the
  // stage's first rank is the same. ZeRO++ and the hierarchical partition
  // are DeepSpeed's dense-model schemes: the experts use flat sharding.
  ParallelConfig e = c;
  e.tp = c.etp * c.ep;
  e.cp = 1;
  e.dp = c.edp();
  e.hierarchical_partition = false;
  // Under HSDP the experts are hybrid-sharded too (hsdp_expert_shard_ranks).
  // A group of one rank shards nothing: the replicas all-reduce.
  const int expert_hsdp = hsdp_expert_shard_ranks(job, c);
  e.hpz_ranks = expert_hsdp > 1 ? expert_hsdp : 1;
  if (expert_hsdp == 1) e.zero = 0;
  e.qwz = e.qgz = false;
  // `window`: what the dense exchange of the stage left (DpCost::window_left).
  return dp_cost(cluster, job, e, expert_params, window, m, stage, traffic, units);
}

}  // namespace parplan::detail

namespace parplan {

using detail::level_ranks;

int partition_ranks(const ClusterSpec& cluster, const ParallelConfig& config, PartitionLevel level) {
  const GroupSpan span = group_span_at(cluster, config.dp * config.cp, config.tp, 0, config.world());
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

}  // namespace parplan
