#include "cost/compute_time.h"

#include <algorithm>
#include <cmath>

#include "cost/attention_dropout.h"
#include "cost/attention_kernels.h"
#include "cost/cp_merge_passes.h"
#include "cost/document_mask.h"
#include "cost/loss_passes.h"
#include "cost/mla.h"
#include "cost/sliding_window.h"

namespace parplan {

namespace {
constexpr double kActivationBytes = 2.0;  // 16-bit activations

// fp8 training runs only the transformer layers' linear GEMMs in fp8:
// Transformer Engine's recipes default to fp8_dpa = False, so
// DotProductAttention (and Megatron-LM's core attention under --fp8-format)
// stays in bf16, and the LM head is no fp8 layer (edge_compute_times). These
// never run above the bf16 peak.
double sixteen_bit_peak_flops_per_s(const DeviceSpec& device, double peak_flops_per_s) {
  return device.peak_bf16_flops_per_s > 0 ? std::min(peak_flops_per_s, device.peak_bf16_flops_per_s)
                                          : peak_flops_per_s;
}
}  // namespace

Fp8CastTimes fp8_cast_times(const DeviceSpec& device, const LayerShape& shape, double attention_inputs,
                            double attention_output_grads, double ffn_inputs, double ffn_output_grads) {
  if (!shape.fp8) return {};
  // Transformer Engine's Linear under delayed scaling casts each GEMM input
  // with fp8_cast_transpose_fused ("FP8 input for forward, FP8 input
  // transpose for backward wgrad") and each output gradient the same way in
  // the backward (transformer_engine/pytorch/module/linear.py, TE 1.x): one
  // pass reading the 16-bit tensor (2 bytes) and writing the fp8 copy and
  // its fp8 transpose (1 + 1); the amax of the delayed-scaling history is
  // reduced in the same kernel. Weights are cast once per step (TE caches
  // them across micro-batches, is_first_microbatch) and are left out.
  constexpr double kCastBytesPerElement = 2.0 + 1.0 + 1.0;
  Fp8CastTimes out;
  out.forward_s = memory_bound_s(device, kCastBytesPerElement * (attention_inputs + ffn_inputs));
  out.backward_s = memory_bound_s(device, kCastBytesPerElement * (attention_output_grads + ffn_output_grads));
  return out;
}

double gemm_time_s(const DeviceSpec& device, double peak_flops_per_s, double m, double n, double k) {
  const double flops = 2.0 * m * n * k;
  const double smallest = std::min(m, std::min(n, k));
  // The efficiency curve gives a time (F + F_half)(s + s_half) / s over the
  // smallest dimension s (F = c s): its F_half s_half / s term makes a GEMM
  // of fewer rows slower below s* = sqrt(F_half s_half / c), which no kernel
  // is (it could run the s* GEMM and drop the extra rows). Below s* the time
  // is the s* GEMM's: a floor, as measured (calibration/h100-kernels/gemm.csv:
  // 256^3 and 512^3 both about 12 us), and a few rows per expert never cost
  // more than many.
  double dim = smallest, work = flops;
  if (smallest > 0 && device.gemm_half_flops > 0 && device.gemm_half_dim > 0) {
    const double per_dim = flops / smallest;
    const double floor_dim = std::sqrt(device.gemm_half_flops * device.gemm_half_dim / per_dim);
    if (smallest < floor_dim) dim = floor_dim, work = per_dim * floor_dim;
  }
  double efficiency = device.gemm_efficiency_max * dim / (dim + device.gemm_half_dim) * work /
                      (work + device.gemm_half_flops);
  // Called at the fp8 peak: an fp8 GEMM (the linear layers under
  // Transformer Engine's fp8 recipes), slower to saturate than bf16 and most
  // of all over a short reduction: Hopper's fp8 wgmma takes twice the K per
  // instruction (32 against 16), so the main loop runs half the iterations
  // over which the prologue and epilogue are spread. Measured on an H100
  // (calibration/h100-kernels/gemm.csv): the fp8 speed-up over bf16 is 1.26x
  // at K = 512 but 1.69x at N = 512 with K = 4096; keyed on K the ratio
  // curve fits the 181 fp8 rows to 2.9 % mean error, on the smallest
  // dimension to 5.5 %.
  const bool fp8 = device.fp8_gemm_ratio_max > 0 && peak_flops_per_s == device.peak_fp8_flops_per_s &&
                   device.peak_fp8_flops_per_s > device.peak_bf16_flops_per_s;
  if (fp8)
    efficiency = std::min(1.0, efficiency * device.fp8_gemm_ratio_max * (k + device.fp8_gemm_bf16_half_dim) /
                                   (k + device.fp8_gemm_half_dim));
  const double compute_s = work / (peak_flops_per_s * efficiency);
  // An fp8 GEMM reads 1-byte operands and writes a 16-bit output.
  const bool fp8_operands = peak_flops_per_s == device.peak_fp8_flops_per_s &&
                            device.peak_fp8_flops_per_s > device.peak_bf16_flops_per_s;
  const double operand_bytes = fp8_operands ? 1.0 : kActivationBytes;
  const double traffic_s = memory_bound_s(device, operand_bytes * (m * k + k * n) + kActivationBytes * m * n);
  return std::max(compute_s, traffic_s);
}

double gemm_backward_time_s(const DeviceSpec& device, double peak_flops_per_s, double m, double n, double k) {
  return gemm_time_s(device, peak_flops_per_s, m, k, n) + gemm_time_s(device, peak_flops_per_s, n, k, m);
}

LayerComputeTimes layer_compute_times(const ModelSpec& model, const DeviceSpec& device,
                                      double peak_flops_per_s, const LayerShape& shape) {
  const double t = shape.tp;
  const double m = shape.tokens;
  const double h = model.hidden;
  const double heads = model.heads / t;
  const double q_width = model.heads * static_cast<double>(model.head_dim) / t;
  const double v_dim = model.uses_mla() ? model.v_head_dim : model.head_dim;
  const double kv_width = model.uses_mla() ? model.heads * (model.head_dim + v_dim) / t
                                           : 2.0 * model.kv_groups * static_cast<double>(model.head_dim) / t;
  const double out_width = model.heads * v_dim / t;
  const double ffn = model.ffn_hidden;
  // An MoE layer's expert block (router, routed and shared experts) is
  // timed apart (cost/moe.h); here it has attention only.
  const double ffn_copies = shape.is_moe ? 0.0 : 1.0;
  const double ffn_in = ffn * (model.gated_ffn ? 2.0 : 1.0) / t;

  // MLA's backward is timed as twice its forward (its projections' fp8
  // reduction lengths are not split out).
  double gemm_s = 0;
  double gemm_backward_s = 0;
  if (model.uses_mla()) {
    gemm_s = mla_projection_s(model, device, peak_flops_per_s, m, shape.tp);
    gemm_backward_s = 2.0 * gemm_s;
  }
  const auto add_linear = [&](double n, double k) {
    const double forward_s = gemm_time_s(device, peak_flops_per_s, m, n, k);
    gemm_s += forward_s;
    gemm_backward_s += gemm_backward_time_s(device, peak_flops_per_s, m, n, k);
    return forward_s;
  };
  TpGemmWindows windows;
  // Separate projections (torchtitan's wq, wk, wv; w1, w3): each matmul
  // reads the whole input, so a skinny one (a key or value projection at
  // tp 8: 128 columns) is bound by that read, and the input's gradient is
  // the sum of each projection's input-gradient matmul, one memory-bound
  // pass reading every addend and writing the sum. Measured on an H100
  // (calibration/h100-kernels/projections.csv, fwd + bwd, compiled): Llama 3
  // 8B at tp 8 +2.8 ms (attention) and +0.5 ms (FFN) over the fused
  // matmuls, 70B at tp 8 +6.3 and +3.7 ms; this prices +1.8, +0.9, +4.7 and
  // +2.3 ms (tests/separate_projections_test.cpp).
  double input_grad_sum_elements = 0;
  if (!model.uses_mla()) {
    if (shape.separate_qkv) {
      windows.attention_in_s = add_linear(q_width, h);
      for (int kv = 0; kv < 2; ++kv) windows.attention_in_s += add_linear(kv_width / 2.0, h);
      input_grad_sum_elements += 4.0 * m * h;
    } else {
      windows.attention_in_s = add_linear(q_width + kv_width, h);
    }
    windows.attention_out_s = add_linear(h, out_width);
    windows.attention_out_dgrad_s = gemm_time_s(device, peak_flops_per_s, m, out_width, h);
  }
  if (!shape.is_moe) {
    if (shape.separate_gate_up && model.gated_ffn) {
      for (int half = 0; half < 2; ++half) windows.ffn_in_s += add_linear(ffn / t, h);
      input_grad_sum_elements += 3.0 * m * h;
    } else {
      windows.ffn_in_s = add_linear(ffn_in, h);
    }
    windows.ffn_out_s = add_linear(h, ffn / t);
    windows.ffn_out_dgrad_s = gemm_time_s(device, peak_flops_per_s, m, ffn / t, h);
  }

  // Attention core over the full s x s square as the papers count it.
  const double attention_flops = 2.0 * m * shape.seq * heads * (model.head_dim + v_dim);
  const double attention_peak = sixteen_bit_peak_flops_per_s(device, peak_flops_per_s);
  double attention_forward_s = 0;
  double attention_backward_s = 0;
  const double replicated_tokens = shape.sp ? m / t : m;
  // Element-wise traffic per token, in 16-bit elements read and written.
  // Fused (Megatron's kernels, torch.compile): two norms (read + write), two
  // bias-dropout-adds (two reads, a write and a 1-byte mask), the activation
  // function, and rope on q and k. Eager PyTorch (every operator a kernel,
  // each reading its inputs from HBM and writing its output): an RMSNorm
  // composed of operators (torchtitan's RMSNorm: x.float(), pow(2), mean,
  // x * rsqrt, type_as, * weight) is cast to fp32 (1 + 2), square (2 + 2),
  // mean (2), scale (2 + 2), cast back (2 + 1), weight multiply (1 + 1) = 18
  // (measured on an H100, calibration/h100-kernels/memory.csv: the time of
  // 23, its reduction running below the streaming rate); nn.RMSNorm where
  // F.rms_norm is one fused kernel (PyTorch 2.11) reads and writes once but
  // at the time of 3 (measured there: 0.067 ms for 8192 x 4096); a
  // LayerNorm is one native kernel (1 + 1); a residual add 3; SwiGLU silu (1 + 1) and
  // product (2 + 1) = 5 per FFN element (GeLU 2); rope in complex fp32 cast
  // up (1 + 2), rotate (2 + 2), cast down (2 + 1) = 10 per q/k element.
  const bool fused = shape.fused_elementwise;
  const double eager_norm = model.norm == NormKind::kRmsNorm ? (shape.composed_rms_norm ? 18.0 : 3.0) : 2.0;
  double elements = replicated_tokens * (fused ? 11.0 : 2.0 * eager_norm + 2.0 * 3.0) * h;
  elements += m * ffn_copies * ffn * (model.gated_ffn ? (fused ? 3.0 : 5.0) : 2.0) / t;
  if (model.position == PositionKind::kRope)
    elements += m * (fused ? 2.0 : 10.0) * (q_width + kv_width / 2.0);
  // Per-head RMSNorm on q and k (Qwen3, Gemma 3): Megatron runs q_layernorm
  // and k_layernorm as norm modules of their own after the QKV projection
  // (SelfAttention.get_query_key_value_tensors, megatron/core/transformer/
  // attention.py @ core_v0.15.0), each reading and writing q or k.
  if (model.qk_norm) elements += m * (fused ? 2.0 : eager_norm) * (q_width + kv_width / 2.0);
  if (shape.flash_attention) {
    // A causal fused kernel skips the masked half; its backward recomputes
    // the scores: 5 GEMMs against 2 forward (Dao 2023, FlashAttention-2), at
    // the kernel's own backward efficiency (cost/attention_kernels.h).
    // A per-document mask (cost/document_mask.h) leaves the documents'
    // causal squares, at the efficiency of a kernel as long as a document.
    const int kernel_head_dim = attention_kernel_head_dim(shape.kernel, model.head_dim);
    const AttentionEfficiency eff = context_parallel_attention_efficiency(
        device, shape.kernel, document_mask_kernel_seq(shape.seq, shape.document_tokens), shape.cp,
        kernel_head_dim);
    const double causal_share = 0.5 * document_mask_work_share(shape.seq, shape.document_tokens);
    // Windowed layers (cost/sliding_window.h) compute only their band, at
    // the efficiency of a causal kernel doing the same work per query
    // block; the layer's time is the layers' average, so the model's total
    // is exact. Every rank's share of the band shrinks alike under cp.
    const double windowed = windowed_layer_fraction(model);
    const double full_share = 1.0 - windowed;
    // The kernel computes at its padded head width (attention_kernel_head_dim:
    // MPT-30B's heads of 112 run as 128 in the Triton kernel); the figures
    // are TFLOP/s of the width they ran at.
    const double kernel_flops = attention_flops *
                                (attention_kernel_head_dim(shape.kernel, model.head_dim) +
                                 attention_kernel_head_dim(shape.kernel, static_cast<int>(v_dim))) /
                                (model.head_dim + v_dim);
    attention_forward_s = full_share * causal_share * kernel_flops / (attention_peak * eff.forward);
    attention_backward_s = full_share * 2.5 * causal_share * kernel_flops / (attention_peak * eff.backward);
    if (windowed > 0) {
      const double band = window_pairs(shape.seq, model.sliding_window) / causal_pairs(shape.seq);
      const AttentionEfficiency w_eff = attention_efficiency(
          device, shape.kernel, windowed_kernel_seq(shape.seq, model.sliding_window), kernel_head_dim);
      const double band_flops = windowed * band * 0.5 * kernel_flops;
      attention_forward_s += band_flops / (attention_peak * w_eff.forward);
      attention_backward_s += 2.5 * band_flops / (attention_peak * w_eff.backward);
    }
    // Attention dropout draws the kernel's random mask as it goes
    // (cost/attention_dropout.h): measured per kernel and length.
    const AttentionTimeFactor dropout = attention_dropout_time_factor(
        device, shape.kernel, document_mask_kernel_seq(shape.seq, shape.document_tokens), model.dropout);
    attention_forward_s *= dropout.forward;
    attention_backward_s *= dropout.backward;
  } else {
    // Batched GEMMs of head_dim depth over the full square, then the scaled
    // masked softmax and dropout on a * s scores per token (read, write, and
    // dropout's read, write and mask).
    const double batched = gemm_time_s(device, attention_peak, shape.seq, shape.seq, model.head_dim) *
                           (m / shape.seq) * heads * 2.0;
    const double scores_s = memory_bound_s(device, kActivationBytes * 4.5 * m * heads * shape.seq);
    attention_forward_s = batched + scores_s;
    attention_backward_s = 2.0 * batched + scores_s;
  }
  const double elementwise_s = memory_bound_s(device, kActivationBytes * elements);
  // Eager PyTorch's backward of a linear layer with a bias reduces the
  // output gradient over the tokens in a kernel of its own (autograd's
  // addmm backward: grad.sum(0)), one read of it; fused engines fold it into
  // the weight-gradient GEMM (Transformer Engine, cuBLASLt's bias-gradient
  // epilogue) or a neighbouring kernel (torch.compile). And the backward of
  // splitting a fused QKV projection's output into q, k and v (chunk or
  // split) concatenates their gradients: a copy of the projection's output
  // gradient. Column-parallel outputs are split over tp, row-parallel ones
  // (the attention output and FFN down projections) are whole per token.
  double eager_backward_elements = 0;
  if (!fused && !model.uses_mla()) {
    const double qkv_biased = model.linear_bias || model.qkv_bias ? q_width + kv_width : 0.0;
    eager_backward_elements += m * qkv_biased;
    if (model.linear_bias)
      eager_backward_elements += replicated_tokens * h * (1.0 + ffn_copies) + m * ffn_copies * ffn_in;
    if (!shape.separate_qkv) eager_backward_elements += 2.0 * m * (q_width + kv_width);
  }
  // Unpadding around a variable-length kernel (flash-attn's bert_padding,
  // llm-foundry's flash path): forward, q, k and v gathered row by row
  // (torch.gather: read and write each) and the output scattered into a
  // zero-filled tensor (fill, then index_put: read and write); backward,
  // the output gradient gathered (read, write) and q, k, v's gradients
  // scattered into zero-filled tensors (fill, read, write each).
  double unpad_forward_elements = 0, unpad_backward_elements = 0;
  if (shape.unpadded_attention && shape.flash_attention) {
    unpad_forward_elements = m * (2.0 * (q_width + kv_width) + 3.0 * out_width);
    unpad_backward_elements = m * (2.0 * out_width + 3.0 * (q_width + kv_width));
  }
  // Context parallelism runs each KV block as its own kernel and then
  // merges: the partial outputs by their log-sum-exp, the per-block dQ and
  // dKV into the rank's gradients, all memory-bound on the compute stream.
  // Transformer Engine's ring (Megatron) in bf16; PyTorch's context_parallel
  // (torchtitan) in fp32, on K and V at the width torchtitan's SDPA takes
  // (cost/cp_merge_passes.h).
  CpMergeBytes merge;
  if (shape.flash_attention && shape.cp > 1) {
    const double q_bytes = kActivationBytes * m * q_width, o_bytes = kActivationBytes * m * out_width;
    merge = shape.cp_exchange == ContextParallelExchange::kRingOverlapped
                ? te_ring_merge_bytes(shape.cp, q_bytes, o_bytes, kActivationBytes * m * kv_width,
                                      shape.transformer_engine)
                : pytorch_ring_merge_bytes(
                      shape.cp, q_bytes, o_bytes,
                      kActivationBytes * m * torchtitan_sdpa_kv_elements_per_token(model, shape.tp), fused);
  }
  // The QKV and FC1 inputs come out of their norm. Transformer Engine's
  // LayerNormLinear (JobSpec::te_layernorm_linear) fuses the norm with
  // their quantization. Under delayed scaling the norm writes fp8 itself
  // (TE 1.8 transformer_engine/pytorch/module/layernorm_linear.py: ln_out
  // allocated as uint8 for _apply_normalization; TE 2.x
  // pytorch/csrc/extensions/normalization.cpp: Float8Quantizer -> the
  // FULLY_FUSED kernel), so there is no cast kernel: the norm writes one
  // byte less per element, and the weight gradient's transposed copy is an
  // fp8 transpose (read 1, write 1) of the gathered input, in the backward
  // under TE 1.8 (fp8_transpose(ln_out_total)) and where sequence
  // parallelism gathers it again there, in the forward otherwise
  // (common/normalization/*_api.cpp: nvte_transpose after the kernel).
  // Under current scaling the norm computes the amax as it writes its
  // 16-bit output (FUSED_NORM_AMAX_FP8), which quantize_with_amax then
  // casts; every other input and output gradient is quantized by
  // Float8CurrentScalingQuantizer::quantize (pytorch/csrc/quantizer.cpp @
  // v2.8): nvte_compute_amax, one more read of the 16-bit tensor, before
  // the cast. MLA's projections are timed apart (only its dense FC1 counts).
  // Under sequence parallelism a row-parallel Linear (the attention output
  // projection, FC2) casts its output gradient on the rank's m / tp tokens,
  // gathers the fp8 copy and transposes that (module/base.py
  // grad_output_preprocess, "FP8 case with gather": cast 2 + 1 bytes on
  // the shard, fp8 transpose 1 + 1 on the gathered tensor), its amax read on
  // the shard.
  const bool te_fp8 = shape.fp8 && shape.te_layernorm_linear;
  const bool norm_writes_fp8 = te_fp8 && !shape.fp8_current_scaling;
  const bool gathers_cast_grads = te_fp8 && shape.sp;
  const double attention_layers = model.uses_mla() ? 0.0 : 1.0;
  const double norm_fed_layers = attention_layers + ffn_copies;
  const double cast_norm_fed = norm_writes_fp8 ? 0.0 : 1.0;
  const double row_parallel_grads = m * h * norm_fed_layers;
  const double whole_row_grads = gathers_cast_grads ? 0.0 : 1.0;
  const double attention_output_grads = attention_layers * m * (q_width + kv_width + whole_row_grads * h);
  const double ffn_output_grads = ffn_copies * m * (ffn_in + whole_row_grads * h);
  const Fp8CastTimes casts = fp8_cast_times(
      device, shape, attention_layers * m * (cast_norm_fed * h + out_width), attention_output_grads,
      ffn_copies * m * (cast_norm_fed * h + ffn / t), ffn_output_grads);
  // What Transformer Engine's quantization adds to or saves from the casts.
  double te_fp8_forward_s = 0, te_fp8_backward_s = 0;
  if (gathers_cast_grads) te_fp8_backward_s += memory_bound_s(device, (3.0 / t + 2.0) * row_parallel_grads);
  if (norm_writes_fp8) {
    const double transpose_s = memory_bound_s(device, 2.0 * m * h * norm_fed_layers);
    const bool transpose_in_backward =
        shape.transformer_engine == TransformerEngineVersion::kV1_8 || shape.sp;
    (transpose_in_backward ? te_fp8_backward_s : te_fp8_forward_s) += transpose_s;
    te_fp8_forward_s -= memory_bound_s(device, replicated_tokens * h * norm_fed_layers);
  }
  const bool amax_pass = te_fp8 && shape.fp8_current_scaling;
  const double fc2_amax_s = amax_pass ? memory_bound_s(device, kActivationBytes * m * ffn / t) : 0.0;
  if (amax_pass) {
    te_fp8_forward_s +=
        memory_bound_s(device, kActivationBytes * attention_layers * m * out_width) + ffn_copies * fc2_amax_s;
    te_fp8_backward_s +=
        memory_bound_s(device, kActivationBytes * (attention_output_grads + ffn_output_grads +
                                                   (gathers_cast_grads ? row_parallel_grads / t : 0.0)));
  }

  LayerComputeTimes times;
  if (!shape.is_moe) {
    const double ffn_elements = replicated_tokens * (fused ? 2.0 : eager_norm) * h +
                                m * ffn * (model.gated_ffn ? (fused ? 3.0 : 5.0) : 2.0) / t;
    times.ffn_forward_s =
        windows.ffn_in_s + windows.ffn_out_s + memory_bound_s(device, kActivationBytes * ffn_elements) +
        fp8_cast_times(device, shape, 0.0, 0.0, m * (cast_norm_fed * h + ffn / t), 0.0).forward_s +
        fc2_amax_s;
  }
  times.attention_forward_s = attention_forward_s;
  times.attention_backward_s = attention_backward_s;
  times.gemm_forward_s = gemm_s;
  times.tp_windows = windows;
  // The fitted per-layer overhead (its sum is what calibration fits) split as
  // the kernels are: the backward launches two per forward one (input and
  // weight gradients), so a third forward, two thirds backward (assumed).
  times.forward_s = gemm_s + attention_forward_s + elementwise_s + casts.forward_s + te_fp8_forward_s +
                    memory_bound_s(device, merge.forward + kActivationBytes * unpad_forward_elements) +
                    device.layer_overhead_s / 3.0;
  times.backward_s =
      gemm_backward_s + attention_backward_s + 2.0 * elementwise_s + casts.backward_s + te_fp8_backward_s +
      memory_bound_s(device, kActivationBytes * (input_grad_sum_elements + eager_backward_elements +
                                                 unpad_backward_elements)) +
      memory_bound_s(device, merge.backward) + device.layer_overhead_s * 2.0 / 3.0;
  return times;
}

EdgeComputeTimes edge_compute_times(const ModelSpec& model, const DeviceSpec& device, double peak_flops_per_s,
                                    double tokens, int tp, CrossEntropy loss) {
  EdgeComputeTimes times;
  const double vocab_local = static_cast<double>(model.vocab) / tp;
  // The LM head stays 16-bit in fp8 runs: Megatron's output layer is a plain
  // tensor_parallel.ColumnParallelLinear, outside Transformer Engine's fp8
  // (megatron/core/models/gpt/gpt_model.py:119 @ core_v0.8.0; at d98e8a64 TE's
  // TELMHeadColumnParallelLinear only with fp8_output_proj under MXFP8), and
  // torchtitan's float8 conversion skips it (torchtitan/float8.py:99 @
  // 9dec370, module_filter_fn: fqn != "output").
  const double head_peak = sixteen_bit_peak_flops_per_s(device, peak_flops_per_s);
  const double logits_gemm_s = gemm_time_s(device, head_peak, tokens, vocab_local, model.hidden);
  const double logits = tokens * vocab_local;
  const LossPassBytes loss_bytes = loss_pass_bytes(loss, tp);
  times.head_forward_s = logits_gemm_s + memory_bound_s(device, loss_bytes.forward * logits);
  times.head_backward_s = gemm_backward_time_s(device, head_peak, tokens, vocab_local, model.hidden) +
                          memory_bound_s(device, loss_bytes.backward * logits);
  // The lookup writes the gathered rows (one pass over tokens x hidden); its
  // backward reads their gradients and adds them into the table's gradient
  // (two more): three 16-bit passes.
  times.embedding_s = memory_bound_s(device, 3.0 * kActivationBytes * tokens * model.hidden);
  return times;
}

double optimizer_step_s(const DeviceSpec& device, double params, OptimizerKernels kernels) {
  // Fused: reads fp32 weight, momentum, variance and the gradient, writes
  // the three fp32 tensors and the 16-bit copy: 16 + 14 bytes per parameter.
  // Per operator (Composer's DecoupledAdamW.adamw, composer/optim/
  // decoupled_weight_decay.py @ v0.17.0, on fp32 tensors): weight decay
  // param.mul_ 8, exp_avg.mul_ 8 and .add_(grad) 12, exp_avg_sq.mul_ 8 and
  // .addcmul_(grad, grad) 12, sqrt 8, divide 8, add eps 8, param.addcdiv_
  // 16: 88; Composer's gradient clipping (FSDP clip_grad_norm_: the norm
  // reads the gradient, the scale reads and writes it) 12 more.
  const double bytes_per_param = kernels == OptimizerKernels::kFused ? 30.0 : 100.0;
  return memory_bound_s(device, bytes_per_param * params);
}

}  // namespace parplan
