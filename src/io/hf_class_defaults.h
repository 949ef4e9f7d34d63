// Hugging Face configuration classes whose published config.json files
// leave fields to the class defaults: Gemma 3's text_config names only what
// differs from Gemma3TextConfig (google/gemma-3-4b-pt's gives no head
// counts, none of them a vocab_size), so transformers fills the rest from
// the class and parplan must do the same to read the checkpoint's shape.
#pragma once

#include <nlohmann/json.hpp>

namespace parplan {

/// `decoder` with each field its model_type's configuration class defaults
/// and the file leaves out (or sets to null) filled in; unchanged for a
/// model_type without such a table.
nlohmann::json with_hf_class_defaults(nlohmann::json decoder);

}  // namespace parplan
