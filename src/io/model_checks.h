// What the model YAML and Hugging Face config.json readers share: one-line
// messages naming the file, and the cross-field checks of a ModelSpec.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "cost/spec/model_spec.h"

namespace parplan {

inline constexpr int64_t kModelIntMax = std::numeric_limits<int>::max();

/// Throws InputError "origin[:line]: message" on one line.
[[noreturn]] void model_fail(const std::string& origin, int line, const std::string& message);

/// Names of the fields as the input spelled them, for messages.
struct ModelFieldNames {
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
  std::string route_groups = "moe.route_groups";
  std::string route_group_topk = "moe.route_group_topk";
};

/// Cross-field rules (heads divide, kv groups divide heads, top-k <= experts...).
void check_model_consistency(const ModelSpec& m, bool head_dim_given, const std::string& origin,
                             const ModelFieldNames& names);

/// ffn_hidden's default 4h; fails when that does not fit an int.
int default_ffn_hidden(int hidden, const std::string& origin, const std::string& hidden_name);

}  // namespace parplan
