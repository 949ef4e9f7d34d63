// Parameter counts of a ModelSpec: per layer, embeddings, whole model.
#pragma once

#include "cost/spec/model_spec.h"

namespace parplan {

/// Attention block of one layer (projections and their biases).
double attention_params(const ModelSpec& model);
/// Dense FFN block of one layer.
double dense_ffn_params(const ModelSpec& model);
/// MoE block of one MoE layer: router, routed experts and shared experts.
double moe_ffn_params(const ModelSpec& model);
/// Parameters of one MoE layer's FFN that a token activates (router, top-k, shared).
double moe_active_ffn_params(const ModelSpec& model);
/// The two norms of a layer.
double layer_norm_params(const ModelSpec& model);
/// Whether layer `index` (0-based) is an MoE layer.
bool is_moe_layer(const ModelSpec& model, int index);
/// MoE layers among layers 0 .. index - 1 (index clamped to the model).
int moe_layers_before(const ModelSpec& model, int index);
/// Number of MoE layers in the model.
int moe_layer_count(const ModelSpec& model);
/// One dense transformer layer.
double dense_layer_params(const ModelSpec& model);
/// Input embedding (token + learned positions for `seq` positions).
double embedding_params(const ModelSpec& model, int seq);
/// Output projection when it is not tied to the input embedding (else 0).
double untied_head_params(const ModelSpec& model);
/// The whole model; learned position embeddings count `seq` positions, as
/// Narayanan 2021 eq. 2 does.
double total_params(const ModelSpec& model, int seq);
/// Parameters a token activates (MoE: top-k experts); equals total for dense.
double active_params(const ModelSpec& model, int seq);

}  // namespace parplan
