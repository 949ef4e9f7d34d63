#include "cost/moe_dispatch.h"

#include <algorithm>
#include <cmath>

#include "cost/overlap.h"

namespace parplan {

double dispatch_bytes(const ModelSpec& m, double tokens, double element_bytes, int ep) {
  if (ep <= 1) return 0;
  return tokens * m.top_k * static_cast<double>(m.hidden) * element_bytes * (ep - 1.0) / ep;
}

double expected_destination_nodes(int nodes, int top_k, int node_limit) {
  if (nodes <= 1) return 1.0;
  const double n = nodes;
  const double distinct = n * (1.0 - std::pow(1.0 - 1.0 / n, top_k));
  return node_limit > 0 ? std::min(distinct, static_cast<double>(node_limit)) : distinct;
}

namespace {
// The tier index whose domain is one node (-1 if none among the span's).
int node_tier(const ClusterSpec& cluster, const GroupSpan& span) {
  for (int i = 0; i < span.tiers; ++i)
    if (cluster.tiers[i].ranks == cluster.ranks_per_node) return i;
  return -1;
}

const NetworkTier& tier_at(const ClusterSpec& cluster, const GroupSpan& span, int i) {
  return (span.outer != nullptr && i == span.tiers - 1) ? *span.outer : cluster.tiers[i];
}
}  // namespace

double dispatch_s(const ClusterSpec& cluster, const GroupSpan& span, const ModelSpec& m,
                  const DispatchShape& s) {
  if (span.tiers == 0) return 0;
  const int ep = span.members[span.tiers - 1];
  if (ep <= 1) return 0;
  // What the rank holds before the exchange: all_to_all_s sends the
  // (ep - 1) / ep of it that is bound elsewhere, tier by tier.
  const double held =
      s.tokens * m.top_k * static_cast<double>(m.hidden) * s.element_bytes * s.load_factor * s.compression;
  const int node = node_tier(cluster, span);
  if (!s.hierarchical || node < 0 || node + 1 >= span.tiers || span.members[node] >= ep)
    return all_to_all_s(cluster, span, held);
  // Hierarchical: ranks of the group per node and nodes of the group.
  const int per_node = span.members[node];
  const int nodes = ep / std::max(1, per_node);
  const int node_limit = m.route_groups > 0 && m.route_group_topk > 0 ? m.route_group_topk : 0;
  const double remote_nodes = expected_destination_nodes(nodes, m.top_k, node_limit) * (nodes - 1.0) / nodes;
  const double per_copy = static_cast<double>(m.hidden) * s.element_bytes * s.load_factor * s.compression;
  const NetworkTier& outer = tier_at(cluster, span, span.tiers - 1);
  const NetworkTier& inner = tier_at(cluster, span, node);
  // Across nodes each rank's NIC carries its tokens' remote node copies.
  const double network_s =
      s.tokens * remote_nodes * per_copy / outer.effective_bytes_per_s() + (nodes - 1) * outer.latency_s;
  // Inside the node every copy is forwarded to its expert's GPU.
  const double nvlink_s =
      s.tokens * m.top_k * per_copy * (per_node - 1.0) / per_node / inner.effective_bytes_per_s() +
      (per_node - 1) * inner.latency_s;
  return std::max(network_s, nvlink_s);
}

EpLayerComm moe_layer_comm(const ModelSpec& m, const ClusterSpec& cluster, const JobSpec& job,
                           const ParallelConfig& c, const MoeLayerCompute& compute, int first_rank) {
  EpLayerComm out;
  if (!m.is_moe() || c.ep * c.etp <= 1) return out;
  DispatchShape shape;
  shape.tokens = static_cast<double>(c.mbs) * job.seq / (c.cp * c.tp);
  shape.load_factor = moe_load_factor(m, job, c);
  shape.hierarchical = c.a2a_hierarchical;
  shape.compression = job.a2a_compression;
  // Expert grid order: etp innermost, then ep (Megatron's expert rank
  // generator, MoE parallel folding).
  const GroupSpan ep_span = group_span_at(cluster, c.ep, c.etp, first_rank, c.world());
  // Each direction's two exchanges: dispatch, then combine.
  double forward_dispatch = 0, forward_combine = 0, backward_combine = 0, backward_dispatch = 0;
  if (c.ep > 1) {
    // Every dispatcher an emitted engine runs sends the 16-bit hidden
    // states and casts to fp8 inside the expert GEMMs: Megatron's alltoall
    // dispatcher (token_dispatcher.py @ 0014f13, dispatch_all_to_all), its
    // DeepEP path (fused_a2a.py FusedDispatch passes x as it is) and HybridEP
    // ("fp8_dispatch = False  # Currently, we do not support fp8 dispatch",
    // fused_a2a.py @ d98e8a64). DeepSeek-V3's own fp8 dispatch (sec. 3.3)
    // is not one an emitted engine runs.
    const double exchange_s = dispatch_s(cluster, ep_span, m, shape);
    forward_dispatch = forward_combine = backward_combine = backward_dispatch = exchange_s;
  }
  if (c.etp > 1) {
    const GroupSpan etp_span = group_span_at(cluster, c.etp, 1, first_rank, c.world());
    const double rows_bytes = 2.0 * shape.tokens * m.top_k * m.hidden * shape.load_factor * c.etp;
    const double gather_s = all_gather_s(cluster, etp_span, rows_bytes);
    forward_dispatch += gather_s;
    forward_combine += gather_s;
    backward_combine += gather_s;
    backward_dispatch += gather_s;
  }
  const double whole_forward = forward_dispatch + forward_combine;
  const double whole_backward = backward_combine + backward_dispatch;
  if (!c.ep_overlap) {
    out.forward_s = whole_forward;
    out.backward_s = whole_backward;
    return out;
  }
  const double slowdown = cluster.device.overlap_compute_slowdown;
  const double paired_forward =
      exposed_after_overlap_s(forward_dispatch, compute.experts_backward_s, slowdown) +
      exposed_after_overlap_s(forward_combine, compute.attention_backward_s, slowdown);
  const double paired_backward =
      exposed_after_overlap_s(backward_combine, compute.attention_forward_s, slowdown) +
      exposed_after_overlap_s(backward_dispatch, compute.experts_forward_s, slowdown);
  const double alone = std::clamp(compute.unpaired_share, 0.0, 1.0);
  out.forward_s = alone * whole_forward + (1.0 - alone) * paired_forward;
  out.backward_s = alone * whole_backward + (1.0 - alone) * paired_backward;
  return out;
}

double ep_overlap_unpaired_share(const ParallelConfig& c, int stage) {
  const int m = std::max(1, c.micro_batches());
  if (c.pp <= 1) return 1.0 / m;
  const int passes = m * std::max(1, c.vp);
  const int warmup = 2 * (c.pp - stage - 1) + (std::max(1, c.vp) - 1) * c.pp + 1;
  return std::min(1.0, static_cast<double>(warmup) / passes);
}

bool ep_spans_nodes(const ClusterSpec& cluster, const ParallelConfig& c) {
  return c.ep * c.etp > std::max(1, cluster.ranks_per_node);
}

void apply_moe_defaults(const ModelSpec& model, const ClusterSpec& cluster, ParallelConfig& c) {
  if (!model.is_moe()) return;
  c.a2a_hierarchical = c.ep > 1 && ep_spans_nodes(cluster, c);
  c.ep_overlap = c.ep > 1 && (c.pp == 1 || c.vp > 1) && c.recompute != Recompute::kFull;
}

}  // namespace parplan
