#include "cost/memory.h"

namespace parplan {

ModelStateBytes model_state_bytes(double params, int zero_stage, int shard_ranks,
                                  double optimizer_bytes_per_param, double grad_bytes_per_param) {
  const double n = shard_ranks > 0 ? shard_ranks : 1;
  ModelStateBytes bytes;
  bytes.params_bytes = 2.0 * params / (zero_stage >= 3 ? n : 1.0);
  bytes.grads_bytes = grad_bytes_per_param * params / (zero_stage >= 2 ? n : 1.0);
  bytes.optimizer_bytes = optimizer_bytes_per_param * params / (zero_stage >= 1 ? n : 1.0);
  return bytes;
}

void keep_fsdp_fp32_shards(ModelStateBytes& states, double params, int shard_ranks) {
  const double n = shard_ranks > 0 ? shard_ranks : 1;
  states.params_bytes += 2.0 * params / n;
  states.optimizer_bytes -= 4.0 * params / n;
}

double gradient_bytes_per_param(Precision precision, int zero_stage, GradReduceDtype reduce) {
  if (reduce == GradReduceDtype::kFp32) return 4.0;
  if (reduce == GradReduceDtype::kBf16) return 2.0;
  return precision == Precision::kBf16 && zero_stage <= 1 ? 4.0 : 2.0;
}

double loss_bytes_per_logit(CrossEntropy kernel) {
  if (kernel == CrossEntropy::kEager) return 12.0;
  // Transformer Engine's Triton cross-entropy keeps only the 16-bit logits:
  // the forward saves per-row max / sum / target logit (3 fp32 per token),
  // and the backward writes the gradient into the logits tensor in place
  // (NVIDIA/TransformerEngine transformer_engine/pytorch/triton/
  // cross_entropy.py @ 02965d2: cross_entropy_backward_kernel stores
  // grad_input at X_ptr; cross_entropy_backward returns _input).
  if (kernel == CrossEntropy::kTeInPlace) return 2.0;
  // Megatron's fused kernel and the compiled one (Inductor keeps the 16-bit
  // logits and per-row statistics, and writes a 16-bit gradient).
  return 4.0;
}

double layer_activation_bytes(const ModelSpec& model, const ActivationShape& shape) {
  const double t = shape.tp;
  const double local_tokens = shape.seq * shape.micro_batch / shape.cp;
  const double h = model.hidden;
  const double q_width = static_cast<double>(model.heads) * model.head_dim;
  const double kv_width = model.uses_mla() ? q_width : static_cast<double>(model.kv_groups) * model.head_dim;
  const double f = model.ffn_hidden;
  if (shape.recompute == Recompute::kFull) return layer_input_bytes(model, shape);
  if (shape.recompute == Recompute::kSelective &&
      shape.selective_checkpoint == SelectiveCheckpoint::kTorchtitanOps)
    return local_tokens * torchtitan_op_checkpoint_bytes_per_token(model, shape);
  // Korthikanti's 10 s b h: both norm inputs (4), the QKV and FC1 inputs (4)
  // and two 1-byte dropout masks (2, only when the model has dropout);
  // replicated over tp unless sp.
  // Transformer Engine fp8 GEMMs save the fp8 cast of their input for the
  // weight gradient (transformer_engine/pytorch/module/layernorm_linear.py
  // and linear.py save the fp8 inputmat): 1 byte where the GEMM alone used
  // it (QKV and FC1 inputs, the FC2 input), 1 byte more where another op
  // keeps the bf16 tensor too (the attention output, which the fused
  // attention kernel saves for its own backward).
  const double gemm_input = shape.fp8 ? 1.0 : 2.0;
  const double replicated = (4.0 + 2.0 * gemm_input + (model.dropout > 0 ? 2.0 : 0.0)) * h;
  // Split over tp: Q and K (QK^T inputs), V, the projection input, and the
  // FFN: activation input(s) (gated: two) and output (the FC2 input).
  // Eager PyTorch keeps a gated FFN's activation output too, as the
  // product's input (measured on an H100: calibration/h100-kernels/
  // memory_fsdp.csv, docs/kernel-measurements.md); fused and compiled
  // kernels rebuild it from the two projections' outputs.
  const double eager_activation_output = shape.eager_elementwise && model.gated_ffn ? 2.0 * f : 0.0;
  // Query/key normalisation (Qwen3, OLMo 2) keeps its inputs, the 16-bit
  // query and key heads as the QKV projection gave them, for the norms'
  // backward beside the normalised (and rotated) ones the attention keeps.
  const double qk_norm_inputs = model.qk_norm ? 2.0 * (q_width + kv_width) : 0.0;
  const double split = 2.0 * (2.0 * q_width + 2.0 * kv_width) + qk_norm_inputs +
                       (shape.fp8 ? 1.0 : 0.0) * q_width + (model.gated_ffn ? 4.0 : 2.0) * f +
                       gemm_input * f + eager_activation_output;
  double per_token = (shape.sp ? replicated / t : replicated) + split / t;
  // Megatron's --recompute-modules mlp keeps only the MLP's input (the
  // residual, counted as a norm input): not FC1's input, the activation's
  // input(s) or FC2's input.
  if (megatron_recomputes(shape, &RecomputeModules::mlp))
    per_token -= gemm_input * h / (shape.sp ? t : 1.0) +
                 ((model.gated_ffn ? 4.0 : 2.0) * f + gemm_input * f + eager_activation_output) / t;
  // Megatron's --recompute-modules mla_up_proj discards the up projections'
  // outputs, the attention kernel's 16-bit query, key and value, once the
  // kernel has run (CheckpointWithoutOutput.discard_output_and_register_
  // recompute, multi_latent_attention.py), and rebuilds them before its
  // backward: the query and key heads of head_dim and the value heads.
  if (model.uses_mla() && megatron_recomputes(shape, &RecomputeModules::mla_up_proj))
    per_token -= 2.0 * (2.0 * q_width + static_cast<double>(model.heads) * model.v_head_dim) / t;
  // Softmax output (2), dropout mask (1) and dropout output (2) of the
  // unfused kernel: 5 a s bytes per token; the softmax output alone without
  // dropout (Korthikanti et al. 2022, sec. 4.1).
  if (!shape.flash_attention && !megatron_recomputes(shape, &RecomputeModules::core_attn)) {
    per_token += (model.dropout > 0 ? 5.0 : 2.0) * model.heads * shape.seq / t;
  }
  return local_tokens * per_token;
}

double torchtitan_op_checkpoint_bytes_per_token(const ModelSpec& model, const ActivationShape& shape) {
  // torchtitan/distributed/activation_checkpoint.py (_apply_op_sac): the
  // checkpoint keeps the block input, the outputs of the ops in its save
  // list (aten.mm, the SDPA kernels, reduce_scatter) except every second
  // mm of the block, counted in call order: wq (1) kept, wk (2) recomputed,
  // wv (3) kept, wo (4) recomputed, w1 (5) kept, w3 (6) recomputed, w2 (7)
  // kept (models/llama3/model.py call order). Everything else (norms, rope,
  // SiLU, products) is recomputed from those.
  const double t = shape.tp;
  const double h = model.hidden;
  const double q_width = static_cast<double>(model.heads) * model.head_dim;
  const double kv_width = model.uses_mla() ? q_width : static_cast<double>(model.kv_groups) * model.head_dim;
  const double f = model.ffn_hidden;
  const double element = shape.fp8 ? 1.0 : 2.0;
  // Column-parallel outputs (wq, wv, w1) and the attention output split over tp.
  double per_token = element * (2.0 * q_width + kv_width + f) / t;
  // The attention kernel's log-sum-exp: fp32 per head.
  per_token += 4.0 * model.heads / t;
  // The block input, sequence-sharded under tp (torchtitan always runs SP).
  per_token += 2.0 * h / (shape.sp ? t : 1.0);
  // w2 is row-parallel: its mm output is the full-width partial sum; under
  // tp the reduce-scatter outputs after wo and w2 are kept too.
  per_token += 2.0 * h;
  if (t > 1) per_token += 2.0 * (2.0 * h / t);
  return per_token;
}

double layer_input_bytes(const ModelSpec& model, const ActivationShape& shape) {
  const double local_tokens = shape.seq * shape.micro_batch / shape.cp;
  return 2.0 * local_tokens * model.hidden / (shape.sp || shape.partitioned_checkpoint ? shape.tp : 1);
}

double logits_bytes(const ModelSpec& model, const ActivationShape& shape) {
  const double local_tokens = shape.seq * shape.micro_batch / shape.cp;
  return loss_bytes_per_logit(shape.cross_entropy) * local_tokens * static_cast<double>(model.vocab) /
         shape.tp;
}

}  // namespace parplan
