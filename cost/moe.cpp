#include "cost/moe.h"

#include <algorithm>
#include <cmath>

#include "cost/compute_time.h"
#include "cost/flops.h"
#include "cost/parameters.h"

namespace parplan {

namespace {
constexpr double kActivationBytes = 2.0;  // 16-bit activations

double matrices(const ModelSpec& m) { return m.gated_ffn ? 3.0 : 2.0; }

// `groups` GEMMs of rows x n x k, one per local expert. Transformer
// Engine's GroupedLinear (Megatron's TEGroupedMLP) runs them on Hopper as one
// cuBLAS GEMM per expert over its multi-stream pool (nvte_multi_tensor_gemm
// falls back to multi_stream_cublas_gemm unless NVTE_USE_CUTLASS_GROUPED_GEMM
// is set; NVIDIA/TransformerEngine transformer_engine/common/gemm/
// cublaslt_gemm.cu @ 5c62f72), so each expert's GEMM is timed as a kernel of
// its own shape: the device's GEMM curve at rows x n x k (the fp8 curve at
// the fp8 peak, as for every Transformer Engine linear layer), and reading
// the expert's weights bounds it when it sees few tokens.
double grouped_gemm_s(const DeviceSpec& device, double peak, double groups, double rows, double n, double k) {
  if (groups <= 0 || rows <= 0 || n <= 0 || k <= 0) return 0;
  return groups * gemm_time_s(device, peak, rows, n, k);
}

// torch._grouped_mm over `groups` experts' `rows` in all: one kernel at the
// efficiency of a GEMM of all the rows, reading every expert's weights.
double one_kernel_gemm_s(const DeviceSpec& device, double peak, double groups, double rows, double n,
                         double k) {
  return std::max(gemm_time_s(device, peak, rows, n, k),
                  memory_bound_s(device, kActivationBytes * (rows * k + groups * k * n + rows * n)));
}

double one_kernel_gemm_backward_s(const DeviceSpec& device, double peak, double groups, double rows, double n,
                                  double k) {
  return std::max(gemm_backward_time_s(device, peak, rows, n, k),
                  memory_bound_s(device, 2.0 * kActivationBytes * (rows * k + groups * k * n + rows * n)));
}

double grouped_gemm_backward_s(const DeviceSpec& device, double peak, double groups, double rows, double n,
                               double k) {
  if (groups <= 0 || rows <= 0 || n <= 0 || k <= 0) return 0;
  return groups * gemm_backward_time_s(device, peak, rows, n, k);
}

}  // namespace

double split_cast_floor_s(const DeviceSpec& device, double splits, double rows_per_split, double width) {
  if (device.kernel_floor_s <= 0 || splits <= 0 || rows_per_split <= 0 || width <= 0) return 0;
  const double elements = rows_per_split * width;
  // Float8CurrentScalingQuantizer::quantize_impl per split: zero_amax and
  // compute_scale_from_amax (tiny), the amax pass (reads 2 bytes per
  // element) and the cast (reads 2, writes the fp8 copy and its transpose).
  // The bytes are priced pooled over all splits (fp8_cast_times and the
  // amax pass): what is added is each kernel's shortfall below the floor.
  const double amax_s = memory_bound_s(device, kActivationBytes * elements);
  const double cast_s = memory_bound_s(device, 4.0 * elements);
  const double floor = device.kernel_floor_s;
  return splits * (2.0 * floor + std::max(0.0, floor - amax_s) + std::max(0.0, floor - cast_s));
}

namespace {

// Megatron's router is not a Transformer Engine module: its gating GEMM
// (TopKRouter.gating, router_gating_linear in megatron/core/transformer/moe/
// router.py) runs in the activations' or the router's own 16/32-bit dtype,
// never in fp8, so it does not run above the bf16 peak.
double router_peak(const DeviceSpec& device, double peak) {
  return device.peak_bf16_flops_per_s > 0 ? std::min(peak, device.peak_bf16_flops_per_s) : peak;
}

double moe_layer_params(const ModelSpec& m) {
  return attention_params(m) + layer_norm_params(m) +
         (m.is_moe() ? router_params(m) + routed_expert_params(m) + shared_expert_params(m)
                     : dense_ffn_params(m));
}
}  // namespace

double router_params(const ModelSpec& m) {
  const bool bias = m.aux_loss_free || m.linear_bias;
  return static_cast<double>(m.hidden) * m.experts + (bias ? m.experts : 0.0);
}

double one_expert_params(const ModelSpec& m) {
  const double f = m.expert_ffn_hidden;
  const double bias = m.linear_bias ? (m.gated_ffn ? 2.0 : 1.0) * f + m.hidden : 0.0;
  return matrices(m) * m.hidden * f + bias;
}

double routed_expert_params(const ModelSpec& m) { return m.experts * one_expert_params(m); }

double shared_expert_params(const ModelSpec& m) { return m.shared_experts * one_expert_params(m); }

double mtp_params(const ModelSpec& m) {
  const double h = m.hidden;
  // eh_proj (2h -> h), enorm and hnorm on its two inputs, the module's own
  // final norm before the shared head (DeepSeek-V3 config: model.layers.61).
  return m.mtp_layers * (moe_layer_params(m) + 2.0 * h * h + 3.0 * h);
}

double router_forward_flops(const ModelSpec& m, double tokens) {
  return 2.0 * tokens * m.hidden * static_cast<double>(m.experts);
}

double mtp_forward_flops(const ModelSpec& m, double tokens, int seq) {
  if (m.mtp_layers <= 0) return 0;
  const double layer = layer_forward_flops(m, tokens, seq, m.is_moe()).total();
  const double projection = 2.0 * tokens * 2.0 * m.hidden * static_cast<double>(m.hidden);
  return m.mtp_layers * (layer + projection + head_forward_flops(m, tokens));
}

double default_moe_imbalance(const ModelSpec& m, int ep) {
  if (!m.is_moe() || ep <= 1) return 1.0;
  const double per_rank = static_cast<double>(m.experts) / ep;
  const double max_vio = m.aux_loss_free ? kLossFreeMaxVio : kAuxLossMaxVio;
  return 1.0 + max_vio / std::sqrt(std::max(1.0, per_rank));
}

double moe_imbalance(const ModelSpec& m, const JobSpec& job, const ParallelConfig& c) {
  if (c.ep <= 1) return 1.0;
  if (job.moe_imbalance > 0) return std::max(1.0, job.moe_imbalance);
  // Filled from the front (src/io/routing_stats.cpp): the first empty slot
  // ends the list, so a job without routing statistics reads one slot.
  for (const MeasuredEpImbalance& measured : job.measured_ep_imbalance) {
    if (measured.ep == 0) break;
    if (measured.ep == c.ep) return std::max(1.0, measured.imbalance);
  }
  return default_moe_imbalance(m, c.ep);
}

double moe_load_factor(const ModelSpec& m, const JobSpec& job, const ParallelConfig& c) {
  // Padded to capacity, every expert runs capacity rows, busy or not.
  if (job.capacity_factor > 0 && job.pad_to_capacity) return job.capacity_factor;
  // DeepSpeed-MoE without token dropping: capacity = the largest expert
  // count, all-reduced (MAX) over the expert-parallel group, and the
  // dispatched [experts, capacity, hidden] tensor pads every expert to it
  // (deepspeed/moe/sharded_moe.py @ v0.17.0, top1gating/top2gating/
  // topkgating with drop_tokens False; Megatron-DeepSpeed's
  // --disable-moe-token-dropping): the busiest single expert's load, at any
  // ep, not the busiest rank's sum over its experts.
  if (job.capacity_factor <= 0 && job.moe_pads_to_busiest_expert && m.is_moe()) {
    if (job.moe_imbalance > 0) return std::max(1.0, job.moe_imbalance);
    ParallelConfig one_expert_per_rank = c;
    one_expert_per_rank.ep = m.experts;
    return moe_imbalance(m, job, one_expert_per_rank);
  }
  // Dropping without padding: the router drops what exceeds an expert's
  // capacity before the dispatch (Megatron's topk_masking_with_capacity), so
  // the busiest expert sends and runs min(its load, capacity) rows; below a
  // capacity factor of 1 even a balanced expert drops down to capacity.
  const double imbalance = moe_imbalance(m, job, c);
  return job.capacity_factor > 0 ? std::min(imbalance, job.capacity_factor) : imbalance;
}

bool moe_fp8_pads_splits(const ModelSpec& m, const JobSpec& job, const ParallelConfig& c) {
  if (!m.is_moe() || job.precision != Precision::kFp8) return false;
  if (job.capacity_factor <= 0 || !job.pad_to_capacity) return true;
  const double rank_tokens = static_cast<double>(c.mbs) * job.seq / (static_cast<double>(c.cp) * c.tp);
  const double capacity = std::ceil(rank_tokens * m.top_k / m.experts * job.capacity_factor);
  const double rows = capacity * c.etp * c.ep;
  return std::fmod(rows, kFp8SplitAlignRows) != 0.0;
}

double moe_fp8_padding_bytes(const ModelSpec& m, const MoeShape& s) {
  if (!m.is_moe() || !s.fp8 || !s.fp8_split_padding) return 0;
  const double rows = s.tokens / s.tp * m.top_k * s.etp * s.load_factor;
  return 2.0 * 2.0 * rows * m.hidden * kActivationBytes;
}

MoePermutationBytes moe_permutation_bytes(const ModelSpec& m, const MoeShape& s) {
  MoePermutationBytes out;
  if (!m.is_moe()) return out;
  const double h = m.hidden;
  // Rows this rank permutes before the all-to-all (its own tokens' top-k
  // copies) and rows it receives for its local experts (gathered over the
  // etp group, the busiest rank's load).
  const double sent_rows = s.tokens / s.tp * m.top_k;
  const double received_rows = sent_rows * s.etp * s.load_factor;
  const double local_experts = static_cast<double>(m.experts) / s.ep;
  // Permutation 1 and unpermutation 1: a read and a write of each copy.
  const double outer = 2.0 * 2.0 * sent_rows * h * kActivationBytes;
  // Permutation 2 and unpermutation 2 (sort_chunks_by_idxs), only behind
  // the all-to-all and with more than one local expert.
  const double sorts =
      s.ep > 1 && local_experts > 1.0 ? 2.0 * 2.0 * received_rows * h * kActivationBytes : 0.0;
  out.forward = outer + sorts;
  // Each gather's gradient is a scatter of the same rows and the other way
  // round; unpermutation 1 weights the copies by their routing
  // probabilities, so its backward also reads the forward's copies for the
  // probabilities' gradient.
  out.backward = out.forward + sent_rows * h * kActivationBytes;
  return out;
}

MoeBlockTimes moe_block_times(const ModelSpec& m, const DeviceSpec& device, double peak, const MoeShape& s) {
  MoeBlockTimes times;
  const double h = m.hidden;
  const double t = s.tp;
  // Megatron runs MoE with tp > 1 only under sequence parallelism: each tp
  // rank routes its own 1/tp of the tokens.
  const double own_tokens = s.tokens / t;
  const double local_experts = static_cast<double>(m.experts) / s.ep;
  // Rows the busiest rank's experts see: its share of tokens x top-k copies,
  // gathered over the etp group, scaled by the load factor.
  const double rows = own_tokens * m.top_k * s.etp * s.load_factor;
  const double rows_per_expert = rows / local_experts;
  const double f = m.expert_ffn_hidden;
  const double f_in = f * (m.gated_ffn ? 2.0 : 1.0);
  double routed_gemm_s = 0;
  double routed_gemm_backward_s = 0;
  if (s.one_grouped_kernel) {
    // One kernel per weight over all `rows` (w1 and w3 apart when gated).
    const double bf16 = router_peak(device, peak);
    const double in_gemms = m.gated_ffn ? 2.0 : 1.0;
    routed_gemm_s = in_gemms * one_kernel_gemm_s(device, bf16, local_experts, rows, f / s.etp, h) +
                    one_kernel_gemm_s(device, bf16, local_experts, rows, h, f / s.etp);
    routed_gemm_backward_s =
        in_gemms * one_kernel_gemm_backward_s(device, bf16, local_experts, rows, f / s.etp, h) +
        one_kernel_gemm_backward_s(device, bf16, local_experts, rows, h, f / s.etp);
  } else {
    routed_gemm_s = grouped_gemm_s(device, peak, local_experts, rows_per_expert, f_in / s.etp, h) +
                    grouped_gemm_s(device, peak, local_experts, rows_per_expert, h, f / s.etp);
    routed_gemm_backward_s =
        grouped_gemm_backward_s(device, peak, local_experts, rows_per_expert, f_in / s.etp, h) +
        grouped_gemm_backward_s(device, peak, local_experts, rows_per_expert, h, f / s.etp);
  }
  // Activation function on the expert intermediate.
  const double routed_elementwise_s =
      memory_bound_s(device, kActivationBytes * rows * f / s.etp * (m.gated_ffn ? 3.0 : 2.0));
  const MoePermutationBytes permutation = moe_permutation_bytes(m, s);
  // Router: a thin GEMM to E logits, then fp32 softmax/sigmoid and top-k.
  const double router_s = gemm_time_s(device, router_peak(device, peak), own_tokens, m.experts, h) +
                          memory_bound_s(device, 4.0 * 3.0 * own_tokens * m.experts);
  double shared_gemm_s = 0;
  double shared_gemm_backward_s = 0;
  double shared_elementwise_s = 0;
  if (m.shared_experts > 0) {
    const double fs = f * m.shared_experts;
    shared_gemm_s = gemm_time_s(device, peak, s.tokens, fs * (m.gated_ffn ? 2.0 : 1.0) / t, h) +
                    gemm_time_s(device, peak, s.tokens, h, fs / t);
    shared_gemm_backward_s =
        gemm_backward_time_s(device, peak, s.tokens, fs * (m.gated_ffn ? 2.0 : 1.0) / t, h) +
        gemm_backward_time_s(device, peak, s.tokens, h, fs / t);
    shared_elementwise_s =
        memory_bound_s(device, kActivationBytes * s.tokens * fs / t * (m.gated_ffn ? 3.0 : 2.0));
  }
  // fp8: Transformer Engine casts every expert GEMM's input (GroupedLinear
  // quantizes each expert's split) and, backward, its output gradient, as
  // for the dense linear layers (fp8_cast_times).
  LayerShape cast_shape;
  cast_shape.fp8 = s.fp8;
  const double shared_tokens = m.shared_experts > 0 ? s.tokens : 0.0;
  const double fs_local = f * m.shared_experts / t;
  const Fp8CastTimes casts =
      fp8_cast_times(device, cast_shape, 0.0, 0.0, rows * (h + f / s.etp) + shared_tokens * (h + fs_local),
                     rows * (f_in / s.etp + h) + shared_tokens * (fs_local * (m.gated_ffn ? 2.0 : 1.0) + h));
  // fp8 current scaling: an amax pass reading each routed expert GEMM's
  // 16-bit input (forward) and output gradient (backward) before its cast.
  const bool amax = s.fp8 && s.fp8_current_scaling;
  const double amax_forward_s =
      amax ? memory_bound_s(device, kActivationBytes * rows * (h + f / s.etp)) : 0.0;
  const double amax_backward_s =
      amax ? memory_bound_s(device, kActivationBytes * rows * (f_in / s.etp + h)) : 0.0;
  // Current scaling casts split by split (split_quantize): per expert and
  // cast site four kernels, each at least the device's kernel floor, which
  // the pooled bytes above do not see when the splits are small.
  const double floor_forward_s =
      amax && !s.one_grouped_kernel
          ? split_cast_floor_s(device, local_experts, rows_per_expert, h) +
                split_cast_floor_s(device, local_experts, rows_per_expert, f / s.etp)
          : 0.0;
  const double floor_backward_s =
      amax && !s.one_grouped_kernel
          ? split_cast_floor_s(device, local_experts, rows_per_expert, f_in / s.etp) +
                split_cast_floor_s(device, local_experts, rows_per_expert, h)
          : 0.0;
  // fp8 split padding: the same copies forward and backward.
  const double padding_s = memory_bound_s(device, moe_fp8_padding_bytes(m, s));
  times.routed_forward_s =
      routed_gemm_s + routed_elementwise_s + memory_bound_s(device, permutation.forward) + padding_s;
  times.forward_s = times.routed_forward_s + router_s + shared_gemm_s + shared_elementwise_s +
                    casts.forward_s + amax_forward_s + floor_forward_s;
  times.backward_s = routed_gemm_backward_s + 2.0 * router_s + shared_gemm_backward_s +
                     2.0 * (routed_elementwise_s + shared_elementwise_s) +
                     memory_bound_s(device, permutation.backward) + padding_s + casts.backward_s +
                     amax_backward_s + floor_backward_s;
  return times;
}

double moe_layer_activation_bytes(const ModelSpec& m, const ActivationShape& shape, const MoeShape& moe) {
  // --recompute-modules mlp is a dense layer's; an MoE layer keeps its own.
  ActivationShape attention_part = shape;
  attention_part.recompute_modules.mlp = false;
  const double base = layer_activation_bytes(m, attention_part);
  if (shape.recompute == Recompute::kFull) return base;
  const double t = shape.tp;
  const double local_tokens = shape.seq * shape.micro_batch / shape.cp;
  const double ffn_bytes_per_width = m.gated_ffn ? 6.0 : 4.0;
  // Under fp8 the GEMMs save their 16-bit inputs as the 1-byte fp8 cast
  // (see `routed` below and layer_activation_bytes).
  const double gemm_input = shape.fp8 ? 1.0 : kActivationBytes;
  const double activation_inputs = ffn_bytes_per_width - kActivationBytes;
  // The dense FFN part of layer_activation_bytes (activation input(s) and
  // FC2's input) does not exist in an MoE layer.
  const double dense_ffn = local_tokens * (activation_inputs + gemm_input) * m.ffn_hidden / t;
  const double own_tokens = local_tokens / t;
  // fp32 router logits and scores (softmax/sigmoid and top-k backward).
  const double router = own_tokens * 8.0 * m.experts;
  // Each routed copy: the permuted input (FC1's input), the activation's
  // input(s), FC2's input and, unless the probabilities weight the
  // activation (JobSpec::moe_probs_in_activation), the expert output the
  // combine weights by its routing score. Under fp8 the expert GEMMs save their inputs as the fp8
  // cast, 1 byte, as the dense ones do (layer_activation_bytes): Transformer
  // Engine's GroupedLinear quantizes its inputs (`inputmats =
  // tex.fused_multi_quantize(...)`) and saves those
  // (`prepare_for_saving(*inputmats, ...)`), NVIDIA/TransformerEngine
  // transformer_engine/pytorch/module/grouped_linear.py @ 3ea1356; the
  // bf16 permuted input is not kept (the permutation's backward needs only
  // its index map).
  const double rows = own_tokens * m.top_k * moe.etp * moe.load_factor;
  const double expert_output = shape.moe_probs_in_activation ? 0.0 : kActivationBytes;
  const double routed = rows * ((gemm_input + expert_output) * m.hidden +
                                (activation_inputs + gemm_input) * m.expert_ffn_hidden / moe.etp);
  const double shared = local_tokens * (activation_inputs + gemm_input) *
                        static_cast<double>(m.expert_ffn_hidden) * m.shared_experts / t;
  // --recompute-modules moe checkpoints the MoE block at its input (the
  // norm's output, counted in the attention part): nothing of the router,
  // the dispatched copies or the experts is kept.
  if (megatron_recomputes(shape, &RecomputeModules::moe)) {
    const double norm_output = megatron_recomputes(shape, &RecomputeModules::layernorm)
                                   ? local_tokens * gemm_input * m.hidden / (shape.sp ? t : 1.0)
                                   : 0.0;
    return base - dense_ffn - norm_output;
  }
  // Megatron's --recompute-modules layernorm: the pre-MLP norm's output
  // (the router's and dispatch's input, counted as the FFN input in
  // layer_activation_bytes) is discarded and redone in the backward.
  double discarded = 0;
  if (megatron_recomputes(shape, &RecomputeModules::layernorm))
    discarded += local_tokens * gemm_input * m.hidden / (shape.sp ? t : 1.0);
  // moe_act: the activation's output, FC2's 16-bit input, is discarded;
  // under fp8 FC2 keeps its own fp8 cast, which stays.
  if (megatron_recomputes(shape, &RecomputeModules::moe_act) && !shape.fp8)
    discarded += rows * gemm_input * m.expert_ffn_hidden / moe.etp;
  return base - dense_ffn + router + routed + shared - discarded;
}

}  // namespace parplan
