// A Hugging Face config's RoPE settings: rope_theta and rope_scaling, or
// transformers v5's rope_parameters object that holds both.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace parplan {

struct HfRope {
  double theta = 10000.0;  ///< the base (transformers' default)
  bool theta_given = false;
  /// Megatron's llama3 scaling factor (> 0) when the config's scaling is
  /// what Megatron implements; 0 otherwise.
  double llama3_factor = 0.0;
  /// The scaling parplan does not model ("RoPE scaling 'yarn'"); empty when
  /// none or llama3.
  std::string unmodelled;
};

/// Reads `root`'s rope_theta (GPT-NeoX: rotary_emb_base), rope_scaling and
/// rope_parameters; calls `fail` with a message naming the field when they
/// are malformed or contradict each other (it must not return).
HfRope read_hf_rope(const nlohmann::json& root,
                    void (*fail)(const std::string& origin, const std::string& message),
                    const std::string& origin);

}  // namespace parplan
