// Which layers of a Hugging Face MoE config hold experts, in the form
// parplan's ModelSpec holds it: first_dense_layers dense layers, then every
// moe_layer_freq-th layer with experts. The model families spell it their
// own way (Qwen2/3-MoE: (i + 1) % decoder_sparse_step == 0 outside
// mlp_only_layers; DeepSeek: i >= first_k_dense_replace and
// i % moe_layer_freq == 0), so the reader lists the layers and this finds
// the form, or says there is none.
#pragma once

#include <functional>
#include <optional>

namespace parplan {

struct MoeLayerLayout {
  int first_dense_layers = 0;
  int moe_layer_freq = 1;
};

/// The layout whose MoE layers are exactly those where is_moe(i), i in
/// [0, layers); nullopt when no layer has experts or no layout matches.
std::optional<MoeLayerLayout> moe_layer_layout(int layers, const std::function<bool(int)>& is_moe);

}  // namespace parplan
