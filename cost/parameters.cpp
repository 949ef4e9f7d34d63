#include "cost/parameters.h"

#include <algorithm>

#include "cost/moe.h"

namespace parplan {

namespace {
double norm_params(const ModelSpec& model, double width) {
  return model.norm == NormKind::kLayerNorm ? 2.0 * width : width;
}
double ffn_matrix_count(const ModelSpec& model) { return model.gated_ffn ? 3.0 : 2.0; }
}  // namespace

double attention_params(const ModelSpec& model) {
  const double h = model.hidden;
  const double a = model.heads;
  if (model.uses_mla()) {
    // DeepSeek-V2 multi-head latent attention: low-rank query and joint
    // key/value compression, decoupled rope key (DeepSeek-V2 paper, sec. 2.1).
    const double rope = model.qk_rope_head_dim;
    const double qk_head = model.head_dim;  // nope + rope part of one head
    const double nope = qk_head - rope;
    const double q = model.q_lora_rank > 0
                         ? h * model.q_lora_rank + model.q_lora_rank + model.q_lora_rank * a * qk_head
                         : h * a * qk_head;
    const double kv = h * (model.kv_lora_rank + rope) + model.kv_lora_rank +
                      model.kv_lora_rank * a * (nope + model.v_head_dim);
    return q + kv + a * model.v_head_dim * h;
  }
  const double q_width = a * model.head_dim;
  const double kv_width = static_cast<double>(model.kv_groups) * model.head_dim;
  double params = h * (q_width + 2.0 * kv_width) + q_width * h;
  if (model.linear_bias)
    params += q_width + 2.0 * kv_width + h;
  else if (model.qkv_bias)
    params += q_width + 2.0 * kv_width;
  if (model.attention_sinks) params += a;
  return params;
}

double dense_ffn_params(const ModelSpec& model) {
  const double h = model.hidden;
  const double f = model.ffn_hidden;
  double params = ffn_matrix_count(model) * h * f;
  if (model.linear_bias) params += (model.gated_ffn ? 2.0 : 1.0) * f + h;
  return params;
}

double moe_ffn_params(const ModelSpec& model) {
  return router_params(model) + routed_expert_params(model) + shared_expert_params(model);
}

double moe_active_ffn_params(const ModelSpec& model) {
  return router_params(model) + (model.top_k + model.shared_experts) * one_expert_params(model);
}

double layer_norm_params(const ModelSpec& model) { return 2.0 * norm_params(model, model.hidden); }

bool is_moe_layer(const ModelSpec& model, int index) {
  if (!model.is_moe() || index < model.first_dense_layers) return false;
  const int freq = model.moe_layer_freq > 0 ? model.moe_layer_freq : 1;
  return (index - model.first_dense_layers) % freq == 0;
}

int moe_layers_before(const ModelSpec& model, int index) {
  // Closed form of counting is_moe_layer over the indices: the cost model
  // asks per candidate, so no loop over the layers.
  index = std::min(index, model.layers);
  if (!model.is_moe() || index <= model.first_dense_layers) return 0;
  const int freq = model.moe_layer_freq > 0 ? model.moe_layer_freq : 1;
  return (index - model.first_dense_layers + freq - 1) / freq;
}

int moe_layer_count(const ModelSpec& model) { return moe_layers_before(model, model.layers); }

double dense_layer_params(const ModelSpec& model) {
  return attention_params(model) + dense_ffn_params(model) + layer_norm_params(model);
}

double embedding_params(const ModelSpec& model, int seq) {
  const double positions = model.position == PositionKind::kLearned ? seq : 0.0;
  return (static_cast<double>(model.vocab) + positions) * model.hidden;
}

double untied_head_params(const ModelSpec& model) {
  return model.tied_embeddings ? 0.0 : static_cast<double>(model.vocab) * model.hidden;
}

namespace {
double all_layers_params(const ModelSpec& model, double moe_ffn) {
  const int moe_layers = moe_layer_count(model);
  const double dense_layers = model.layers - moe_layers;
  const double shared = attention_params(model) + layer_norm_params(model);
  return model.layers * shared + dense_layers * dense_ffn_params(model) + moe_layers * moe_ffn;
}
}  // namespace

double total_params(const ModelSpec& model, int seq) {
  return all_layers_params(model, model.is_moe() ? moe_ffn_params(model) : 0.0) +
         embedding_params(model, seq) + untied_head_params(model) + norm_params(model, model.hidden);
}

double active_params(const ModelSpec& model, int seq) {
  return all_layers_params(model, model.is_moe() ? moe_active_ffn_params(model) : 0.0) +
         embedding_params(model, seq) + untied_head_params(model) + norm_params(model, model.hidden);
}

}  // namespace parplan
