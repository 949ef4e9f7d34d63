// Shared by the MoE cost tests: a fine-grained expert block.
#pragma once

#include "cost/moe.h"
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

/// 8192 tokens per rank over ep 8 (16 of small_experts' 128 experts per
/// rank), 16-bit or fp8; the tests set the fp8 recipe's flags.
inline MoeShape eight_k_tokens_ep8(bool fp8) {
  MoeShape s;
  s.tokens = 8192;
  s.ep = 8;
  s.fp8 = fp8;
  return s;
}

}  // namespace parplan::moe_test
