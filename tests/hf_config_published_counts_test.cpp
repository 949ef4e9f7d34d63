// Hugging Face configs whose every weight the reader must count: GPT-OSS's
// (attention sinks, biases on the experts and the router, a per-layer window
// list, YaRN) reads as the catalog entry and names what parplan does not
// model; Qwen2's Q/K/V biases make its count exact to the parameter.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_support.h"
#include "cost/parameters.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

// openai/gpt-oss-120b config.json, the keys that shape the model.
std::string gpt_oss_120b_config() {
  std::string types;
  for (int i = 0; i < 36; ++i)
    types += std::string(i ? ", " : "") + (i % 2 ? "\"full_attention\"" : "\"sliding_attention\"");
  return R"({"model_type": "gpt_oss", "architectures": ["GptOssForCausalLM"], "attention_bias": true,
    "attention_dropout": 0.0, "experts_per_token": 4, "head_dim": 64, "hidden_act": "silu",
    "hidden_size": 2880, "initial_context_length": 4096, "intermediate_size": 2880,
    "layer_types": [)" +
         types + R"(], "max_position_embeddings": 131072, "num_attention_heads": 64,
    "num_experts_per_tok": 4, "num_hidden_layers": 36, "num_key_value_heads": 8,
    "num_local_experts": 128, "rms_norm_eps": 1e-05,
    "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                     "original_max_position_embeddings": 4096, "rope_type": "yarn", "truncate": false},
    "rope_theta": 150000, "router_aux_loss_coef": 0.9, "sliding_window": 128, "swiglu_limit": 7.0,
    "tie_word_embeddings": false, "vocab_size": 201088})";
}

TEST(HfConfigPublishedCounts, GptOssReadsAsTheCatalogEntry) {
  const ModelSpec hf = load_model(test::write_temp("gpt-oss-120b-config.json", gpt_oss_120b_config()));
  const ModelSpec catalog = load_model("gpt-oss-120b");
  EXPECT_EQ(total_params(hf, hf.max_positions), total_params(catalog, catalog.max_positions));
  EXPECT_EQ(active_params(hf, hf.max_positions), active_params(catalog, catalog.max_positions));
  // OpenAI's model card, Table 1: 116.83B in total.
  EXPECT_NEAR(total_params(hf, hf.max_positions) / 1e9, 116.83, 0.005);
  // Field by field as the catalog's (whose counts the model card pins).
  const auto shape = [](const ModelSpec& m) {
    return std::vector<int>{m.layers,          m.hidden,
                            m.heads,           m.kv_groups,
                            m.head_dim,        m.experts,
                            m.top_k,           m.expert_ffn_hidden,
                            m.sliding_window,  m.full_attention_layers,
                            m.attention_sinks, m.linear_bias,
                            m.tied_embeddings};
  };
  EXPECT_EQ(shape(hf), shape(catalog));
  EXPECT_EQ(hf.full_attention_layers, 18);
  // What a launch file would silently drop is named, so --emit refuses it.
  for (const char* feature : {"attention sinks", "yarn", "clamped SwiGLU"})
    EXPECT_NE(hf.unmodelled.find(feature), std::string::npos) << hf.unmodelled;
  EXPECT_NE(catalog.unmodelled.find("attention sinks"), std::string::npos) << catalog.unmodelled;
}

TEST(HfConfigPublishedCounts, SinksAndExpertBiasesAreCounted) {
  ModelSpec m = load_model("gpt-oss-20b");
  const double with = total_params(m, m.max_positions);
  m.attention_sinks = false;
  EXPECT_DOUBLE_EQ(with - total_params(m, m.max_positions), 24.0 * 64);  // a logit per head per layer
  m.linear_bias = false;
  // Per layer: the attention's q, k, v and output biases, the router's 32,
  // and each of the 32 experts' gate/up (2 x 2880) and down (2880) biases.
  const double biases = 24.0 * ((4096 + 2 * 512 + 2880) + 32 + 32 * (2 * 2880 + 2880));
  m.attention_sinks = true;
  EXPECT_DOUBLE_EQ(with - total_params(m, m.max_positions), biases);
}

TEST(HfConfigPublishedCounts, Qwen2QkvBiasesMakeTheCountExact) {
  // Qwen/Qwen2-7B config.json; its model.safetensors.index.json total_size,
  // 15 231 233 024 bytes in bf16, is 7 615 616 512 parameters.
  const ModelSpec m = load_model(test::write_temp("qwen2-7b-config.json", R"({"model_type": "qwen2",
    "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
    "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 131072,
    "tie_word_embeddings": false, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
    "sliding_window": 131072, "use_sliding_window": false, "hidden_act": "silu"})"));
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_FALSE(m.linear_bias);
  EXPECT_DOUBLE_EQ(total_params(m, m.max_positions), 7615616512.0);
}

// google/gemma-3-27b-pt and gemma-3-4b-pt config.json as published: the
// text_config names only what differs from Gemma3TextConfig (no vocab_size;
// the 4B no head counts), which transformers fills from the class.
std::string gemma3_config(const std::string& text_fields) {
  return R"({"architectures": ["Gemma3ForConditionalGeneration"], "boi_token_index": 255999,
    "eoi_token_index": 256000, "eos_token_id": [1, 106], "image_token_index": 262144,
    "initializer_range": 0.02, "mm_tokens_per_image": 256, "model_type": "gemma3",
    "text_config": {)" +
         text_fields + R"(, "model_type": "gemma3_text",
      "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024},
    "torch_dtype": "bfloat16", "vision_config": {"hidden_size": 1152, "image_size": 896,
      "intermediate_size": 4304, "model_type": "siglip_vision_model", "num_attention_heads": 16,
      "num_hidden_layers": 27, "patch_size": 14, "vision_use_head": false}})";
}

// The decoder's weights by hand: tied embedding, per layer q, k, v, o, the
// gated MLP's three matrices and four RMSNorms (Gemma3DecoderLayer), q/k
// norms of head_dim each, the final norm.
double gemma3_params(double vocab, double layers, double hidden, double heads, double kv, double head_dim,
                     double ffn) {
  const double q = heads * head_dim, k = kv * head_dim;
  return vocab * hidden +
         layers * (2 * hidden * q + 2 * hidden * k + 3 * hidden * ffn + 4 * hidden + 2 * head_dim) + hidden;
}

TEST(HfConfigPublishedCounts, Gemma3TakesTheClassDefaultsItsConfigLeavesOut) {
  const ModelSpec big = load_model(
      test::write_temp("gemma-3-27b-config.json",
                       gemma3_config(R"("head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504,
      "num_attention_heads": 32, "num_hidden_layers": 62, "num_key_value_heads": 16,
      "query_pre_attn_scalar": 168)")));
  EXPECT_EQ(big.vocab, 262208);  // Gemma3TextConfig vocab_size
  EXPECT_EQ(big.max_positions, 131072);
  EXPECT_EQ(big.sliding_window, 1024);
  EXPECT_EQ(big.full_attention_layers, 10);  // every 6th of 62 (sliding_window_pattern 6)
  EXPECT_TRUE(big.tied_embeddings);
  // Within the q/k/extra norms parplan leaves out (under 0.01 %).
  EXPECT_NEAR(total_params(big, big.max_positions) / gemma3_params(262208, 62, 5376, 32, 16, 128, 21504), 1.0,
              1e-4);
  const ModelSpec small = load_model(test::write_temp(
      "gemma-3-4b-config.json",
      gemma3_config(R"("hidden_size": 2560, "intermediate_size": 10240, "num_hidden_layers": 34)")));
  EXPECT_EQ(small.heads, 8);  // Gemma3TextConfig num_attention_heads, num_key_value_heads, head_dim
  EXPECT_EQ(small.kv_groups, 4);
  EXPECT_EQ(small.head_dim, 256);
  EXPECT_NEAR(total_params(small, small.max_positions) / gemma3_params(262208, 34, 2560, 8, 4, 256, 10240),
              1.0, 1e-4);
  for (const char* named : {"vision tower", "RoPE scaling 'linear'"})
    EXPECT_NE(big.unmodelled.find(named), std::string::npos) << big.unmodelled;
}

}  // namespace
}  // namespace parplan
