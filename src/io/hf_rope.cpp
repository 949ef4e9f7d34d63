#include "src/io/hf_rope.h"

#include "src/io/printable_text.h"

namespace parplan {

namespace {
using Json = nlohmann::json;

const Json* present(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}
}  // namespace

HfRope read_hf_rope(const Json& root, void (*fail)(const std::string&, const std::string&),
                    const std::string& origin) {
  HfRope rope;
  const auto base = [&](const Json& object, const std::string& where) {
    for (const char* key : {"rope_theta", "rotary_emb_base"})
      if (const Json* value = present(object, key)) {
        if (!value->is_number() || value->get<double>() < 1.0)
          fail(origin, "field '" + where + key + "' must be a number >= 1 (got " +
                           printable_text(value->dump()) + ")");
        return std::optional<double>(value->get<double>());
      }
    return std::optional<double>();
  };
  const std::optional<double> top = base(root, "");
  const Json* scaling = present(root, "rope_scaling");
  // transformers v5 keeps the base and the scaling in rope_parameters
  // ({"rope_theta": ..., "rope_type": "default" | "llama3" | ...}).
  if (const Json* parameters = present(root, "rope_parameters")) {
    if (!parameters->is_object())
      fail(origin,
           "field 'rope_parameters' must be an object such as {\"rope_type\": \"default\", "
           "\"rope_theta\": 10000} (got " +
               printable_text(parameters->dump()) + ")");
    const std::optional<double> inner = base(*parameters, "rope_parameters.");
    if (top && inner && *top != *inner)
      fail(origin, "fields 'rope_theta' and 'rope_parameters.rope_theta' disagree; keep one");
    if (inner) rope.theta = *inner, rope.theta_given = true;
    // No rope_type is transformers' "default" (no scaling).
    const Json* kind = present(*parameters, "rope_type");
    if (kind == nullptr) kind = present(*parameters, "type");
    const bool scaled = kind != nullptr && (!kind->is_string() || kind->get<std::string>() != "default");
    if (scaled && scaling != nullptr)
      fail(origin, "fields 'rope_scaling' and 'rope_parameters' both scale RoPE; keep one");
    if (scaled) scaling = parameters;
  }
  if (top) rope.theta = *top, rope.theta_given = true;
  if (scaling == nullptr) return rope;
  const std::string name = scaling == present(root, "rope_scaling") ? "rope_scaling" : "rope_parameters";
  if (!scaling->is_object())
    fail(origin, "field '" + name +
                     "' must be an object such as {\"rope_type\": \"llama3\", \"factor\": 8} (got " +
                     printable_text(scaling->dump()) + ")");
  const auto field = [&](const char* key, bool number) -> const Json* {
    const Json* value = present(*scaling, key);
    if (value != nullptr && (number ? !value->is_number() : !value->is_string()))
      fail(origin, "field '" + name + "." + key + "' must be a " + (number ? "number" : "string") + " (got " +
                       printable_text(value->dump()) + ")");
    return value;
  };
  const auto number = [&](const char* key, double fallback) {
    const Json* value = field(key, true);
    return value != nullptr ? value->get<double>() : fallback;
  };
  const Json* kind_field = field("rope_type", false);
  if (kind_field == nullptr) kind_field = field("type", false);
  const std::string kind = kind_field != nullptr ? kind_field->get<std::string>() : "?";
  if (kind == "default") return rope;  // no scaling
  // Megatron's llama3 scaling (rotary_pos_embedding.py _apply_scaling) fixes
  // low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings 8192.
  const bool megatron_llama3 = kind == "llama3" && number("low_freq_factor", 1.0) == 1.0 &&
                               number("high_freq_factor", 4.0) == 4.0 &&
                               number("original_max_position_embeddings", 8192) == 8192;
  const double factor = number("factor", 0.0);
  if (megatron_llama3 && factor >= 1.0)
    rope.llama3_factor = factor;
  else
    rope.unmodelled = "RoPE scaling '" + printable_text(kind) + "'";
  return rope;
}

}  // namespace parplan
