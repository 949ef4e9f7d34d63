// The Hugging Face config.json reader: a table {model_type -> family,
// defaults}; an unknown model_type is refused with the supported ones.
#include <algorithm>
#include <functional>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/io/hf_class_defaults.h"
#include "src/io/hf_moe_layers.h"
#include "src/io/hf_rope.h"
#include "src/io/input_error.h"
#include "src/io/input_file.h"
#include "src/io/input_limits.h"
#include "src/io/model_checks.h"
#include "src/io/model_loader.h"
#include "src/io/printable_text.h"

namespace parplan {
namespace {

using Json = nlohmann::json;

[[noreturn]] void fail(const std::string& origin, int line, const std::string& message) {
  model_fail(origin, line, message);
}

[[noreturn]] void fail_field(const std::string& origin, const std::string& message) {
  model_fail(origin, 0, message);
}

// A value quoted in a message: escaped and cut (src/io/printable_text.h).
std::string hf_excerpt(const std::string& text) { return printable_text(text); }

class HfConfig {
 public:
  HfConfig(const Json& root, const std::string& origin) : root_(root), origin_(origin) {}
  const Json& root() const { return root_; }

  /// The first of `keys` present with a non-null value, or nullptr.
  const Json* find(std::initializer_list<const char*> keys, std::string* found = nullptr) const {
    for (const char* key : keys) {
      const auto it = root_.find(key);
      if (it != root_.end() && !it->is_null()) {
        if (found != nullptr) *found = key;
        return &*it;
      }
    }
    return nullptr;
  }

  bool has(std::initializer_list<const char*> keys) const { return find(keys) != nullptr; }

  /// An integer >= min_value from the first present key, or nullopt. `used`
  /// receives the key's name (the first alias when absent).
  std::optional<int64_t> integer(std::initializer_list<const char*> keys, int64_t min_value,
                                 int64_t max_value, std::string* used = nullptr) const {
    std::string key = *keys.begin();
    const Json* value = find(keys, &key);
    if (used != nullptr) *used = key;
    if (value == nullptr) return std::nullopt;
    const std::string kind = min_value > 0 ? "a positive integer" : "a non-negative integer";
    auto bad = [&](const std::string& extra) -> void {
      fail(origin_, 0,
           "field '" + key + "' must be " + kind + " (got " + hf_excerpt(value->dump()) + extra + ")");
    };
    if (value->is_number_unsigned()) {
      const auto u = value->get<uint64_t>();
      if (u > static_cast<uint64_t>(max_value)) bad(", too large");
      if (static_cast<int64_t>(u) < min_value) bad("");
      return static_cast<int64_t>(u);
    }
    if (!value->is_number_integer()) bad("");
    const auto v = value->get<int64_t>();
    if (v < min_value) bad("");
    if (v > max_value) bad(", too large");
    return v;
  }

  int required_int(std::initializer_list<const char*> keys, std::string* used = nullptr) const {
    std::string key;
    const auto value = integer(keys, 1, kModelIntMax, &key);
    if (used != nullptr) *used = key;
    if (!value) missing(keys);
    return static_cast<int>(*value);
  }

  int optional_int(std::initializer_list<const char*> keys, int64_t min_value, int fallback,
                   std::string* used = nullptr) const {
    return static_cast<int>(integer(keys, min_value, kModelIntMax, used).value_or(fallback));
  }

  std::optional<bool> boolean(const char* key) const {
    const Json* value = find({key});
    if (value == nullptr) return std::nullopt;
    if (!value->is_boolean()) {
      fail(origin_, 0,
           std::string("field '") + key + "' must be true or false (got " + hf_excerpt(value->dump()) + ")");
    }
    return value->get<bool>();
  }

  std::optional<std::string> string(const char* key) const {
    const Json* value = find({key});
    if (value == nullptr) return std::nullopt;
    if (!value->is_string()) {
      fail(origin_, 0,
           std::string("field '") + key + "' must be a string (got " + hf_excerpt(value->dump()) + ")");
    }
    return value->get<std::string>();
  }

  void number(const char* key) const {
    const Json* value = find({key});
    if (value != nullptr && !value->is_number()) {
      fail(origin_, 0,
           std::string("field '") + key + "' must be a number (got " + hf_excerpt(value->dump()) + ")");
    }
  }

  [[noreturn]] void missing(std::initializer_list<const char*> keys) const {
    std::string names;
    for (const char* k : keys) names += std::string(names.empty() ? "" : " or ") + k;
    fail(origin_, 0,
         "field '" + std::string(*keys.begin()) + "' is missing: a Hugging Face config needs " + names);
  }

 private:
  const Json& root_;
  std::string origin_;
};

enum class Family { kLlama, kGpt2, kGptNeox };

/// One supported model_type: how its layers are built, and what of it
/// parplan does not model (costed as the plain family, named to the user).
struct HfType {
  const char* model_type;
  Family family;
  bool tied_default;        // tie_word_embeddings when the file does not say
  bool qkv_bias;            // biases on Q/K/V only, fixed by the model code
  bool qk_norm;             // RMSNorm on each query/key head, fixed by the model code
  double norm_eps_default;  // rms_norm_eps / layer_norm_eps when the file does not say
  const char* unmodelled;   // "" when everything that changes cost is modelled
};

// Defaults from each model's configuration class in Hugging Face
// transformers (models/<type>/configuration_<type>.py: tie_word_embeddings,
// rms_norm_eps/layer_norm_eps) and modeling code (Qwen2Attention builds
// q/k/v_proj with bias=True; Qwen3Attention and Gemma3Attention apply
// q_norm/k_norm; Gemma's RMSNorm scales by 1 + weight and its embedding by
// sqrt(hidden)).
constexpr HfType kHfTypes[] = {
    {"llama", Family::kLlama, false, false, false, 1e-6, ""},
    {"mistral", Family::kLlama, false, false, false, 1e-6, ""},
    {"mixtral", Family::kLlama, false, false, false, 1e-5, ""},
    {"qwen2", Family::kLlama, false, true, false, 1e-6, ""},
    {"qwen2_moe", Family::kLlama, false, true, false, 1e-6, ""},
    {"qwen3", Family::kLlama, false, false, true, 1e-6, ""},
    {"qwen3_moe", Family::kLlama, false, false, true, 1e-6, ""},
    {"deepseek_v2", Family::kLlama, false, false, false, 1e-6, ""},
    {"deepseek_v3", Family::kLlama, false, false, false, 1e-6, ""},
    {"phi3", Family::kLlama, false, false, false, 1e-5, ""},
    {"gemma2", Family::kLlama, true, false, false, 1e-6,
     "GeGLU (tanh) activation, logit soft-capping, Gemma's (1 + weight) RMSNorm "
     "and sqrt(hidden) embedding "
     "scale"},
    {"gemma3_text", Family::kLlama, true, false, true, 1e-6,
     "GeGLU (tanh) activation, Gemma's (1 + weight) RMSNorm and sqrt(hidden) "
     "embedding scale"},
    {"gemma3", Family::kLlama, true, false, true, 1e-6,
     "GeGLU (tanh) activation, Gemma's (1 + weight) RMSNorm and sqrt(hidden) "
     "embedding scale"},
    // GptOssConfig: tie_word_embeddings False, rms_norm_eps 1e-5; its experts
    // clamp the SwiGLU (swiglu_limit) and add 1 to the linear half.
    {"gpt_oss", Family::kLlama, false, false, false, 1e-5,
     "GPT-OSS's clamped SwiGLU (swiglu_limit, the linear half + 1)"},
    {"gpt2", Family::kGpt2, true, false, false, 1e-5, ""},
    {"gpt_neox", Family::kGptNeox, false, false, false, 1e-5, ""},
};

std::string supported_types() {
  std::string list;
  for (const HfType& t : kHfTypes) list += (list.empty() ? "" : ", ") + std::string(t.model_type);
  return list;
}

const HfType* find_type(const std::string& model_type) {
  for (const HfType& t : kHfTypes)
    if (model_type == t.model_type) return &t;
  return nullptr;
}

/// The table entry for model_type; without one, a guess from the field
/// names (GPT-2's n_embd, GPT-NeoX's rotary_pct, else Llama-like).
HfType type_of(const HfConfig& hf, const std::optional<std::string>& model_type, const std::string& origin) {
  if (model_type) {
    if (const HfType* t = find_type(*model_type)) return *t;
    fail(origin, 0,
         "field 'model_type' is '" + hf_excerpt(*model_type) + "', which parplan cannot read; supported: " +
             supported_types() + " (or write a model YAML, see models/)");
  }
  if (hf.has({"n_embd", "n_layer", "n_head"})) return *find_type("gpt2");
  if (hf.has({"rotary_pct", "use_parallel_residual"})) return *find_type("gpt_neox");
  HfType llama = *find_type("llama");
  llama.tied_default = true;  // transformers' PretrainedConfig default
  return llama;
}

// A list of distinct layer indices in [0, layers), e.g. Qwen's mlp_only_layers.
std::vector<int> layer_list(const HfConfig& hf, const std::string& origin, const char* key, int layers) {
  std::vector<int> out;
  const Json* value = hf.find({key});
  if (value == nullptr) return out;
  const std::string what = std::string("field '") + key + "' must be a list of layer indices in [0, " +
                           std::to_string(layers) + ") (got " + hf_excerpt(value->dump()) + ")";
  if (!value->is_array()) fail(origin, 0, what);
  for (const Json& item : *value) {
    if (!item.is_number_integer() || item.get<int64_t>() < 0 || item.get<int64_t>() >= layers)
      fail(origin, 0, what);
    const int layer = static_cast<int>(item.get<int64_t>());
    if (std::find(out.begin(), out.end(), layer) != out.end())
      fail(origin, 0, std::string("field '") + key + "' names layer " + std::to_string(layer) + " twice");
    out.push_back(layer);
  }
  return out;
}

// Sets first_dense_layers and moe_layer_freq to the layers `is_moe` gives
// experts, or refuses a pattern ModelSpec cannot hold.
void set_moe_layers(const std::string& origin, ModelSpec& m, const std::string& fields,
                    const std::function<bool(int)>& is_moe) {
  const auto layout = moe_layer_layout(m.layers, is_moe);
  if (!layout) {
    std::string listed;
    int count = 0;
    for (int i = 0; i < m.layers; ++i)
      if (is_moe(i)) listed += (count++ ? "," : "") + std::to_string(i);
    fail(origin, 0,
         count == 0
             ? "fields " + fields + " leave no layer with experts; drop the expert fields to plan it dense"
             : "fields " + fields + " put experts on layers " + listed +
                   ", which parplan cannot model: it takes dense layers first, then every k-th layer "
                   "with experts; write a model YAML with moe.first_dense_layers and moe.moe_layer_freq");
  }
  m.first_dense_layers = layout->first_dense_layers;
  m.moe_layer_freq = layout->moe_layer_freq;
}

void add_unmodelled(ModelSpec& m, const std::string& what) {
  m.unmodelled += (m.unmodelled.empty() ? "" : ", ") + what;
}

/// A number >= 0 from the first present key, or `fallback`.
double number_or(const HfConfig& hf, std::initializer_list<const char*> keys, double fallback,
                 const std::string& origin) {
  std::string key;
  const Json* value = hf.find(keys, &key);
  if (value == nullptr) return fallback;
  if (!value->is_number() || value->get<double>() < 0)
    fail(origin, 0,
         "field '" + key + "' must be a non-negative number (got " + hf_excerpt(value->dump()) + ")");
  return value->get<double>();
}

// What changes no count but must reach the launch files unchanged: the
// activation, RoPE base/fraction/scaling, norm epsilon, dropout, the
// sliding window (priced; no launch file carries it); and what parplan does
// not model (soft-capping, other RoPE scalings, the parallel residual),
// named in m.unmodelled.
void read_details(const HfConfig& hf, const HfType& type, ModelSpec& m) {
  const std::string& origin = m.name;
  // hidden_act (Llama, NeoX), hidden_activation (Gemma), activation_function (GPT-2).
  std::string act_key;
  const Json* act = hf.find({"hidden_activation", "hidden_act", "activation_function"}, &act_key);
  std::string act_name = type.family == Family::kLlama ? "silu" : "gelu";
  if (type.family == Family::kGpt2) act_name = "gelu_new";  // GPT2Config default
  if (std::string(type.model_type).rfind("gemma", 0) == 0)
    act_name = "gelu_pytorch_tanh";  // Gemma2Config / Gemma3TextConfig default
  if (act != nullptr) {
    if (!act->is_string())
      fail(origin, 0, "field '" + act_key + "' must be a string (got " + hf_excerpt(act->dump()) + ")");
    act_name = act->get<std::string>();
  }
  if (act_name == "silu" || act_name == "swish") {
    m.activation = Activation::kSilu;
  } else if (act_name == "gelu") {
    m.activation = Activation::kGelu;
  } else if (act_name == "gelu_new" || act_name == "gelu_pytorch_tanh" || act_name == "gelu_fast") {
    m.activation = Activation::kGeluTanh;
  } else {
    m.activation = m.gated_ffn ? Activation::kSilu : Activation::kGelu;
    add_unmodelled(m, "the " + hf_excerpt(act_name) + " activation");
  }
  // RoPE: rope_theta (GPT-NeoX: rotary_emb_base) or rope_parameters, rotary_pct /
  // partial_rotary_factor, the scaling (src/io/hf_rope.h).
  const HfRope rope = read_hf_rope(hf.root(), fail_field, origin);
  if (m.position == PositionKind::kRope) {
    m.rope_theta = rope.theta;
    const double fraction_default = type.family == Family::kGptNeox ? 0.25 : 1.0;  // GPTNeoXConfig rotary_pct
    m.rotary_fraction = number_or(hf, {"rotary_pct", "partial_rotary_factor"}, fraction_default, origin);
    if (m.rotary_fraction <= 0.0 || m.rotary_fraction > 1.0)
      fail(origin, 0, "rope_theta must be >= 1 and the rotary fraction in (0, 1]");
  }
  m.rope_scaling_factor = rope.llama3_factor;
  if (!rope.unmodelled.empty()) add_unmodelled(m, rope.unmodelled);
  m.norm_epsilon =
      number_or(hf, {"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon"}, type.norm_eps_default, origin);
  if (m.norm_epsilon <= 0.0 || m.norm_epsilon >= 0.1)
    fail(origin, 0, "the norm epsilon must lie in (0, 0.1) (got " + std::to_string(m.norm_epsilon) + ")");
  if (type.family == Family::kLlama) m.dropout = number_or(hf, {"attention_dropout"}, 0.0, origin);
  if (type.family == Family::kGptNeox) {
    // The attention dropout first: it costs time inside the attention kernel
    // (cost/attention_dropout.h).
    m.dropout = number_or(hf, {"attention_dropout", "hidden_dropout"}, 0.0, origin);
    if (hf.boolean("use_parallel_residual").value_or(true))
      add_unmodelled(m, "parallel attention/FFN residual");
  }
  if (type.family == Family::kGpt2) m.dropout = number_or(hf, {"attn_pdrop", "resid_pdrop"}, 0.1, origin);
  if (m.dropout > 1.0) fail(origin, 0, "dropout probabilities must lie in [0, 1]");
  // A sliding window applies unless the config turns it off (Qwen2's
  // use_sliding_window false). Which layers keep full attention: the
  // per-layer layer_types list where the config has one (GPT-OSS, newer
  // transformers), else Gemma 3's sliding_window_pattern P (layer i,
  // 0-based, is full when (i + 1) % P == 0: Gemma3DecoderLayer), Gemma 2's
  // alternation (odd layers full: Gemma2DecoderLayer is_sliding = not
  // layer_idx % 2), else none (Mistral: every layer windowed).
  const auto window = hf.integer({"sliding_window"}, 0, std::numeric_limits<int64_t>::max());
  // Qwen2/Qwen3 configs default use_sliding_window to false (Qwen2Config).
  const bool window_default = std::string(type.model_type).rfind("qwen", 0) != 0;
  if (window && *window > 0 && hf.boolean("use_sliding_window").value_or(window_default)) {
    m.sliding_window = static_cast<int>(std::min<int64_t>(*window, std::numeric_limits<int>::max()));
    const Json* types = hf.find({"layer_types"});
    const auto pattern = hf.integer({"sliding_window_pattern"}, 1, std::numeric_limits<int>::max());
    if (types != nullptr && types->is_array()) {
      if (static_cast<int64_t>(types->size()) != m.layers)
        fail(origin, 0,
             "field 'layer_types' must name one kind per layer (" + std::to_string(m.layers) + "; got " +
                 std::to_string(types->size()) + ")");
      int full = 0;
      for (const Json& kind : *types) {
        if (!kind.is_string() || (kind != "full_attention" && kind != "sliding_attention"))
          fail(origin, 0,
               "field 'layer_types' holds 'full_attention' or 'sliding_attention' per layer (got " +
                   hf_excerpt(kind.dump()) + ")");
        full += kind == "full_attention" ? 1 : 0;
      }
      m.full_attention_layers = full;
    } else if (pattern) {
      m.full_attention_layers = static_cast<int>(m.layers / *pattern);
    } else if (std::string(type.model_type).rfind("gemma3", 0) == 0) {
      m.full_attention_layers = m.layers / 6;  // Gemma3TextConfig sliding_window_pattern default
    } else if (std::string(type.model_type).rfind("gemma2", 0) == 0) {
      m.full_attention_layers = m.layers / 2;
    }
    // Every layer full: no window at all.
    if (m.full_attention_layers >= m.layers) m.sliding_window = 0, m.full_attention_layers = 0;
  }
  for (const char* cap : {"attn_logit_softcapping", "final_logit_softcapping"}) {
    const Json* value = hf.find({cap});
    if (value != nullptr && value->is_number() && m.unmodelled.find("soft-capping") == std::string::npos)
      add_unmodelled(m, "logit soft-capping");
  }
}

ModelSpec model_from_hf(const Json& root, const std::string& origin) {
  if (!root.is_object()) {
    fail(origin, 0,
         "a Hugging Face config.json must be a JSON object {...} (got " + hf_excerpt(root.dump()) + ")");
  }
  // Gemma 3 (multimodal): the decoder is the text_config (a gemma3_text).
  const auto text = root.find("text_config");
  if (root.value("model_type", "") == "gemma3" && text != root.end() && text->is_object()) {
    Json decoder = *text;
    decoder["model_type"] = "gemma3_text";
    ModelSpec m = model_from_hf(decoder, origin);
    m.unmodelled +=
        std::string(m.unmodelled.empty() ? "" : ", ") + "the vision tower (only the text decoder is planned)";
    return m;
  }
  const Json filled = with_hf_class_defaults(root);
  const HfConfig hf(filled, origin);
  ModelFieldNames names;
  ModelSpec m;
  m.name = origin;

  const HfType type = type_of(hf, hf.string("model_type"), origin);
  const Family family = type.family;
  const bool tied_default = type.tied_default;
  m.unmodelled = type.unmodelled;
  m.qkv_bias = type.qkv_bias;
  m.qk_norm = type.qk_norm;

  m.layers = hf.required_int({"num_hidden_layers", "n_layer", "num_layers"}, &names.layers);
  m.hidden = hf.required_int({"hidden_size", "n_embd", "d_model"}, &names.hidden);
  m.heads = hf.required_int({"num_attention_heads", "n_head"}, &names.heads);
  m.vocab = hf.integer({"vocab_size"}, 1, std::numeric_limits<int64_t>::max()).value_or(0);
  if (m.vocab == 0) hf.missing({"vocab_size"});
  m.max_positions = hf.required_int({"max_position_embeddings", "n_positions", "n_ctx"});
  m.ffn_hidden = hf.optional_int({"intermediate_size", "n_inner"}, 1, 0, &names.ffn_hidden);
  // GPT-2's n_inner None is 4 x hidden; every other family's class default
  // is a fixed width of one checkpoint, never 4 x hidden: name the field.
  if (m.ffn_hidden == 0 && family != Family::kGpt2) hf.missing({"intermediate_size"});
  if (m.ffn_hidden == 0) m.ffn_hidden = default_ffn_hidden(m.hidden, origin, names.hidden);
  m.kv_groups = hf.optional_int({"num_key_value_heads"}, 1, m.heads, &names.kv_groups);
  bool head_dim_given = hf.has({"head_dim"});
  m.head_dim = hf.optional_int({"head_dim"}, 1, 0);
  m.tied_embeddings = hf.boolean("tie_word_embeddings").value_or(tied_default);

  switch (family) {
    case Family::kGpt2:
      m.gated_ffn = false;
      m.linear_bias = true;
      m.norm = NormKind::kLayerNorm;
      m.position = PositionKind::kLearned;
      m.dropout = 0.1;  // GPT2Config resid_pdrop/attn_pdrop/embd_pdrop = 0.1
      break;
    case Family::kGptNeox:
      // Rotary on rotary_pct of each head; the parallel residual changes no counts.
      hf.number("rotary_pct");
      hf.boolean("use_parallel_residual");
      m.gated_ffn = false;
      m.linear_bias = true;
      m.norm = NormKind::kLayerNorm;
      m.position = PositionKind::kRope;
      m.dropout = 0.0;  // GPTNeoXConfig hidden_dropout/attention_dropout = 0.0
      break;
    case Family::kLlama:
      m.gated_ffn = true;
      m.linear_bias = hf.boolean("attention_bias").value_or(false) || hf.boolean("mlp_bias").value_or(false);
      m.norm = NormKind::kRmsNorm;
      m.position = PositionKind::kRope;
      m.dropout = 0.0;  // LlamaConfig attention_dropout = 0.0 (and no hidden dropout)
      break;
  }

  read_details(hf, type, m);
  // GptOssAttention's sinks: one learned logit per head in every softmax.
  if (std::string(type.model_type) == "gpt_oss") {
    m.attention_sinks = true;
    add_unmodelled(m, ModelSpec::kAttentionSinks);
  }

  // Mixture of experts: Mixtral (num_local_experts), DeepSeek (n_routed_experts)
  // or Qwen-MoE (num_experts).
  std::string experts_key;
  if (const auto experts = hf.integer({"num_local_experts", "n_routed_experts", "num_experts"}, 1,
                                      kModelIntMax, &experts_key)) {
    names.experts = experts_key;
    // Two spellings of the expert count that disagree: which one the model
    // code reads depends on its family, so neither is taken in silence.
    for (const char* other : {"num_local_experts", "n_routed_experts", "num_experts"}) {
      const Json* value = hf.find({other});
      if (other != experts_key && value != nullptr && *value != *hf.find({experts_key.c_str()}))
        fail(origin, 0,
             "fields '" + experts_key + "' and '" + other + "' give different expert counts (" +
                 std::to_string(*experts) + " and " + hf_excerpt(value->dump()) +
                 "); keep the one the model uses");
    }
    m.experts = static_cast<int>(*experts);
    m.top_k = hf.required_int({"num_experts_per_tok"}, &names.top_k);
    m.aux_loss_coeff = number_or(hf, {"router_aux_loss_coef", "aux_loss_alpha"}, 0.0, origin);
    if (m.aux_loss_coeff > 1.0) fail(origin, 0, "the load-balancing loss weight must lie in [0, 1]");
    if (experts_key == "n_routed_experts") {
      m.expert_ffn_hidden = hf.required_int({"moe_intermediate_size"});
      m.shared_experts = hf.optional_int({"n_shared_experts"}, 0, 0);
      const int first_dense = hf.optional_int({"first_k_dense_replace"}, 0, 0, &names.first_dense_layers);
      const int freq = hf.optional_int({"moe_layer_freq"}, 1, 1);
      // DeepSeek-V2/V3's modeling code: experts where layer_idx >=
      // first_k_dense_replace and layer_idx % moe_layer_freq == 0.
      set_moe_layers(origin, m, "first_k_dense_replace and moe_layer_freq",
                     [&](int i) { return i >= first_dense && i % freq == 0; });
      m.mtp_layers = hf.optional_int({"num_nextn_predict_layers"}, 0, 0);
      m.route_groups = hf.optional_int({"n_group"}, 0, 0, &names.route_groups);
      m.route_group_topk = hf.optional_int({"topk_group"}, 0, 0, &names.route_group_topk);
      m.aux_loss_free = hf.string("scoring_func").value_or("softmax") == "sigmoid";
      // DeepSeek's config.json writes 1.0 for "no scaling".
      const double routed_scale = number_or(hf, {"routed_scaling_factor"}, 0.0, origin);
      // The model YAML's bound (moe.routed_scaling_factor): DeepSeek-V3 uses 2.5.
      if (routed_scale > 1000.0)
        fail(
            origin, 0,
            "field 'routed_scaling_factor' must lie in [0, 1000] (got " + std::to_string(routed_scale) + ")");
      m.routed_scaling_factor = routed_scale == 1.0 ? 0.0 : routed_scale;
    } else if (experts_key == "num_experts") {
      m.expert_ffn_hidden = hf.required_int({"moe_intermediate_size"});
      // Qwen2-MoE: one shared expert of shared_expert_intermediate_size,
      // counted as that many expert widths.
      const int shared_width = hf.optional_int({"shared_expert_intermediate_size"}, 0, 0);
      if (shared_width % m.expert_ffn_hidden != 0)
        fail(origin, 0,
             "field 'shared_expert_intermediate_size' (" + std::to_string(shared_width) +
                 ") must be a multiple of moe_intermediate_size (" + std::to_string(m.expert_ffn_hidden) +
                 "): parplan counts the shared expert in whole expert widths; write a model YAML with "
                 "moe.shared_experts instead");
      m.shared_experts = shared_width / m.expert_ffn_hidden;
      // Qwen2/3-MoE's modeling code: experts where layer_idx is not in
      // mlp_only_layers and (layer_idx + 1) % decoder_sparse_step == 0.
      const int step = hf.optional_int({"decoder_sparse_step"}, 1, 1);
      const std::vector<int> mlp_only = layer_list(hf, origin, "mlp_only_layers", m.layers);
      set_moe_layers(origin, m, "decoder_sparse_step and mlp_only_layers", [&](int i) {
        return (i + 1) % step == 0 && std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end();
      });
      names.first_dense_layers = "mlp_only_layers";
    } else {
      m.expert_ffn_hidden = m.ffn_hidden;
      names.first_dense_layers = "first_dense_layers";
    }
  }

  // Multi-head latent attention (DeepSeek-V2/V3).
  if (const auto kv_lora = hf.integer({"kv_lora_rank"}, 1, kModelIntMax)) {
    m.kv_lora_rank = static_cast<int>(*kv_lora);
    m.q_lora_rank = hf.optional_int({"q_lora_rank"}, 0, 0);
    m.qk_rope_head_dim = hf.required_int({"qk_rope_head_dim"}, &names.qk_rope_head_dim);
    m.v_head_dim = hf.required_int({"v_head_dim"});
    // A query/key head is its non-rotary part plus its rotary part (HF qk_head_dim).
    m.head_dim = hf.required_int({"qk_nope_head_dim"}, &names.head_dim) + m.qk_rope_head_dim;
    head_dim_given = true;
  } else {
    names.head_dim = "head_dim";
  }
  if (!head_dim_given) m.head_dim = m.hidden / m.heads;
  check_model_consistency(m, head_dim_given, origin, names);
  return m;
}

/// nlohmann's what() without its "[json.exception.parse_error.101] " prefix.
std::string json_message(const std::exception& e) { return json_error_text(e); }

}  // namespace

ModelSpec parse_hf_config(const std::string& text, const std::string& origin) {
  try {
    // nlohmann keeps the last of duplicate keys: refuse them instead.
    std::vector<std::vector<std::string>> keys_by_depth;
    std::string duplicate;
    bool too_deep = false;
    const Json::parser_callback_t no_duplicates = [&](int depth, Json::parse_event_t event, Json& parsed) {
      // A value nested thousands deep would overflow the stack where it is
      // quoted back: a config.json is a few levels deep.
      if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) &&
          depth >= kMaxJsonDepth)
        too_deep = true;
      if (too_deep) return false;
      if (event == Json::parse_event_t::object_start)
        keys_by_depth.resize(depth + 2), keys_by_depth[depth + 1].clear();
      if (event == Json::parse_event_t::key && duplicate.empty() &&
          static_cast<int>(keys_by_depth.size()) > depth) {
        auto& seen = keys_by_depth[depth];
        const std::string key = parsed.get<std::string>();
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) duplicate = key;
        seen.push_back(key);
      }
      return true;
    };
    const Json root = Json::parse(text, no_duplicates);
    if (too_deep)
      fail(origin, 0,
           "values are nested more than " + std::to_string(kMaxJsonDepth) +
               " levels deep; give the model's config.json as Hugging Face writes it");
    if (!duplicate.empty()) fail(origin, 0, "field '" + duplicate + "' is given twice; keep one");
    return model_from_hf(root, origin);
  } catch (const Json::parse_error& e) {
    fail(origin, 0, "invalid JSON (" + json_message(e) + "); fix the syntax");
  } catch (const Json::exception& e) {
    fail(origin, 0, "cannot read the Hugging Face config (" + json_message(e) + ")");
  }
}

}  // namespace parplan
