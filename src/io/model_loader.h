// Model loader: turns a catalog name, a model YAML file (models/*.yaml schema) or a
// Hugging Face config.json into a validated ModelSpec. Bad input throws InputError.
#pragma once

#include <string>

#include "cost/spec/model_spec.h"

namespace parplan {

/// Loads a model given to --model: a catalog name (models/NAME.yaml), a path to a
/// model YAML, or a path to a Hugging Face config.json (a `.json` path, or any
/// file whose content is a JSON object). Throws InputError, one line naming the
/// file and the field, on any bad input.
///
/// For multi-head latent attention (DeepSeek-V2/V3) head_dim is the whole
/// query/key head, qk_nope_head_dim + qk_rope_head_dim (HF's qk_head_dim, 192 for
/// DeepSeek-V3); a value head is v_head_dim wide.
ModelSpec load_model(const std::string& name_or_path);

/// Parses the text of a model YAML. `origin` names the file in error messages;
/// `default_name` is used when the document has no `name:`.
ModelSpec parse_model_yaml(const std::string& text, const std::string& origin,
                           const std::string& default_name);

/// Parses the text of a Hugging Face config.json (LLaMA, Mistral/Mixtral, GPT-2,
/// GPT-NeoX, DeepSeek-V2/V3 field names; unknown keys are ignored). `origin`
/// names the file in error messages and becomes the model's name.
ModelSpec parse_hf_config(const std::string& text, const std::string& origin);

}  // namespace parplan
