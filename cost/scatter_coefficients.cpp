// Coefficients of sequence scattering from the cost model: compute from the
// layer times (cost/compute_time.h), all-to-alls from the tiered network
// (cost/collectives.h), capacity from the memory model (cost/memory.h).
#include "cost/scatter_coefficients.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "cost/collectives.h"
#include "cost/compute_time.h"
#include "cost/memory.h"
#include "cost/parameters.h"

namespace parplan {

namespace {

// The two sequence lengths the compute time is fitted at: long enough that
// every GEMM runs at its saturated efficiency, so t(s) = A s^2 + B s holds.
constexpr double kFitShortTokens = 16384;
constexpr double kFitLongTokens = 65536;
constexpr double kMsPerS = 1000;
// Bytes of one 16-bit activation element (bf16/fp16; fp8 training keeps
// activations and all-to-all payloads in 16 bits).
constexpr double kActivationElementBytes = 2;

/// Forward + backward (+ recomputation) of the whole model for one sequence
/// of `tokens` on one GPU, in seconds.
double model_step_s(const ModelSpec& model, const ClusterSpec& cluster, const ScatterCostSetting& setting,
                    double tokens) {
  const double peak = cluster.device.peak_flops_per_s(setting.precision);
  LayerShape shape;
  shape.tokens = tokens;
  shape.seq = tokens;
  shape.flash_attention = true;
  const LayerComputeTimes layer = layer_compute_times(model, cluster.device, peak, shape);
  double per_layer_s = layer.forward_s + layer.backward_s;
  if (setting.recompute == Recompute::kFull) per_layer_s += layer.forward_s;
  if (setting.recompute == Recompute::kSelective) per_layer_s += layer.attention_forward_s;
  const EdgeComputeTimes edge = edge_compute_times(model, cluster.device, peak, tokens, 1);
  return model.layers * per_layer_s + edge.head_forward_s + edge.head_backward_s + edge.embedding_s;
}

/// Bytes per token of the eight Ulysses all-to-alls of one layer (forward:
/// Q, K, V in and the attention output back; backward: their gradients).
/// Beyond kv_groups ranks the K/V heads are replicated, one per rank.
double ulysses_bytes_per_token_layer(const ModelSpec& model, int size) {
  const double q_width = static_cast<double>(model.heads) * model.head_dim;
  const double kv_width = static_cast<double>(std::max(model.kv_groups, size)) * model.head_dim;
  return 2.0 * (2.0 * q_width + 2.0 * kv_width) * kActivationElementBytes;
}

}  // namespace

std::vector<int> ulysses_group_sizes(const ModelSpec& model, int gpus) {
  std::vector<int> sizes;
  for (int p = 1; p <= gpus; p *= 2) {
    if (gpus % p == 0 && model.heads % p == 0) sizes.push_back(p);
  }
  return sizes;
}

ScatterMemory scatter_memory_per_gpu(const ModelSpec& model, const ClusterSpec& cluster,
                                     const ScatterCostSetting& setting) {
  ScatterMemory m;
  const double params = total_params(model, model.max_positions > 0 ? model.max_positions : 0);
  // K: HBM left after the runtime, the sharded model states and ZeRO-3's
  // gathered layer (two in flight with prefetch), over activation bytes per token.
  const DeviceSpec& device = cluster.device;
  const ModelStateBytes states =
      model_state_bytes(params, setting.zero, std::max(1, setting.gpus), setting.optimizer_bytes_per_param,
                        gradient_bytes_per_param(setting.precision, setting.zero));
  m.usable_bytes =
      device.usable_hbm_bytes() * (1.0 - device.allocator_headroom_fraction) - device.reserved_bytes;
  m.state_bytes = states.total();
  m.free_bytes = m.usable_bytes - states.total();
  if (setting.zero >= 3) {
    m.state_bytes += 2.0 * dense_layer_params(model) * kActivationElementBytes;
    m.free_bytes -= 2.0 * dense_layer_params(model) * kActivationElementBytes;
  }
  ActivationShape token;
  token.seq = 1;
  token.micro_batch = 1;
  token.flash_attention = true;
  token.recompute = setting.recompute;
  m.per_token_bytes = model.layers * layer_activation_bytes(model, token) + logits_bytes(model, token);
  if (setting.recompute == Recompute::kFull) {
    // The layer being recomputed holds its whole activations again.
    ActivationShape whole = token;
    whole.recompute = Recompute::kNone;
    m.per_token_bytes += layer_activation_bytes(model, whole);
  }
  return m;
}

ScatterCoefficients derive_scatter_coefficients(const ModelSpec& model, const ClusterSpec& cluster,
                                                const ScatterCostSetting& setting,
                                                const std::vector<int>& sizes) {
  ScatterCoefficients c;
  c.group_sizes = sizes;

  // t(s) = A s^2 + B s through the two fit points.
  const double t1 = model_step_s(model, cluster, setting, kFitShortTokens);
  const double t2 = model_step_s(model, cluster, setting, kFitLongTokens);
  const double quadratic_s =
      (t2 / kFitLongTokens - t1 / kFitShortTokens) / (kFitLongTokens - kFitShortTokens);
  c.quadratic_ms = std::max(0.0, quadratic_s) * kMsPerS;
  c.linear_ms = std::max(0.0, t1 / kFitShortTokens - quadratic_s * kFitShortTokens) * kMsPerS;

  // c_p: the bandwidth part of the all-to-alls; each rank holds 1/p of the
  // group's tokens. Their latency goes into the fixed cost (below).
  constexpr double kProbeTokens = 1e6;
  double worst_latency_s = 0;
  for (int p : sizes) {
    if (p <= 1) {
      c.alltoall_ms_per_token.push_back(0);
      continue;
    }
    const GroupSpan span = group_span(cluster, p, 1, setting.gpus);
    const double rank_bytes = ulysses_bytes_per_token_layer(model, p) * kProbeTokens / p;
    const double latency_s = all_to_all_s(cluster, span, 0);
    const double per_token_s = (all_to_all_s(cluster, span, rank_bytes) - latency_s) / kProbeTokens;
    c.alltoall_ms_per_token.push_back(model.layers * per_token_s * kMsPerS);
    worst_latency_s = std::max(worst_latency_s, 8.0 * model.layers * latency_s);
  }

  // d: under ZeRO-3 every micro-batch gathers the 16-bit weights for the
  // forward and the backward pass and reduce-scatters the gradients over all
  // GPUs (not overlapped: an upper estimate). Lower stages reduce once per
  // step, which no scattering choice changes.
  const double params = total_params(model, model.max_positions > 0 ? model.max_positions : 0);
  const GroupSpan all = group_span(cluster, setting.gpus, 1, setting.gpus);
  double fixed_s = worst_latency_s;
  if (setting.zero >= 3 && setting.gpus > 1) {
    fixed_s += 3.0 * all_gather_s(cluster, all, params * kActivationElementBytes);
  }
  c.fixed_ms = fixed_s * kMsPerS;

  const ScatterMemory memory = scatter_memory_per_gpu(model, cluster, setting);
  c.token_capacity_per_gpu = std::floor(std::max(0.0, memory.free_bytes) / memory.per_token_bytes);
  return c;
}

std::string check_scatter_coefficients(const ScatterCoefficients& c, int gpus) {
  std::ostringstream out;
  // Upper bounds a million times above real coefficients (FlexSP's GPT-7B:
  // a ~ 1e-7 ms/token^2, b ~ 0.01 ms/token): they keep every time the
  // solver forms from lengths up to 1e9 tokens finite (1e308 overflowed).
  constexpr double kMaxQuadraticMs = 1.0;
  constexpr double kMaxPerTokenMs = 1e3;
  constexpr double kMaxFixedMs = 1e9;
  constexpr double kMaxTokenCapacity = 1e9;
  auto bad = [](double x, double high) { return !std::isfinite(x) || x < 0 || x > high; };
  if (bad(c.quadratic_ms, kMaxQuadraticMs))
    return "quadratic_ms must be a number from 0 to 1 (ms per token^2)";
  if (bad(c.linear_ms, kMaxPerTokenMs)) return "linear_ms must be a number from 0 to 1000 (ms per token)";
  if (bad(c.fixed_ms, kMaxFixedMs)) return "fixed_ms must be a number from 0 to 1e9 (ms per micro-batch)";
  if (!std::isfinite(c.token_capacity_per_gpu) || c.token_capacity_per_gpu < 1 ||
      c.token_capacity_per_gpu > kMaxTokenCapacity) {
    return "token_capacity_per_gpu must be a number from 1 to 1e9 (tokens per GPU)";
  }
  if (c.group_sizes.empty()) return "no group size is allowed: give at least one";
  if (c.alltoall_ms_per_token.size() != c.group_sizes.size()) {
    return "alltoall_ms_per_token needs one value per group size";
  }
  for (size_t i = 0; i < c.group_sizes.size(); ++i) {
    const int p = c.group_sizes[i];
    if (p < 1 || p > gpus || gpus % p != 0) {
      out << "group size " << p << " must be between 1 and --gpus " << gpus << " and divide it";
      return out.str();
    }
    if (i > 0 && p % c.group_sizes[i - 1] != 0) {
      out << "group size " << c.group_sizes[i - 1] << " must divide the next allowed size " << p
          << " (sizes are listed ascending; use powers of two)";
      return out.str();
    }
    if (i > 0 && p == c.group_sizes[i - 1]) {
      out << "group size " << p << " is listed twice";
      return out.str();
    }
    if (bad(c.alltoall_ms_per_token[i], kMaxPerTokenMs)) {
      out << "alltoall_ms_per_token of group size " << p << " must be a number from 0 to 1000 (ms per token)";
      return out.str();
    }
  }
  return "";
}

}  // namespace parplan
