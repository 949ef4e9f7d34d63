// ModelSpec: the architecture of a decoder-only transformer (dense or MoE),
// as parplan needs it to count parameters, FLOPs and activation bytes.
#pragma once

#include <cstdint>
#include <string>

namespace parplan {

enum class NormKind { kLayerNorm, kRmsNorm };
enum class PositionKind { kLearned, kRope };
/// The FFN non-linearity: GeLU (erf), GeLU's tanh approximation (GPT-2's
/// gelu_new, Gemma's gelu_pytorch_tanh) or SiLU. With gated_ffn, SiLU is
/// SwiGLU and GeLU-tanh is GeGLU.
enum class Activation { kGelu, kGeluTanh, kSilu };

struct ModelSpec {
  /// Catalog name or the file it was read from.
  std::string name;
  /// Transformer (decoder) layers.
  int layers = 0;
  /// Model (hidden) width h.
  int hidden = 0;
  /// FFN inner width f of a dense layer (4h for GPT).
  int ffn_hidden = 0;
  /// Attention (query) heads a.
  int heads = 0;
  /// Key/value head groups (GQA); equal to heads for multi-head attention.
  int kv_groups = 0;
  /// Width of one attention head; usually hidden / heads.
  int head_dim = 0;
  /// Vocabulary size V (before any padding for tp).
  int64_t vocab = 0;
  /// Longest sequence the position embedding supports.
  int max_positions = 0;
  /// SwiGLU/GeGLU FFN: three FFN matrices instead of two.
  bool gated_ffn = false;
  /// Linear layers carry biases (GPT-2/3 style); LLaMA has none.
  bool linear_bias = true;
  NormKind norm = NormKind::kLayerNorm;
  PositionKind position = PositionKind::kLearned;
  /// Input embedding and LM head share one matrix.
  bool tied_embeddings = true;
  /// Dropout probability of the hidden states and attention (Megatron
  /// --hidden-dropout/--attention-dropout, default 0.1); 0 stores no
  /// dropout masks (the Llama family trains without dropout).
  double dropout = 0.1;

  // Details that change no count but must reach the launch files unchanged
  // (src/emit writes them; a launch file must not silently change the model).
  /// FFN non-linearity (gated_ffn with kSilu is SwiGLU).
  Activation activation = Activation::kGelu;
  /// RoPE base theta (HF rope_theta; Megatron --rotary-base, default 10000).
  double rope_theta = 10000.0;
  /// Fraction of each head's dimensions that are rotated (GPT-NeoX
  /// rotary_pct; Megatron --rotary-percent).
  double rotary_fraction = 1.0;
  /// Llama 3.1-style RoPE scaling factor (HF rope_scaling rope_type llama3;
  /// Megatron --use-rope-scaling --rope-scaling-factor); 0 = none.
  double rope_scaling_factor = 0.0;
  /// Epsilon of every LayerNorm/RMSNorm (HF rms_norm_eps/layer_norm_eps;
  /// Megatron --norm-epsilon, default 1e-5).
  double norm_epsilon = 1e-5;
  /// Biases on the Q/K/V projections only (Qwen2; Megatron --add-qkv-bias);
  /// linear_bias covers every linear layer.
  bool qkv_bias = false;
  /// RMSNorm on each query and key head (Qwen3, Gemma 3; Megatron --qk-layernorm).
  bool qk_norm = false;
  /// Sliding-window attention: each query attends to itself and the
  /// sliding_window - 1 tokens before it (HF sliding_window; Mistral v0.1,
  /// Gemma 2/3, GPT-OSS); 0 = every query sees its whole prefix. Priced
  /// (cost/sliding_window.h); no launch file parplan writes carries it.
  int sliding_window = 0;
  /// With a window, how many of the layers still attend to the whole prefix
  /// (GPT-OSS and Gemma 2 alternate: layers / 2; Gemma 3: one in six); 0 =
  /// every layer is windowed.
  int full_attention_layers = 0;
  /// One learned logit per attention head beside the keys in every softmax
  /// (GPT-OSS's sinks; Megatron softmax_type learnable): `heads` parameters
  /// per layer, no work the model counts; no launch file parplan writes
  /// carries it (named in `unmodelled`).
  bool attention_sinks = false;
  /// How `unmodelled` names attention sinks.
  static constexpr const char* kAttentionSinks = "attention sinks (one learned softmax logit per head)";

  // Mixture of experts (experts == 0 means dense).
  /// Routed experts per MoE layer.
  int experts = 0;
  /// Experts each token is routed to.
  int top_k = 0;
  /// FFN inner width of one routed expert.
  int expert_ffn_hidden = 0;
  /// Every moe_layer_freq-th layer (after the dense ones) is an MoE layer.
  int moe_layer_freq = 1;
  /// Always-active shared experts per MoE layer (DeepSeek).
  int shared_experts = 0;
  /// Leading layers that stay dense (DeepSeek's first_k_dense_replace).
  int first_dense_layers = 0;
  /// Multi-token-prediction modules (DeepSeek-V3 num_nextn_predict_layers):
  /// each one transformer layer plus a 2h -> h projection, sharing the
  /// embedding and the output head with the main model; counted apart.
  int mtp_layers = 0;
  /// Group-limited routing (DeepSeek n_group / topk_group): experts in
  /// route_groups groups, each token sent to experts of at most
  /// route_group_topk groups. With one group per node this is DeepSeek-V3's
  /// node-limited routing (each token to at most M = 4 nodes). 0 = off.
  int route_groups = 0;
  int route_group_topk = 0;
  /// Sigmoid router with a per-expert bias instead of an auxiliary loss
  /// (DeepSeek-V3's auxiliary-loss-free balancing).
  bool aux_loss_free = false;
  /// Weight of the load-balancing loss as the model was trained with it
  /// (Hugging Face router_aux_loss_coef / aux_loss_alpha, model YAML
  /// moe.aux_loss_coeff); 0 = not given, each engine's recommended value.
  /// Not a cost: the launch files must carry it.
  double aux_loss_coeff = 0.0;
  /// Scale of the routed experts' weighted output (DeepSeek-V3's
  /// routed_scaling_factor, 2.5); 0 = none. Not a cost: the launch files
  /// must carry it.
  double routed_scaling_factor = 0.0;

  // Multi-head latent attention (DeepSeek-V2/V3); 0 means plain attention.
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;

  /// What the model has that parplan neither costs nor can write into a
  /// launch file (sliding windows, soft-capping, GeGLU, ...), comma
  /// separated; empty when none. plan/estimate warn, --emit refuses.
  std::string unmodelled;

  bool is_moe() const { return experts > 0; }
  bool uses_mla() const { return kv_lora_rank > 0; }
};

}  // namespace parplan
