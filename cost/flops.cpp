#include "cost/flops.h"

#include "cost/parameters.h"
#include "cost/sliding_window.h"

namespace parplan {

namespace {
double linear_weight_params(const ModelSpec& model, bool is_moe) {
  const double h = model.hidden;
  double attention = 0;
  if (model.uses_mla()) {
    attention = attention_params(model);
  } else {
    const double q_width = static_cast<double>(model.heads) * model.head_dim;
    const double kv_width = static_cast<double>(model.kv_groups) * model.head_dim;
    attention = h * (q_width + 2.0 * kv_width) + q_width * h;
  }
  const double matrices = model.gated_ffn ? 3.0 : 2.0;
  const double ffn = is_moe ? matrices * h * model.expert_ffn_hidden * (model.top_k + model.shared_experts) +
                                  h * model.experts
                            : matrices * h * model.ffn_hidden;
  return attention + ffn;
}
}  // namespace

LayerFlops layer_forward_flops(const ModelSpec& model, double tokens, int seq, bool is_moe) {
  LayerFlops flops;
  flops.linear_flops = 2.0 * tokens * linear_weight_params(model, is_moe);
  const double v_dim = model.uses_mla() ? model.v_head_dim : model.head_dim;
  // Per token: 2 s (qk_dim + v_dim) per head, the square as the papers count
  // it; windowed layers count their band's share of it
  // (cost/sliding_window.h), averaged over the layers.
  flops.attention_flops =
      2.0 * tokens * seq * model.heads * (model.head_dim + v_dim) * attention_pair_ratio(model, seq);
  return flops;
}

double head_forward_flops(const ModelSpec& model, double tokens) {
  return 2.0 * tokens * model.hidden * static_cast<double>(model.vocab);
}

StepFlops step_flops(const ModelSpec& model, int gbs, int seq, Recompute recompute,
                     double recomputed_layer_fraction) {
  const double tokens = static_cast<double>(gbs) * seq;
  const int moe_layers = moe_layer_count(model);
  const double dense_layers = model.layers - moe_layers;
  const LayerFlops dense = layer_forward_flops(model, tokens, seq, false);
  LayerFlops moe;
  if (moe_layers > 0) moe = layer_forward_flops(model, tokens, seq, true);
  const double layers_forward = dense_layers * dense.total() + moe_layers * moe.total();
  const double head_forward = head_forward_flops(model, tokens);
  StepFlops step;
  step.model_flops = 3.0 * (layers_forward + head_forward);
  double repeated = 0;
  if (recompute == Recompute::kFull) {
    repeated = recomputed_layer_fraction * layers_forward;
  } else if (recompute == Recompute::kSelective) {
    // Korthikanti 2022 (sec. 6.3) counts hardware FLOPs with selective
    // recomputation as 72 B L s h^2 (1 + s/(3h) + ...): the attention core's
    // forward and backward counted twice. Reported HFU uses this convention.
    repeated = 3.0 * (dense_layers * dense.attention_flops + moe_layers * moe.attention_flops);
  }
  step.hardware_flops = step.model_flops + repeated;
  return step;
}

double selective_recompute_flops(const ModelSpec& model, const JobSpec& job, int gbs) {
  const double tokens = static_cast<double>(gbs) * job.seq;
  const int moe_layers = moe_layer_count(model);
  const double dense_layers = model.layers - moe_layers;
  const LayerFlops dense = layer_forward_flops(model, tokens, job.seq, false);
  LayerFlops moe;
  if (moe_layers > 0) moe = layer_forward_flops(model, tokens, job.seq, true);
  const double h = model.hidden;
  const double ffn_matrices = model.gated_ffn ? 3.0 : 2.0;
  const bool core_attn = job.recompute_modules.core_attn;
  if (job.selective_checkpoint == SelectiveCheckpoint::kTorchtitanOps) {
    const double q = static_cast<double>(model.heads) * model.head_dim;
    const double kv = model.uses_mla() ? q : static_cast<double>(model.kv_groups) * model.head_dim;
    const double replayed =
        h * kv + q * h + (model.gated_ffn ? h * static_cast<double>(model.ffn_hidden) : 0.0);
    return dense_layers * 2.0 * tokens * replayed +
           (core_attn ? 3.0 * moe_layers * moe.attention_flops : 0.0);
  }
  double repeated =
      core_attn ? 3.0 * (dense_layers * dense.attention_flops + moe_layers * moe.attention_flops) : 0.0;
  if (job.recompute_modules.mlp)
    repeated += dense_layers * 2.0 * tokens * ffn_matrices * h * model.ffn_hidden;
  if (job.recompute_modules.moe && moe_layers > 0) {
    const double experts = static_cast<double>(model.top_k) + model.shared_experts;
    repeated += moe_layers * 2.0 * tokens *
                (ffn_matrices * h * model.expert_ffn_hidden * experts + h * model.experts);
  }
  if (job.recompute_modules.mla_up_proj && model.uses_mla()) {
    // The up projections mla_up_projection_s times: keys' and values' from
    // their latent, queries' from theirs where there is one.
    const double nope = model.head_dim - model.qk_rope_head_dim;
    const double up =
        static_cast<double>(model.heads) * ((nope + model.v_head_dim) * model.kv_lora_rank +
                                            static_cast<double>(model.head_dim) * model.q_lora_rank);
    repeated += model.layers * 2.0 * tokens * up;
  }
  return repeated;
}

}  // namespace parplan
