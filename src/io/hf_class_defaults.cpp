#include "src/io/hf_class_defaults.h"

#include <string>
#include <utility>

namespace parplan {

nlohmann::json with_hf_class_defaults(nlohmann::json decoder) {
  if (!decoder.is_object() || decoder.value("model_type", "") != "gemma3_text") return decoder;
  // Gemma3TextConfig.__init__ (transformers
  // src/transformers/models/gemma3/configuration_gemma3.py, v4.50 to
  // d98ac17: the same defaults). rope_theta is the global layers' base
  // (1e6, not LlamaConfig's 1e4); sliding_window_pattern 6 is read where
  // the window is (hf_config.cpp); hidden_activation and
  // tie_word_embeddings are the gemma3_text type's own defaults there.
  const std::pair<const char*, nlohmann::json> defaults[] = {
      {"vocab_size", 262208},      {"hidden_size", 2304},
      {"intermediate_size", 9216}, {"num_hidden_layers", 26},
      {"num_attention_heads", 8},  {"num_key_value_heads", 4},
      {"head_dim", 256},           {"max_position_embeddings", 131072},
      {"rope_theta", 1000000.0},   {"sliding_window", 4096},
  };
  for (const auto& [key, value] : defaults) {
    const auto it = decoder.find(key);
    // transformers v5 files carry the base inside rope_parameters instead.
    if (std::string(key) == "rope_theta" && decoder.contains("rope_parameters")) continue;
    if (it == decoder.end() || it->is_null()) decoder[key] = value;
  }
  return decoder;
}

}  // namespace parplan
