// Tests for the model catalog (models/*.yaml) and the model loader (YAML and
// Hugging Face config.json). Expected numbers come from the papers and the
// published config.json files named in each test, never from the loader.
#include "src/io/model_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <regex>
#include <string>
#include <vector>

#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "tests/model_yaml_fixture.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;
using test::TempFile;

/// A file in a private temp directory, removed at the end of the test.
// ---------------------------------------------------------------------------
// The catalog

TEST(ModelLoaderCatalog, HoldsEveryModelOfTheBrief) {
  const std::vector<std::string> expected = {
      "gpt-1.7b",   "gpt-3.6b",   "gpt-7.5b",   "gpt-18.4b",   "gpt-39.1b",    "gpt-76.1b",
      "gpt-145.6b", "gpt-310.1b", "gpt-529.6b", "gpt-1t",      "gpt3-175b",    "gpt-22b",
      "gpt-20b",    "llama3-8b",  "llama3-70b", "llama3-405b", "mixtral-8x7b", "deepseek-v3"};
  const auto names = catalog_names("models");
  for (const auto& name : expected) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name << " missing from models/";
  }
}

TEST(ModelLoaderCatalog, EveryFileLoadsAndIsNamedAfterItsFile) {
  const auto names = catalog_names("models");
  ASSERT_FALSE(names.empty());
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    ModelSpec m;
    ASSERT_NO_THROW(m = load_model(name));
    EXPECT_EQ(m.name, name);
    EXPECT_GT(m.layers, 0);
    EXPECT_GT(m.hidden, 0);
    EXPECT_GT(m.ffn_hidden, 0);
    EXPECT_GT(m.heads, 0);
    EXPECT_GT(m.head_dim, 0);
    EXPECT_GT(m.vocab, 0);
    EXPECT_GT(m.max_positions, 0);
    EXPECT_EQ(m.heads % m.kv_groups, 0);
    // Loading by path gives the same model as loading by name.
    const ModelSpec by_path = load_model((data_dir() / "models" / (name + ".yaml")).string());
    EXPECT_EQ(by_path.layers, m.layers);
    EXPECT_EQ(by_path.hidden, m.hidden);
  }
}

// Narayanan et al. 2021 (SC21), Table 1: heads, hidden, layers and the
// parameter count in billions; all with sequence 2048 and vocabulary 51200.
struct Table1Row {
  const char* name;
  int heads;
  int hidden;
  int layers;
  double billions;
};
constexpr Table1Row kTable1[] = {
    {"gpt-1.7b", 24, 2304, 24, 1.7},        {"gpt-3.6b", 32, 3072, 30, 3.6},
    {"gpt-7.5b", 32, 4096, 36, 7.5},        {"gpt-18.4b", 48, 6144, 40, 18.4},
    {"gpt-39.1b", 64, 8192, 48, 39.1},      {"gpt-76.1b", 80, 10240, 60, 76.1},
    {"gpt-145.6b", 96, 12288, 80, 145.6},   {"gpt-310.1b", 128, 16384, 96, 310.1},
    {"gpt-529.6b", 128, 20480, 105, 529.6}, {"gpt-1t", 160, 25600, 128, 1008.0},
};

TEST(ModelLoaderCatalog, NarayananTable1Models) {
  for (const auto& row : kTable1) {
    SCOPED_TRACE(row.name);
    const ModelSpec m = load_model(row.name);
    EXPECT_EQ(m.heads, row.heads);
    EXPECT_EQ(m.hidden, row.hidden);
    EXPECT_EQ(m.layers, row.layers);
    EXPECT_EQ(m.kv_groups, row.heads);
    EXPECT_EQ(m.head_dim, row.hidden / row.heads);
    EXPECT_EQ(m.ffn_hidden, 4 * row.hidden);
    EXPECT_EQ(m.vocab, 51200);
    EXPECT_EQ(m.max_positions, 2048);
    EXPECT_FALSE(m.gated_ffn);
    EXPECT_TRUE(m.linear_bias);
    EXPECT_TRUE(m.tied_embeddings);
    EXPECT_EQ(m.norm, NormKind::kLayerNorm);
    EXPECT_EQ(m.position, PositionKind::kLearned);
    EXPECT_FALSE(m.is_moe());
    EXPECT_FALSE(m.uses_mla());
    // The paper's Section 5.1 count P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h))
    // reproduces the table's column to its one decimal (the paper rounds).
    const double l = m.layers, h = m.hidden, V = m.vocab, s = m.max_positions;
    const double params = 12.0 * l * h * h * (1.0 + 13.0 / (12.0 * h) + (V + s) / (12.0 * l * h));
    EXPECT_NEAR(params / 1e9, row.billions, 0.051);
  }
}

TEST(ModelLoaderCatalog, Gpt3And22BAndNeox20B) {
  // Brown et al. 2020 Table 2.1; vocab 51200 as Megatron-LM runs it.
  const ModelSpec gpt3 = load_model("gpt3-175b");
  EXPECT_EQ(gpt3.layers, 96);
  EXPECT_EQ(gpt3.hidden, 12288);
  EXPECT_EQ(gpt3.heads, 96);
  EXPECT_EQ(gpt3.head_dim, 128);
  EXPECT_EQ(gpt3.ffn_hidden, 4 * 12288);
  EXPECT_EQ(gpt3.vocab, 51200);
  EXPECT_EQ(gpt3.max_positions, 2048);
  EXPECT_TRUE(gpt3.tied_embeddings);
  EXPECT_EQ(gpt3.position, PositionKind::kLearned);

  // Korthikanti et al. 2022 Table 3.
  const ModelSpec g22 = load_model("gpt-22b");
  EXPECT_EQ(g22.layers, 48);
  EXPECT_EQ(g22.hidden, 6144);
  EXPECT_EQ(g22.heads, 64);
  EXPECT_EQ(g22.vocab, 51200);
  EXPECT_EQ(g22.max_positions, 2048);

  // EleutherAI/gpt-neox-20b config.json.
  const ModelSpec neox = load_model("gpt-20b");
  EXPECT_EQ(neox.layers, 44);
  EXPECT_EQ(neox.hidden, 6144);
  EXPECT_EQ(neox.heads, 64);
  EXPECT_EQ(neox.ffn_hidden, 24576);
  EXPECT_EQ(neox.vocab, 50432);
  EXPECT_EQ(neox.max_positions, 2048);
  EXPECT_EQ(neox.position, PositionKind::kRope);
  EXPECT_EQ(neox.norm, NormKind::kLayerNorm);
  EXPECT_FALSE(neox.tied_embeddings);
  EXPECT_TRUE(neox.linear_bias);
  EXPECT_FALSE(neox.gated_ffn);
}

TEST(ModelLoaderCatalog, Llama3FromTheirConfigJson) {
  // meta-llama/Meta-Llama-3-8B config.json.
  const ModelSpec l8 = load_model("llama3-8b");
  EXPECT_EQ(l8.layers, 32);
  EXPECT_EQ(l8.hidden, 4096);
  EXPECT_EQ(l8.ffn_hidden, 14336);
  EXPECT_EQ(l8.heads, 32);
  EXPECT_EQ(l8.kv_groups, 8);
  EXPECT_EQ(l8.head_dim, 128);
  EXPECT_EQ(l8.vocab, 128256);
  EXPECT_EQ(l8.max_positions, 8192);
  EXPECT_TRUE(l8.gated_ffn);
  EXPECT_FALSE(l8.linear_bias);
  EXPECT_FALSE(l8.tied_embeddings);
  EXPECT_EQ(l8.norm, NormKind::kRmsNorm);
  EXPECT_EQ(l8.position, PositionKind::kRope);

  // meta-llama/Meta-Llama-3-70B config.json.
  const ModelSpec l70 = load_model("llama3-70b");
  EXPECT_EQ(l70.layers, 80);
  EXPECT_EQ(l70.hidden, 8192);
  EXPECT_EQ(l70.ffn_hidden, 28672);
  EXPECT_EQ(l70.heads, 64);
  EXPECT_EQ(l70.kv_groups, 8);
  EXPECT_EQ(l70.vocab, 128256);
  EXPECT_EQ(l70.max_positions, 8192);

  // meta-llama/Llama-3.1-405B config.json; Llama 3 paper Table 3.
  const ModelSpec l405 = load_model("llama3-405b");
  EXPECT_EQ(l405.layers, 126);
  EXPECT_EQ(l405.hidden, 16384);
  EXPECT_EQ(l405.ffn_hidden, 53248);
  EXPECT_EQ(l405.heads, 128);
  EXPECT_EQ(l405.kv_groups, 8);
  EXPECT_EQ(l405.vocab, 128256);
  EXPECT_EQ(l405.max_positions, 131072);
}

TEST(ModelLoaderCatalog, MixtralFromItsConfigJson) {
  // mistralai/Mixtral-8x7B-v0.1 config.json.
  const ModelSpec m = load_model("mixtral-8x7b");
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_groups, 8);
  EXPECT_EQ(m.vocab, 32000);
  EXPECT_EQ(m.max_positions, 32768);
  EXPECT_TRUE(m.is_moe());
  EXPECT_EQ(m.experts, 8);
  EXPECT_EQ(m.top_k, 2);
  EXPECT_EQ(m.expert_ffn_hidden, 14336);
  EXPECT_EQ(m.moe_layer_freq, 1);
  EXPECT_EQ(m.shared_experts, 0);
  EXPECT_EQ(m.first_dense_layers, 0);
  EXPECT_FALSE(m.uses_mla());
}

TEST(ModelLoaderCatalog, DeepSeekV3FromItsConfigJson) {
  // deepseek-ai/DeepSeek-V3 config.json.
  const ModelSpec m = load_model("deepseek-v3");
  EXPECT_EQ(m.layers, 61);
  EXPECT_EQ(m.hidden, 7168);
  EXPECT_EQ(m.ffn_hidden, 18432);
  EXPECT_EQ(m.heads, 128);
  EXPECT_EQ(m.kv_groups, 128);
  EXPECT_EQ(m.vocab, 129280);
  EXPECT_EQ(m.max_positions, 163840);
  EXPECT_EQ(m.experts, 256);
  EXPECT_EQ(m.top_k, 8);
  EXPECT_EQ(m.expert_ffn_hidden, 2048);
  EXPECT_EQ(m.shared_experts, 1);
  EXPECT_EQ(m.first_dense_layers, 3);
  EXPECT_EQ(m.moe_layer_freq, 1);
  EXPECT_TRUE(m.uses_mla());
  EXPECT_EQ(m.q_lora_rank, 1536);
  EXPECT_EQ(m.kv_lora_rank, 512);
  EXPECT_EQ(m.qk_rope_head_dim, 64);
  EXPECT_EQ(m.head_dim, 128 + 64);  // qk_nope_head_dim + qk_rope_head_dim
  EXPECT_EQ(m.v_head_dim, 128);
  EXPECT_FALSE(m.tied_embeddings);
}

// ---------------------------------------------------------------------------
// Hugging Face config.json, one per family (values of the published configs)

constexpr const char* kLlama3_8bJson = R"({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "bos_token_id": 128000,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "intermediate_size": 14336,
  "max_position_embeddings": 8192,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "rope_theta": 500000.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "vocab_size": 128256
})";

TEST(ModelLoaderHf, Llama) {
  TempFile file("config.json", kLlama3_8bJson);
  const ModelSpec m = load_model(file.path());
  EXPECT_EQ(m.name, file.path());
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.ffn_hidden, 14336);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_groups, 8);
  EXPECT_EQ(m.head_dim, 128);  // 4096 / 32, no head_dim key
  EXPECT_EQ(m.vocab, 128256);
  EXPECT_EQ(m.max_positions, 8192);
  EXPECT_TRUE(m.gated_ffn);
  EXPECT_FALSE(m.linear_bias);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);
  EXPECT_EQ(m.position, PositionKind::kRope);
  EXPECT_FALSE(m.is_moe());

  // The same numbers as the catalog entry that cites this config.
  const ModelSpec catalog = load_model("llama3-8b");
  EXPECT_EQ(catalog.layers, m.layers);
  EXPECT_EQ(catalog.ffn_hidden, m.ffn_hidden);
  EXPECT_EQ(catalog.kv_groups, m.kv_groups);
  EXPECT_EQ(catalog.vocab, m.vocab);
}

TEST(ModelLoaderHf, LlamaExplicitHeadDimAndContentDetection) {
  // A Llama 3.1 style config with "head_dim", in a file not named .json.
  TempFile file("llama31-8b.cfg", R"({"model_type": "llama", "head_dim": 128, "hidden_size": 4096,
    "intermediate_size": 14336, "max_position_embeddings": 131072, "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256,
    "tie_word_embeddings": false, "mlp_bias": false})");
  const ModelSpec m = load_model(file.path());
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.max_positions, 131072);
}

TEST(ModelLoaderHf, Gpt2) {
  // openai-community/gpt2-xl config.json (trimmed): n_inner null means 4h.
  TempFile file("config.json", R"({
    "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
    "model_type": "gpt2", "n_ctx": 1024, "n_embd": 1600, "n_head": 25, "n_inner": null,
    "n_layer": 48, "n_positions": 1024, "vocab_size": 50257,
    "task_specific_params": {"text-generation": {"do_sample": true, "max_length": 50}}
  })");
  const ModelSpec m = load_model(file.path());
  EXPECT_EQ(m.layers, 48);
  EXPECT_EQ(m.hidden, 1600);
  EXPECT_EQ(m.heads, 25);
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.kv_groups, 25);
  EXPECT_EQ(m.ffn_hidden, 6400);
  EXPECT_EQ(m.vocab, 50257);
  EXPECT_EQ(m.max_positions, 1024);
  EXPECT_FALSE(m.gated_ffn);
  EXPECT_TRUE(m.linear_bias);
  EXPECT_TRUE(m.tied_embeddings);  // GPT-2 ties by default
  EXPECT_EQ(m.norm, NormKind::kLayerNorm);
  EXPECT_EQ(m.position, PositionKind::kLearned);
}

TEST(ModelLoaderHf, Gpt2NCtxOnlyAndExplicitInner) {
  TempFile file("config.json", R"({"model_type": "gpt2", "n_ctx": 2048, "n_embd": 768, "n_head": 12,
    "n_inner": 2048, "n_layer": 12, "vocab_size": 50257})");
  const ModelSpec m = load_model(file.path());
  EXPECT_EQ(m.max_positions, 2048);
  EXPECT_EQ(m.ffn_hidden, 2048);
}

// The model's dropout is its attention dropout where the config states one
// (it costs time inside the attention kernel, cost/attention_dropout.h).
TEST(ModelLoaderHf, DropoutIsTheAttentionDropout) {
  TempFile gpt2("config.json", R"({"model_type": "gpt2", "n_ctx": 1024, "n_embd": 768, "n_head": 12,
    "n_layer": 12, "vocab_size": 50257, "attn_pdrop": 0.0, "resid_pdrop": 0.1})");
  EXPECT_EQ(load_model(gpt2.path()).dropout, 0.0);
  TempFile neox("config.json", R"({"model_type": "gpt_neox", "hidden_size": 512, "intermediate_size": 2048,
    "max_position_embeddings": 2048, "num_attention_heads": 8, "num_hidden_layers": 6,
    "rotary_pct": 0.25, "vocab_size": 50304, "attention_dropout": 0.1, "hidden_dropout": 0.0})");
  EXPECT_EQ(load_model(neox.path()).dropout, 0.1);
}

TEST(ModelLoaderHf, GptNeox) {
  // EleutherAI/gpt-neox-20b config.json.
  TempFile file("config.json", R"({
    "architectures": ["GPTNeoXForCausalLM"], "bos_token_id": 0, "eos_token_id": 0,
    "hidden_act": "gelu_fast", "hidden_size": 6144, "initializer_range": 0.02,
    "intermediate_size": 24576, "layer_norm_eps": 1e-05, "max_position_embeddings": 2048,
    "model_type": "gpt_neox", "num_attention_heads": 64, "num_hidden_layers": 44,
    "rotary_emb_base": 10000, "rotary_pct": 0.25, "tie_word_embeddings": false,
    "use_cache": true, "use_parallel_residual": true, "vocab_size": 50432
  })");
  const ModelSpec m = load_model(file.path());
  const ModelSpec catalog = load_model("gpt-20b");
  EXPECT_EQ(m.layers, 44);
  EXPECT_EQ(m.hidden, 6144);
  EXPECT_EQ(m.ffn_hidden, 24576);
  EXPECT_EQ(m.heads, 64);
  EXPECT_EQ(m.vocab, 50432);
  EXPECT_EQ(m.max_positions, 2048);
  EXPECT_EQ(m.position, PositionKind::kRope);
  EXPECT_EQ(m.norm, NormKind::kLayerNorm);
  EXPECT_TRUE(m.linear_bias);
  EXPECT_FALSE(m.gated_ffn);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(catalog.vocab, m.vocab);
  EXPECT_EQ(catalog.ffn_hidden, m.ffn_hidden);
  EXPECT_EQ(catalog.tied_embeddings, m.tied_embeddings);
}

TEST(ModelLoaderHf, GptNeoxUntiedByDefault) {
  // GPTNeoXConfig defaults tie_word_embeddings to false.
  TempFile file("config.json", R"({"model_type": "gpt_neox", "hidden_size": 512, "intermediate_size": 2048,
    "max_position_embeddings": 2048, "num_attention_heads": 8, "num_hidden_layers": 6,
    "rotary_pct": 0.25, "use_parallel_residual": true, "vocab_size": 50304})");
  EXPECT_FALSE(load_model(file.path()).tied_embeddings);
}

TEST(ModelLoaderHf, Mixtral) {
  // mistralai/Mixtral-8x7B-v0.1 config.json.
  TempFile file("config.json", R"({
    "architectures": ["MixtralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1,
    "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
    "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mixtral",
    "num_attention_heads": 32, "num_experts_per_tok": 2, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "num_local_experts": 8, "output_router_logits": false,
    "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.02,
    "sliding_window": null, "tie_word_embeddings": false, "vocab_size": 32000
  })");
  const ModelSpec m = load_model(file.path());
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.kv_groups, 8);
  EXPECT_EQ(m.experts, 8);
  EXPECT_EQ(m.top_k, 2);
  EXPECT_EQ(m.expert_ffn_hidden, 14336);
  EXPECT_EQ(m.moe_layer_freq, 1);
  EXPECT_EQ(m.shared_experts, 0);
  EXPECT_EQ(m.first_dense_layers, 0);
  EXPECT_EQ(m.vocab, 32000);
  EXPECT_EQ(m.max_positions, 32768);
  EXPECT_TRUE(m.gated_ffn);
  EXPECT_FALSE(m.uses_mla());
  const ModelSpec catalog = load_model("mixtral-8x7b");
  EXPECT_EQ(catalog.experts, m.experts);
  EXPECT_EQ(catalog.top_k, m.top_k);
  EXPECT_EQ(catalog.expert_ffn_hidden, m.expert_ffn_hidden);
}

constexpr const char* kDeepSeekV3Json = R"({
  "architectures": ["DeepseekV3ForCausalLM"], "attention_bias": false,
  "auto_map": {"AutoConfig": "configuration_deepseek.DeepseekV3Config"},
  "bos_token_id": 0, "eos_token_id": 1, "ep_size": 1, "first_k_dense_replace": 3,
  "hidden_act": "silu", "hidden_size": 7168, "initializer_range": 0.02,
  "intermediate_size": 18432, "kv_lora_rank": 512, "max_position_embeddings": 163840,
  "model_type": "deepseek_v3", "moe_intermediate_size": 2048, "moe_layer_freq": 1,
  "n_group": 8, "n_routed_experts": 256, "n_shared_experts": 1, "norm_topk_prob": true,
  "num_attention_heads": 128, "num_experts_per_tok": 8, "num_hidden_layers": 61,
  "num_key_value_heads": 128, "num_nextn_predict_layers": 1, "q_lora_rank": 1536,
  "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
  "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "type": "yarn",
                   "original_max_position_embeddings": 4096},
  "rope_theta": 10000, "routed_scaling_factor": 2.5, "scoring_func": "sigmoid",
  "tie_word_embeddings": false, "topk_group": 4, "topk_method": "noaux_tc",
  "v_head_dim": 128, "vocab_size": 129280
})";

TEST(ModelLoaderHf, DeepSeekV3) {
  TempFile file("config.json", kDeepSeekV3Json);
  const ModelSpec m = load_model(file.path());
  EXPECT_EQ(m.layers, 61);
  EXPECT_EQ(m.hidden, 7168);
  EXPECT_EQ(m.ffn_hidden, 18432);
  EXPECT_EQ(m.heads, 128);
  EXPECT_EQ(m.kv_groups, 128);
  EXPECT_EQ(m.vocab, 129280);
  EXPECT_EQ(m.max_positions, 163840);
  EXPECT_EQ(m.experts, 256);
  EXPECT_EQ(m.top_k, 8);
  EXPECT_EQ(m.expert_ffn_hidden, 2048);
  EXPECT_EQ(m.shared_experts, 1);
  EXPECT_EQ(m.first_dense_layers, 3);
  EXPECT_EQ(m.moe_layer_freq, 1);
  EXPECT_EQ(m.q_lora_rank, 1536);
  EXPECT_EQ(m.kv_lora_rank, 512);
  EXPECT_EQ(m.qk_rope_head_dim, 64);
  EXPECT_EQ(m.head_dim, 128 + 64);
  EXPECT_EQ(m.v_head_dim, 128);
  EXPECT_TRUE(m.gated_ffn);
  EXPECT_FALSE(m.linear_bias);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);

  const ModelSpec catalog = load_model("deepseek-v3");
  EXPECT_EQ(catalog.layers, m.layers);
  EXPECT_EQ(catalog.experts, m.experts);
  EXPECT_EQ(catalog.first_dense_layers, m.first_dense_layers);
  EXPECT_EQ(catalog.head_dim, m.head_dim);
  EXPECT_EQ(catalog.q_lora_rank, m.q_lora_rank);
}

TEST(ModelLoaderHf, DeepSeekV2LiteNullQLoraRank) {
  // deepseek-ai/DeepSeek-V2-Lite config.json: q_lora_rank null (no query compression).
  TempFile file("config.json", R"({"model_type": "deepseek_v2", "first_k_dense_replace": 1,
    "hidden_size": 2048, "intermediate_size": 10944, "kv_lora_rank": 512,
    "max_position_embeddings": 163840, "moe_intermediate_size": 1408, "moe_layer_freq": 1,
    "n_routed_experts": 64, "n_shared_experts": 2, "num_attention_heads": 16,
    "num_experts_per_tok": 6, "num_hidden_layers": 27, "num_key_value_heads": 16,
    "q_lora_rank": null, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "tie_word_embeddings": false, "v_head_dim": 128, "vocab_size": 102400})");
  const ModelSpec m = load_model(file.path());
  EXPECT_EQ(m.layers, 27);
  EXPECT_EQ(m.experts, 64);
  EXPECT_EQ(m.top_k, 6);
  EXPECT_EQ(m.shared_experts, 2);
  EXPECT_EQ(m.first_dense_layers, 1);
  EXPECT_EQ(m.expert_ffn_hidden, 1408);
  EXPECT_EQ(m.q_lora_rank, 0);
  EXPECT_EQ(m.kv_lora_rank, 512);
}

// ---------------------------------------------------------------------------
// Model YAML schema

using test::kMinimalYaml;

TEST(ModelLoaderYaml, DefaultsOfTheSchema) {
  TempFile file("tiny.yaml", kMinimalYaml);
  const ModelSpec m = load_model(file.path());
  EXPECT_EQ(m.name, "tiny");  // file stem when no name: is given
  EXPECT_EQ(m.ffn_hidden, 4 * 256);
  EXPECT_EQ(m.kv_groups, 4);
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_FALSE(m.gated_ffn);
  EXPECT_TRUE(m.linear_bias);
  EXPECT_EQ(m.norm, NormKind::kLayerNorm);
  EXPECT_EQ(m.position, PositionKind::kLearned);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_FALSE(m.is_moe());
  EXPECT_FALSE(m.uses_mla());
}

TEST(ModelLoaderYaml, MoeDefaultsAndHeadDimOverride) {
  TempFile file("moe.yaml", std::string(kMinimalYaml) +
                                "head_dim: 80\n"
                                "ffn_hidden: 512\n"
                                "moe:\n  experts: 4\n  top_k: 1\n");
  const ModelSpec m = load_model(file.path());
  EXPECT_EQ(m.head_dim, 80);
  EXPECT_EQ(m.experts, 4);
  EXPECT_EQ(m.top_k, 1);
  EXPECT_EQ(m.expert_ffn_hidden, 512);  // defaults to ffn_hidden
  EXPECT_EQ(m.moe_layer_freq, 1);
  EXPECT_EQ(m.shared_experts, 0);
  EXPECT_EQ(m.first_dense_layers, 0);
}

TEST(ModelLoaderYaml, MlaQkNopeSetsHeadDim) {
  TempFile file("mla.yaml", std::string(kMinimalYaml) +
                                "mla:\n  kv_lora_rank: 64\n  qk_rope_head_dim: 16\n  v_head_dim: 32\n"
                                "  qk_nope_head_dim: 32\n");
  const ModelSpec m = load_model(file.path());
  EXPECT_EQ(m.head_dim, 32 + 16);
  EXPECT_EQ(m.q_lora_rank, 0);
  EXPECT_TRUE(m.uses_mla());
}

}  // namespace
}  // namespace parplan
