#include "src/io/model_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "src/io/data_paths.h"
#include "src/io/input_error.h"

namespace parplan {
namespace {

using Json = nlohmann::json;

constexpr int64_t kIntMax = std::numeric_limits<int>::max();

// ---------------------------------------------------------------------------
// Messages

/// Keeps a message on one line (parser messages may quote input text).
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return text;
}

/// "file:line: message" (line omitted when unknown), as InputError.
[[noreturn]] void fail(const std::string& origin, int line, const std::string& message) {
  std::string where = origin;
  if (line > 0) where += ":" + std::to_string(line);
  throw InputError(one_line(where + ": " + message));
}

/// Short rendering of an offending value for "(got ...)".
std::string shorten(std::string text) {
  constexpr std::size_t kMax = 40;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return text;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// "did you mean 'x'?" for a near miss, else the list of accepted names.
std::string suggest(const std::string& key, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = 3;  // suggest only within two edits
  for (const auto& k : known) {
    const std::size_t d = edit_distance(key, k);
    if (d < best_distance) {
      best_distance = d;
      best = k;
    }
  }
  if (!best.empty()) return "did you mean '" + best + "'?";
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  return "accepted fields: " + list;
}

// ---------------------------------------------------------------------------
// Cross-field checks shared by both formats

/// Names of the fields as the input spelled them, for messages.
struct FieldNames {
  std::string layers = "layers";
  std::string hidden = "hidden";
  std::string ffn_hidden = "ffn_hidden";
  std::string heads = "heads";
  std::string kv_groups = "kv_groups";
  std::string head_dim = "head_dim";
  std::string qk_rope_head_dim = "mla.qk_rope_head_dim";
  std::string experts = "moe.experts";
  std::string top_k = "moe.top_k";
  std::string first_dense_layers = "moe.first_dense_layers";
};

void check_consistency(const ModelSpec& m, bool head_dim_given, const std::string& origin,
                       const FieldNames& f) {
  if (!head_dim_given && m.hidden % m.heads != 0) {
    fail(origin, 0,
         "field '" + f.hidden + "' (" + std::to_string(m.hidden) + ") is not divisible by '" + f.heads +
             "' (" + std::to_string(m.heads) + "): change one of them or give '" + f.head_dim + "'");
  }
  if (m.uses_mla() && m.head_dim <= m.qk_rope_head_dim) {
    fail(origin, 0,
         "field '" + f.head_dim + "' (" + std::to_string(m.head_dim) + ") must exceed '" +
             f.qk_rope_head_dim + "' (" + std::to_string(m.qk_rope_head_dim) +
             "): under MLA it is the whole query/key head, non-rotary plus rotary part");
  }
  if (m.heads % m.kv_groups != 0) {
    fail(origin, 0,
         "field '" + f.kv_groups + "' (" + std::to_string(m.kv_groups) + ") must divide '" + f.heads + "' (" +
             std::to_string(m.heads) + ") evenly: give a divisor of the head count");
  }
  if (m.is_moe()) {
    if (m.top_k > m.experts) {
      fail(origin, 0,
           "field '" + f.top_k + "' (" + std::to_string(m.top_k) + ") must not exceed '" + f.experts + "' (" +
               std::to_string(m.experts) + "): a token cannot be routed to more experts than exist");
    }
    if (m.first_dense_layers >= m.layers) {
      fail(origin, 0,
           "field '" + f.first_dense_layers + "' (" + std::to_string(m.first_dense_layers) +
               ") must be less than '" + f.layers + "' (" + std::to_string(m.layers) +
               "): leave at least one MoE layer or drop the MoE block");
    }
  }
}

/// ffn_hidden defaults to 4h; fails when that does not fit an int.
int default_ffn(int hidden, const std::string& origin, const std::string& hidden_name) {
  const int64_t ffn = 4 * static_cast<int64_t>(hidden);
  if (ffn > kIntMax) {
    fail(origin, 0,
         "field '" + hidden_name + "' (" + std::to_string(hidden) +
             ") is too large for the default FFN width 4*hidden: give the FFN width");
  }
  return static_cast<int>(ffn);
}

// ---------------------------------------------------------------------------
// YAML (models/*.yaml schema)

int line_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

/// What a YAML node is, for "(got ...)" when it is the wrong type.
std::string describe(const YAML::Node& node) {
  if (node.IsNull()) return "nothing";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  if (node.Tag() == "!") return "the quoted string '" + shorten(node.Scalar()) + "'";
  return "'" + shorten(node.Scalar()) + "'";
}

/// The fields of one YAML mapping, checked against the accepted names.
class YamlMap {
 public:
  YamlMap(const YAML::Node& node, std::string prefix, const std::vector<std::string>& known,
          const std::string& origin)
      : prefix_(std::move(prefix)), origin_(origin) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key = it->first;
      if (!key.IsScalar()) fail(origin_, line_of(key), "field names must be plain words");
      const std::string name = key.Scalar();
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        fail(origin_, line_of(key),
             "unknown field '" + prefix_ + name + "' (" + suggest(name, known) +
                 "); remove it or fix the spelling");
      }
      if (fields_.count(name) != 0) {
        fail(origin_, line_of(key), "field '" + prefix_ + name + "' is given twice; keep one");
      }
      fields_.emplace(name, it->second);
    }
  }

  bool has(const std::string& key) const { return fields_.count(key) != 0; }
  const YAML::Node& at(const std::string& key) const { return fields_.at(key); }
  std::string full(const std::string& key) const { return prefix_ + key; }

  [[noreturn]] void missing(const std::string& key, const std::string& what) const {
    fail(origin_, 0, "field '" + full(key) + "' is missing: give " + what);
  }

  /// An integer >= min_value (1: "positive", 0: "non-negative"), or nullopt if absent.
  std::optional<int64_t> integer(const std::string& key, int64_t min_value, int64_t max_value) const {
    if (!has(key)) return std::nullopt;
    const YAML::Node& node = at(key);
    const std::string kind = min_value > 0 ? "a positive integer" : "a non-negative integer";
    auto bad = [&](const std::string& got) -> void {
      fail(origin_, line_of(node), "field '" + full(key) + "' must be " + kind + " (got " + got + ")");
    };
    if (!node.IsScalar() || node.Tag() == "!") bad(describe(node));
    const std::string& text = node.Scalar();
    int64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec == std::errc::result_out_of_range) bad(shorten(text) + ", too large");
    if (ec != std::errc() || ptr != end) bad(describe(node));
    if (value < min_value) bad(text);
    if (value > max_value) bad(text + ", too large");
    return value;
  }

  int int_field(const std::string& key, int64_t min_value, int fallback) const {
    return static_cast<int>(integer(key, min_value, kIntMax).value_or(fallback));
  }

  int required_int(const std::string& key, const std::string& what) const {
    const auto value = integer(key, 1, kIntMax);
    if (!value) missing(key, what);
    return static_cast<int>(*value);
  }

  bool boolean(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    const YAML::Node& node = at(key);
    if (node.IsScalar() && node.Tag() != "!") {
      std::string text = node.Scalar();
      std::transform(text.begin(), text.end(), text.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (text == "true") return true;
      if (text == "false") return false;
    }
    fail(origin_, line_of(node),
         "field '" + full(key) + "' must be true or false (got " + describe(node) + ")");
  }

  std::optional<std::string> string(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const YAML::Node& node = at(key);
    if (!node.IsScalar() || node.Scalar().empty()) {
      fail(origin_, line_of(node),
           "field '" + full(key) + "' must be a text string (got " + describe(node) + ")");
    }
    return node.Scalar();
  }

  /// One of `choices`, or the first choice when absent.
  std::string choice(const std::string& key, const std::vector<std::string>& choices) const {
    if (!has(key)) return choices.front();
    const YAML::Node& node = at(key);
    if (node.IsScalar()) {
      for (const auto& c : choices) {
        if (node.Scalar() == c) return c;
      }
    }
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : " or ") + c;
    fail(origin_, line_of(node),
         "field '" + full(key) + "' must be " + list + " (got " + describe(node) + ")");
  }

  /// A nested mapping, or nullopt when absent.
  std::optional<YamlMap> block(const std::string& key, const std::vector<std::string>& known) const {
    if (!has(key)) return std::nullopt;
    const YAML::Node& node = at(key);
    if (!node.IsMap()) {
      fail(origin_, line_of(node),
           "field '" + full(key) + "' must be a mapping of sub-fields (got " + describe(node) + ")");
    }
    return YamlMap(node, full(key) + ".", known, origin_);
  }

 private:
  std::string prefix_;
  std::string origin_;
  std::map<std::string, YAML::Node> fields_;
};

const std::vector<std::string> kTopKeys = {
    "name",      "source",   "layers",          "hidden",        "ffn_hidden", "heads",
    "kv_groups", "head_dim", "vocab",           "max_positions", "gated_ffn",  "linear_bias",
    "norm",      "position", "tied_embeddings", "moe",           "mla"};
const std::vector<std::string> kMoeKeys = {"experts",        "top_k",          "expert_ffn_hidden",
                                           "moe_layer_freq", "shared_experts", "first_dense_layers",
                                           "mtp_layers",     "route_groups",   "route_group_topk",
                                           "aux_loss_free"};
const std::vector<std::string> kMlaKeys = {"q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "v_head_dim",
                                           "qk_nope_head_dim"};

ModelSpec model_from_yaml(const YAML::Node& root, const std::string& origin,
                          const std::string& default_name) {
  if (!root.IsDefined() || root.IsNull()) fail(origin, 0, "the file is empty: give the model's fields");
  if (!root.IsMap()) {
    fail(origin, line_of(root), "expected a mapping of model fields (layers, hidden, ...) at the top level");
  }
  const YamlMap top(root, "", kTopKeys, origin);
  ModelSpec m;
  m.name = top.string("name").value_or(default_name);
  if (!top.string("source")) top.missing("source", "the paper or config.json the numbers come from");
  m.layers = top.required_int("layers", "the number of transformer layers");
  m.hidden = top.required_int("hidden", "the model width");
  m.heads = top.required_int("heads", "the number of attention heads");
  m.vocab = top.integer("vocab", 1, std::numeric_limits<int64_t>::max()).value_or(0);
  if (m.vocab == 0) top.missing("vocab", "the vocabulary size");
  m.max_positions = top.required_int("max_positions", "the longest sequence the model supports");
  m.ffn_hidden = top.int_field("ffn_hidden", 1, 0);
  if (m.ffn_hidden == 0) m.ffn_hidden = default_ffn(m.hidden, origin, "hidden");
  m.kv_groups = top.int_field("kv_groups", 1, m.heads);
  bool head_dim_given = top.has("head_dim");
  m.head_dim = top.int_field("head_dim", 1, 0);
  m.gated_ffn = top.boolean("gated_ffn", false);
  m.linear_bias = top.boolean("linear_bias", true);
  m.norm =
      top.choice("norm", {"layernorm", "rmsnorm"}) == "rmsnorm" ? NormKind::kRmsNorm : NormKind::kLayerNorm;
  m.position =
      top.choice("position", {"learned", "rope"}) == "rope" ? PositionKind::kRope : PositionKind::kLearned;
  m.tied_embeddings = top.boolean("tied_embeddings", true);

  if (const auto moe = top.block("moe", kMoeKeys)) {
    m.experts = moe->required_int("experts", "the number of routed experts per MoE layer");
    m.top_k = moe->required_int("top_k", "the number of experts each token is routed to");
    m.expert_ffn_hidden = moe->int_field("expert_ffn_hidden", 1, m.ffn_hidden);
    m.moe_layer_freq = moe->int_field("moe_layer_freq", 1, 1);
    m.shared_experts = moe->int_field("shared_experts", 0, 0);
    m.first_dense_layers = moe->int_field("first_dense_layers", 0, 0);
    m.mtp_layers = moe->int_field("mtp_layers", 0, 0);
    m.route_groups = moe->int_field("route_groups", 0, 0);
    m.route_group_topk = moe->int_field("route_group_topk", 0, 0);
    m.aux_loss_free = moe->boolean("aux_loss_free", false);
  }
  if (const auto mla = top.block("mla", kMlaKeys)) {
    m.q_lora_rank = mla->int_field("q_lora_rank", 0, 0);
    m.kv_lora_rank = mla->required_int("kv_lora_rank", "the rank of the compressed key/value latent");
    m.qk_rope_head_dim = mla->required_int("qk_rope_head_dim", "the rotary part of a query/key head");
    m.v_head_dim = mla->required_int("v_head_dim", "the width of a value head");
    if (const auto nope = mla->integer("qk_nope_head_dim", 1, kIntMax)) {
      const int64_t qk_head = *nope + m.qk_rope_head_dim;
      if (head_dim_given && qk_head != m.head_dim) {
        fail(origin, line_of(mla->at("qk_nope_head_dim")),
             "field 'mla.qk_nope_head_dim' (" + std::to_string(*nope) + ") plus 'mla.qk_rope_head_dim' (" +
                 std::to_string(m.qk_rope_head_dim) + ") disagrees with 'head_dim' (" +
                 std::to_string(m.head_dim) + "), the whole query/key head under MLA: give one of them");
      }
      if (qk_head > kIntMax)
        fail(origin, line_of(mla->at("qk_nope_head_dim")), "field 'mla.qk_nope_head_dim' is too large");
      m.head_dim = static_cast<int>(qk_head);
      head_dim_given = true;
    }
    if (!head_dim_given) {
      fail(origin, 0,
           "field 'head_dim' is missing: with 'mla' give the query/key head width (non-rotary plus rotary "
           "part) or 'mla.qk_nope_head_dim'");
    }
  }
  if (!head_dim_given) m.head_dim = m.hidden / m.heads;
  check_consistency(m, head_dim_given, origin, FieldNames{});
  return m;
}

// ---------------------------------------------------------------------------
// Hugging Face config.json

enum class Family { kLlama, kGpt2, kGptNeox };

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
    const auto value = integer(keys, 1, kIntMax, &key);
    if (used != nullptr) *used = key;
    if (!value) missing(keys);
    return static_cast<int>(*value);
  }

  int optional_int(std::initializer_list<const char*> keys, int64_t min_value, int fallback,
                   std::string* used = nullptr) const {
    return static_cast<int>(integer(keys, min_value, kIntMax, used).value_or(fallback));
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

Family family_of(const HfConfig& hf, const std::optional<std::string>& model_type, bool* tied_default) {
  static const std::vector<std::string> kLlamaLike = {"llama", "mistral",     "mixtral",
                                                      "qwen2", "deepseek_v2", "deepseek_v3"};
  if (model_type) {
    if (*model_type == "gpt2") {
      *tied_default = true;
      return Family::kGpt2;
    }
    if (*model_type == "gpt_neox") {
      *tied_default = false;
      return Family::kGptNeox;
    }
    if (std::find(kLlamaLike.begin(), kLlamaLike.end(), *model_type) != kLlamaLike.end()) {
      *tied_default = false;
      return Family::kLlama;
    }
  }
  // Unknown or absent model_type: guess from the field names; HF's default is tied.
  *tied_default = true;
  if (hf.has({"n_embd", "n_layer", "n_head"})) return Family::kGpt2;
  if (hf.has({"rotary_pct", "use_parallel_residual"})) return Family::kGptNeox;
  return Family::kLlama;
}

ModelSpec model_from_hf(const Json& root, const std::string& origin) {
  if (!root.is_object()) {
    fail(origin, 0,
         "a Hugging Face config.json must be a JSON object {...} (got " + shorten(root.dump()) + ")");
  }
  const HfConfig hf(root, origin);
  FieldNames names;
  ModelSpec m;
  m.name = origin;

  bool tied_default = true;
  const Family family = family_of(hf, hf.string("model_type"), &tied_default);

  m.layers = hf.required_int({"num_hidden_layers", "n_layer", "num_layers"}, &names.layers);
  m.hidden = hf.required_int({"hidden_size", "n_embd", "d_model"}, &names.hidden);
  m.heads = hf.required_int({"num_attention_heads", "n_head"}, &names.heads);
  m.vocab = hf.integer({"vocab_size"}, 1, std::numeric_limits<int64_t>::max()).value_or(0);
  if (m.vocab == 0) hf.missing({"vocab_size"});
  m.max_positions = hf.required_int({"max_position_embeddings", "n_positions", "n_ctx"});
  m.ffn_hidden = hf.optional_int({"intermediate_size", "n_inner"}, 1, 0, &names.ffn_hidden);
  if (m.ffn_hidden == 0) m.ffn_hidden = default_ffn(m.hidden, origin, names.hidden);
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
      break;
    case Family::kGptNeox:
      // Rotary on rotary_pct of each head; the parallel residual changes no counts.
      hf.number("rotary_pct");
      hf.boolean("use_parallel_residual");
      m.gated_ffn = false;
      m.linear_bias = true;
      m.norm = NormKind::kLayerNorm;
      m.position = PositionKind::kRope;
      break;
    case Family::kLlama:
      m.gated_ffn = true;
      m.linear_bias = hf.boolean("attention_bias").value_or(false) || hf.boolean("mlp_bias").value_or(false);
      m.norm = NormKind::kRmsNorm;
      m.position = PositionKind::kRope;
      break;
  }

  // Mixture of experts: Mixtral (num_local_experts) or DeepSeek (n_routed_experts).
  std::string experts_key;
  if (const auto experts = hf.integer({"num_local_experts", "n_routed_experts"}, 1, kIntMax, &experts_key)) {
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
    } else {
      m.expert_ffn_hidden = m.ffn_hidden;
      names.first_dense_layers = "first_dense_layers";
    }
  }

  // Multi-head latent attention (DeepSeek-V2/V3).
  if (const auto kv_lora = hf.integer({"kv_lora_rank"}, 1, kIntMax)) {
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
  check_consistency(m, head_dim_given, origin, names);
  return m;
}

// ---------------------------------------------------------------------------
// Files

std::string read_file(const std::filesystem::path& path, const std::string& origin) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || in.bad()) fail(origin, 0, "cannot read the file: check that it exists and is readable");
  return text.str();
}

bool ends_with_json(const std::string& path) {
  if (path.size() < 5) return false;
  std::string tail = path.substr(path.size() - 5);
  std::transform(tail.begin(), tail.end(), tail.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return tail == ".json";
}

bool looks_like_json(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return false;
  return Json::accept(text);
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

/// The catalog entry first for a bare name (catalog names such as gpt-1.7b carry a
/// dot, which resolve_catalog_file would take for a file extension), else
/// resolve_catalog_file's rules and errors.
std::filesystem::path locate(const std::string& name_or_path) {
  std::error_code ec;
  if (!name_or_path.empty() && name_or_path.find('/') == std::string::npos &&
      !std::filesystem::is_regular_file(name_or_path, ec)) {
    const auto in_catalog = data_dir() / "models" / (name_or_path + ".yaml");
    if (std::filesystem::is_regular_file(in_catalog, ec)) return in_catalog;
  }
  return resolve_catalog_file("models", name_or_path, "--model");
}

}  // namespace

ModelSpec parse_model_yaml(const std::string& text, const std::string& origin,
                           const std::string& default_name) {
  try {
    const YAML::Node root = YAML::Load(text);
    return model_from_yaml(root, origin, default_name);
  } catch (const InputError&) {
    throw;
  } catch (const YAML::Exception& e) {
    const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    fail(origin, line, "invalid YAML (" + e.msg + "); fix the syntax");
  } catch (const std::exception& e) {
    fail(origin, 0, std::string("cannot read the model (") + e.what() + ")");
  }
}

ModelSpec parse_hf_config(const std::string& text, const std::string& origin) {
  try {
    const Json root = Json::parse(text);
    return model_from_hf(root, origin);
  } catch (const InputError&) {
    throw;
  } catch (const Json::parse_error& e) {
    fail(origin, 0, "invalid JSON (" + json_message(e) + "); fix the syntax");
  } catch (const Json::exception& e) {
    fail(origin, 0, "cannot read the Hugging Face config (" + json_message(e) + ")");
  } catch (const std::exception& e) {
    fail(origin, 0, std::string("cannot read the Hugging Face config (") + e.what() + ")");
  }
}

ModelSpec load_model(const std::string& name_or_path) {
  const std::filesystem::path path = locate(name_or_path);
  // A file given by path is named as the user wrote it; a catalog entry as models/NAME.yaml.
  const bool from_catalog = path.string() != name_or_path;
  const std::string origin = from_catalog ? "models/" + path.filename().string() : name_or_path;
  const std::string text = read_file(path, origin);
  if (ends_with_json(path.string()) || looks_like_json(text)) return parse_hf_config(text, origin);
  return parse_model_yaml(text, origin, path.stem().string());
}

}  // namespace parplan
