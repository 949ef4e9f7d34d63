#include "src/io/model_checks.h"

#include "src/io/input_error.h"

namespace parplan {

void model_fail(const std::string& origin, int line, const std::string& message) {
  std::string where = origin;
  if (line > 0) where += ":" + std::to_string(line);
  std::string text = where + ": " + message;
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  throw InputError(text);
}

void check_model_consistency(const ModelSpec& m, bool head_dim_given, const std::string& origin,
                             const ModelFieldNames& f) {
  if (!head_dim_given && m.hidden % m.heads != 0) {
    model_fail(origin, 0,
               "field '" + f.hidden + "' (" + std::to_string(m.hidden) + ") is not divisible by '" + f.heads +
                   "' (" + std::to_string(m.heads) + "): change one of them or give '" + f.head_dim + "'");
  }
  if (m.uses_mla() && m.head_dim <= m.qk_rope_head_dim) {
    model_fail(origin, 0,
               "field '" + f.head_dim + "' (" + std::to_string(m.head_dim) + ") must exceed '" +
                   f.qk_rope_head_dim + "' (" + std::to_string(m.qk_rope_head_dim) +
                   "): under MLA it is the whole query/key head, non-rotary plus rotary part");
  }
  if (m.heads % m.kv_groups != 0) {
    model_fail(origin, 0,
               "field '" + f.kv_groups + "' (" + std::to_string(m.kv_groups) + ") must divide '" + f.heads +
                   "' (" + std::to_string(m.heads) + ") evenly: give a divisor of the head count");
  }
  if (m.is_moe()) {
    if (m.top_k > m.experts) {
      model_fail(origin, 0,
                 "field '" + f.top_k + "' (" + std::to_string(m.top_k) + ") must not exceed '" + f.experts +
                     "' (" + std::to_string(m.experts) +
                     "): a token cannot be routed to more experts than exist");
    }
    if (m.first_dense_layers >= m.layers) {
      model_fail(origin, 0,
                 "field '" + f.first_dense_layers + "' (" + std::to_string(m.first_dense_layers) +
                     ") must be less than '" + f.layers + "' (" + std::to_string(m.layers) +
                     "): leave at least one MoE layer or drop the MoE block");
    }
  }
}

/// ffn_hidden defaults to 4h; fails when that does not fit an int.
int default_ffn_hidden(int hidden, const std::string& origin, const std::string& hidden_name) {
  const int64_t ffn = 4 * static_cast<int64_t>(hidden);
  if (ffn > kModelIntMax) {
    model_fail(origin, 0,
               "field '" + hidden_name + "' (" + std::to_string(hidden) +
                   ") is too large for the default FFN width 4*hidden: give the FFN width");
  }
  return static_cast<int>(ffn);
}

}  // namespace parplan
