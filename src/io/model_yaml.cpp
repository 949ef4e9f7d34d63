// The model YAML reader (models/*.yaml schema), on the shared YamlFields helper.
#include <yaml-cpp/yaml.h>

#include <limits>
#include <string>
#include <vector>

#include "src/io/input_error.h"
#include "src/io/model_checks.h"
#include "src/io/model_loader.h"
#include "src/io/yaml_fields.h"

namespace parplan {
namespace {

const std::vector<std::string> kTopKeys = {
    "name", "source", "layers", "hidden", "ffn_hidden", "heads", "kv_groups", "head_dim", "vocab",
    "max_positions", "gated_ffn", "linear_bias", "norm", "position", "tied_embeddings", "moe", "mla",
    "dropout",
    // Optional details the launch files carry (docs/models.md).
    "activation", "rope_theta", "rotary_fraction", "rope_scaling_factor", "norm_epsilon", "qkv_bias",
    "qk_norm", "parallel_residual", "sliding_window", "full_attention_layers", "attention_sinks"};
const std::vector<std::string> kMoeKeys = {"experts",           "top_k",
                                           "expert_ffn_hidden", "moe_layer_freq",
                                           "shared_experts",    "first_dense_layers",
                                           "mtp_layers",        "route_groups",
                                           "route_group_topk",  "routed_scaling_factor",
                                           "aux_loss_free",     "aux_loss_coeff"};
const std::vector<std::string> kMlaKeys = {"q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "v_head_dim",
                                           "qk_nope_head_dim"};

int required_int(const YamlFields& f, const char* key, const std::string& what) {
  if (!f.has(key)) f.fail(key, "is missing: give " + what);
  return static_cast<int>(*f.integer(key, 1, kModelIntMax));
}

int int_field(const YamlFields& f, const char* key, int64_t low, int fallback) {
  return static_cast<int>(f.integer(key, low, kModelIntMax).value_or(fallback));
}

void add_unmodelled(ModelSpec& m, const std::string& what) {
  m.unmodelled += (m.unmodelled.empty() ? "" : ", ") + what;
}

// The optional keys that change no count but must reach the launch files.
void read_details(const YamlFields& top, ModelSpec& m) {
  const std::string activation =
      top.has("activation") ? top.choice("activation", {"gelu", "gelu_tanh", "silu"}) : "";
  if (activation == "gelu_tanh")
    m.activation = Activation::kGeluTanh;
  else if (activation == "silu" || (activation.empty() && m.gated_ffn))
    m.activation = Activation::kSilu;  // gated_ffn alone means SwiGLU
  else
    m.activation = Activation::kGelu;
  // Megatron --rotary-base is an int: 1e9 bounds every published base.
  m.rope_theta = top.number_in("rope_theta", 1.0, 1e9, 10000.0);
  m.rotary_fraction = top.number_in("rotary_fraction", 0.01, 1.0, 1.0);
  m.rope_scaling_factor = top.number_in("rope_scaling_factor", 1.0, 1e6, 0.0);
  m.norm_epsilon = top.number_in("norm_epsilon", 1e-12, 0.1, 1e-5);
  m.qkv_bias = top.boolean("qkv_bias", false);
  m.qk_norm = top.boolean("qk_norm", false);
  if (top.boolean("parallel_residual", false)) add_unmodelled(m, "parallel attention/FFN residual");
  m.attention_sinks = top.boolean("attention_sinks", false);
  if (m.attention_sinks) add_unmodelled(m, ModelSpec::kAttentionSinks);
  m.sliding_window = int_field(top, "sliding_window", 0, 0);
  m.full_attention_layers = int_field(top, "full_attention_layers", 0, 0);
  if (m.full_attention_layers > 0 && m.sliding_window == 0)
    top.fail("full_attention_layers", "needs sliding_window: the windowed layers are the others");
  if (m.full_attention_layers > m.layers)
    top.fail("full_attention_layers", "must not exceed layers (" + std::to_string(m.layers) + ")");
  // Every layer full: no layer is windowed, the model has full attention.
  if (m.full_attention_layers == m.layers) m.sliding_window = 0, m.full_attention_layers = 0;
}

ModelSpec model_from_yaml(const YAML::Node& root, const std::string& origin,
                          const std::string& default_name) {
  if (!root.IsDefined() || root.IsNull()) model_fail(origin, 0, "the file is empty: give the model's fields");
  if (!root.IsMap())
    model_fail(origin, yaml_line(root),
               "expected a mapping of model fields (layers, hidden, ...) at the top level");
  const YamlFields top(root, origin);
  top.allow_only(kTopKeys);
  ModelSpec m;
  m.name = top.text("name", default_name);
  if (!top.has("source"))
    top.fail("source", "is missing: give the paper or config.json the numbers come from");
  top.text("source");
  m.layers = required_int(top, "layers", "the number of transformer layers");
  m.hidden = required_int(top, "hidden", "the model width");
  m.heads = required_int(top, "heads", "the number of attention heads");
  m.vocab = top.integer("vocab", 1, std::numeric_limits<int64_t>::max()).value_or(0);
  if (m.vocab == 0) top.fail("vocab", "is missing: give the vocabulary size");
  m.max_positions = required_int(top, "max_positions", "the longest sequence the model supports");
  m.ffn_hidden = int_field(top, "ffn_hidden", 1, 0);
  if (m.ffn_hidden == 0) m.ffn_hidden = default_ffn_hidden(m.hidden, origin, "hidden");
  m.kv_groups = int_field(top, "kv_groups", 1, m.heads);
  bool head_dim_given = top.has("head_dim");
  m.head_dim = int_field(top, "head_dim", 1, 0);
  m.gated_ffn = top.boolean("gated_ffn", false);
  m.linear_bias = top.boolean("linear_bias", true);
  m.norm =
      top.choice("norm", {"layernorm", "rmsnorm"}) == "rmsnorm" ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  m.position =
      top.choice("position", {"learned", "rope"}) == "rope" ? PositionKind::kRope : PositionKind::kLearned;
  m.tied_embeddings = top.boolean("tied_embeddings", true);
  m.dropout = top.number_in("dropout", 0.0, 1.0, 0.1);
  read_details(top, m);

  if (const auto moe = top.block("moe")) {
    moe->allow_only(kMoeKeys);
    m.experts = required_int(*moe, "experts", "the number of routed experts per MoE layer");
    m.top_k = required_int(*moe, "top_k", "the number of experts each token is routed to");
    m.expert_ffn_hidden = int_field(*moe, "expert_ffn_hidden", 1, m.ffn_hidden);
    m.moe_layer_freq = int_field(*moe, "moe_layer_freq", 1, 1);
    m.shared_experts = int_field(*moe, "shared_experts", 0, 0);
    m.first_dense_layers = int_field(*moe, "first_dense_layers", 0, 0);
    m.mtp_layers = int_field(*moe, "mtp_layers", 0, 0);
    m.route_groups = int_field(*moe, "route_groups", 0, 0);
    m.route_group_topk = int_field(*moe, "route_group_topk", 0, 0);
    m.aux_loss_free = moe->boolean("aux_loss_free", false);
    m.aux_loss_coeff = moe->number_in("aux_loss_coeff", 0.0, 1.0, 0.0);
    m.routed_scaling_factor = moe->number_in("routed_scaling_factor", 0.0, 1000.0, 0.0);
  }
  if (const auto mla = top.block("mla")) {
    mla->allow_only(kMlaKeys);
    m.q_lora_rank = int_field(*mla, "q_lora_rank", 0, 0);
    m.kv_lora_rank = required_int(*mla, "kv_lora_rank", "the rank of the compressed key/value latent");
    m.qk_rope_head_dim = required_int(*mla, "qk_rope_head_dim", "the rotary part of a query/key head");
    m.v_head_dim = required_int(*mla, "v_head_dim", "the width of a value head");
    if (const auto nope = mla->integer("qk_nope_head_dim", 1, kModelIntMax)) {
      const int64_t qk_head = *nope + m.qk_rope_head_dim;
      if (head_dim_given && qk_head != m.head_dim) {
        mla->fail("qk_nope_head_dim", "(" + std::to_string(*nope) + ") plus 'mla.qk_rope_head_dim' (" +
                                          std::to_string(m.qk_rope_head_dim) +
                                          ") disagrees with 'head_dim' (" + std::to_string(m.head_dim) +
                                          "), the whole query/key head under MLA: give one of them");
      }
      if (qk_head > kModelIntMax) mla->fail("qk_nope_head_dim", "is too large");
      m.head_dim = static_cast<int>(qk_head);
      head_dim_given = true;
    }
    if (!head_dim_given) {
      model_fail(
          origin, 0,
          "field 'head_dim' is missing: with 'mla' give the query/key head width (non-rotary plus rotary "
          "part) or 'mla.qk_nope_head_dim'");
    }
  }
  if (!head_dim_given) m.head_dim = m.hidden / m.heads;
  check_model_consistency(m, head_dim_given, origin, ModelFieldNames{});
  return m;
}

}  // namespace

ModelSpec parse_model_yaml(const std::string& text, const std::string& origin,
                           const std::string& default_name) {
  try {
    return model_from_yaml(load_yaml_text(text, origin), origin, default_name);
  } catch (const InputError&) {
    throw;
  } catch (const YAML::Exception& e) {
    model_fail(origin, e.mark.is_null() ? 0 : e.mark.line + 1,
               "invalid YAML (" + e.msg + "); fix the syntax");
  }
}

}  // namespace parplan
