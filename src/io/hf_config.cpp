// The Hugging Face config.json reader: a table {model_type -> family,
// defaults}; an unknown model_type is refused with the supported ones.
#include <algorithm>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/io/input_error.h"
#include "src/io/model_checks.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

using Json = nlohmann::json;

[[noreturn]] void fail(const std::string& origin, int line, const std::string& message) {
  model_fail(origin, line, message);
}

std::string shorten(std::string text) {
  constexpr std::size_t kMax = 40;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

class HfConfig {
 public:
  HfConfig(const Json& root, const std::string& origin) : root_(root), origin_(origin) {}

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
           "field '" + key + "' must be " + kind + " (got " + shorten(value->dump()) + extra + ")");
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
           std::string("field '") + key + "' must be true or false (got " + shorten(value->dump()) + ")");
    }
    return value->get<bool>();
  }

  std::optional<std::string> string(const char* key) const {
    const Json* value = find({key});
    if (value == nullptr) return std::nullopt;
    if (!value->is_string()) {
      fail(origin_, 0,
           std::string("field '") + key + "' must be a string (got " + shorten(value->dump()) + ")");
    }
    return value->get<std::string>();
  }

  void number(const char* key) const {
    const Json* value = find({key});
    if (value != nullptr && !value->is_number()) {
      fail(origin_, 0,
           std::string("field '") + key + "' must be a number (got " + shorten(value->dump()) + ")");
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
  bool tied_default;       // tie_word_embeddings when the file does not say
  const char* unmodelled;  // "" when everything that changes cost is modelled
};

// Defaults from each model's configuration class in Hugging Face
// transformers (models/<type>/configuration_<type>.py, tie_word_embeddings).
constexpr HfType kHfTypes[] = {
    {"llama", Family::kLlama, false, ""},
    {"mistral", Family::kLlama, false, ""},
    {"mixtral", Family::kLlama, false, ""},
    {"qwen2", Family::kLlama, false, ""},
    {"qwen2_moe", Family::kLlama, false, ""},
    {"qwen3", Family::kLlama, false, ""},
    {"qwen3_moe", Family::kLlama, false, ""},
    {"deepseek_v2", Family::kLlama, false, ""},
    {"deepseek_v3", Family::kLlama, false, ""},
    {"phi3", Family::kLlama, false, ""},
    {"gemma2", Family::kLlama, true, "GeGLU (tanh) activation, sliding-window attention, logit soft-capping"},
    {"gemma3_text", Family::kLlama, true, "GeGLU (tanh) activation, sliding-window attention"},
    {"gpt2", Family::kGpt2, true, ""},
    {"gpt_neox", Family::kGptNeox, false, ""},
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
         "field 'model_type' is '" + shorten(*model_type) + "', which parplan cannot read; supported: " +
             supported_types() + " (or write a model YAML, see models/)");
  }
  if (hf.has({"n_embd", "n_layer", "n_head"})) return *find_type("gpt2");
  if (hf.has({"rotary_pct", "use_parallel_residual"})) return *find_type("gpt_neox");
  HfType llama = *find_type("llama");
  llama.tied_default = true;  // transformers' PretrainedConfig default
  return llama;
}

ModelSpec model_from_hf(const Json& root, const std::string& origin) {
  if (!root.is_object()) {
    fail(origin, 0,
         "a Hugging Face config.json must be a JSON object {...} (got " + shorten(root.dump()) + ")");
  }
  const HfConfig hf(root, origin);
  ModelFieldNames names;
  ModelSpec m;
  m.name = origin;

  const HfType type = type_of(hf, hf.string("model_type"), origin);
  const Family family = type.family;
  const bool tied_default = type.tied_default;
  m.unmodelled = type.unmodelled;

  m.layers = hf.required_int({"num_hidden_layers", "n_layer", "num_layers"}, &names.layers);
  m.hidden = hf.required_int({"hidden_size", "n_embd", "d_model"}, &names.hidden);
  m.heads = hf.required_int({"num_attention_heads", "n_head"}, &names.heads);
  m.vocab = hf.integer({"vocab_size"}, 1, std::numeric_limits<int64_t>::max()).value_or(0);
  if (m.vocab == 0) hf.missing({"vocab_size"});
  m.max_positions = hf.required_int({"max_position_embeddings", "n_positions", "n_ctx"});
  m.ffn_hidden = hf.optional_int({"intermediate_size", "n_inner"}, 1, 0, &names.ffn_hidden);
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

  // Mixture of experts: Mixtral (num_local_experts), DeepSeek (n_routed_experts)
  // or Qwen-MoE (num_experts).
  std::string experts_key;
  if (const auto experts = hf.integer({"num_local_experts", "n_routed_experts", "num_experts"}, 1,
                                      kModelIntMax, &experts_key)) {
    names.experts = experts_key;
    m.experts = static_cast<int>(*experts);
    m.top_k = hf.required_int({"num_experts_per_tok"}, &names.top_k);
    if (experts_key == "n_routed_experts") {
      m.expert_ffn_hidden = hf.required_int({"moe_intermediate_size"});
      m.shared_experts = hf.optional_int({"n_shared_experts"}, 0, 0);
      m.first_dense_layers = hf.optional_int({"first_k_dense_replace"}, 0, 0, &names.first_dense_layers);
      m.moe_layer_freq = hf.optional_int({"moe_layer_freq"}, 1, 1);
      m.mtp_layers = hf.optional_int({"num_nextn_predict_layers"}, 0, 0);
      m.route_groups = hf.optional_int({"n_group"}, 0, 0);
      m.route_group_topk = hf.optional_int({"topk_group"}, 0, 0);
      m.aux_loss_free = hf.string("scoring_func").value_or("softmax") == "sigmoid";
    } else if (experts_key == "num_experts") {
      m.expert_ffn_hidden = hf.required_int({"moe_intermediate_size"});
      // Qwen2-MoE: one shared expert of shared_expert_intermediate_size,
      // counted as that many expert widths.
      const int shared_width = hf.optional_int({"shared_expert_intermediate_size"}, 0, 0);
      m.shared_experts = shared_width / m.expert_ffn_hidden;
      m.moe_layer_freq = hf.optional_int({"decoder_sparse_step"}, 1, 1);
      names.first_dense_layers = "first_dense_layers";
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
std::string json_message(const std::exception& e) {
  std::string what = e.what();
  if (!what.empty() && what.front() == '[') {
    const auto close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
  }
  return what;
}

}  // namespace

ModelSpec parse_hf_config(const std::string& text, const std::string& origin) {
  try {
    // nlohmann keeps the last of duplicate keys: refuse them instead.
    std::vector<std::vector<std::string>> keys_by_depth;
    std::string duplicate;
    const Json::parser_callback_t no_duplicates = [&](int depth, Json::parse_event_t event, Json& parsed) {
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
    if (!duplicate.empty()) fail(origin, 0, "field '" + duplicate + "' is given twice; keep one");
    return model_from_hf(root, origin);
  } catch (const Json::parse_error& e) {
    fail(origin, 0, "invalid JSON (" + json_message(e) + "); fix the syntax");
  } catch (const Json::exception& e) {
    fail(origin, 0, "cannot read the Hugging Face config (" + json_message(e) + ")");
  }
}

}  // namespace parplan
