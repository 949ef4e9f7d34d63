#include "src/io/model_checks.h"

#include "src/io/input_error.h"
#include "src/io/printable_text.h"

namespace parplan {

void model_fail(const std::string& origin, int line, const std::string& message) {
  std::string where = origin;
  if (line > 0) where += ":" + std::to_string(line);
  std::string text = where + ": " + message;
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  // A control byte the parser quotes back (a NUL) would cut the line.
  throw InputError(printable_line(text));
}

namespace {
// Group-limited routing (DeepSeek's n_group / topk_group, Megatron's
// --moe-router-num-groups / --moe-router-group-topk): the experts split
// evenly into the groups, a token keeps at most all groups, and the groups
// it keeps hold at least its top-k experts.
void check_route_groups(const ModelSpec& m, const std::string& origin, const ModelFieldNames& f) {
  const auto n = [](int v) { return std::to_string(v); };
  if (m.route_groups == 0) {
    if (m.route_group_topk > 0)
      model_fail(origin, 0,
                 "field '" + f.route_group_topk + "' (" + n(m.route_group_topk) + ") needs '" +
                     f.route_groups + "': give the number of routing groups or drop it");
    return;
  }
  if (m.experts % m.route_groups != 0)
    model_fail(origin, 0,
               "field '" + f.route_groups + "' (" + n(m.route_groups) + ") must divide '" + f.experts +
                   "' (" + n(m.experts) + "): every routing group holds the same number of experts");
  if (m.route_group_topk > m.route_groups)
    model_fail(origin, 0,
               "field '" + f.route_group_topk + "' (" + n(m.route_group_topk) + ") must not exceed '" +
                   f.route_groups + "' (" + n(m.route_groups) +
                   "): a token cannot keep more groups than exist");
  if (m.route_group_topk > 0 &&
      static_cast<long long>(m.route_group_topk) * (m.experts / m.route_groups) < m.top_k)
    model_fail(origin, 0,
               "field '" + f.route_group_topk + "' (" + n(m.route_group_topk) + ") keeps " +
                   n(m.route_group_topk * (m.experts / m.route_groups)) + " experts, fewer than '" + f.top_k +
                   "' (" + n(m.top_k) + "): raise it or lower the top-k");
}
}  // namespace

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
    check_route_groups(m, origin, f);
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
