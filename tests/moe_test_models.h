// Shared by the MoE cost tests: a fine-grained expert block.
#pragma once

#include "cost/spec/model_spec.h"
#include "src/io/model_loader.h"

namespace parplan::moe_test {

/// Qwen3-30B-A3B's expert block (Qwen/Qwen3-30B-A3B config.json: 128
/// experts of 768 columns, top-8, hidden 2048) on Mixtral's other fields.
inline ModelSpec small_experts() {
  ModelSpec m = load_model("mixtral-8x7b");
  m.hidden = 2048;
  m.experts = 128;
  m.top_k = 8;
  m.expert_ffn_hidden = 768;
  return m;
}

}  // namespace parplan::moe_test
