// Which layers of a Hugging Face MoE config have experts, as each family's
// modeling code decides it: Qwen2/3-MoE (transformers modeling_qwen3_moe.py)
// puts experts on layer i when i is not in mlp_only_layers and
// (i + 1) % decoder_sparse_step == 0; DeepSeek-V2/V3 when
// i >= first_k_dense_replace and i % moe_layer_freq == 0. parplan's model
// must hold exactly those layers, or refuse the file; contradictory
// group-limited routing and fractional shared experts are refused too.
#include "src/io/hf_moe_layers.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "cost/parameters.h"
#include "src/io/input_error.h"
#include "src/io/model_loader.h"
#include "tests/model_yaml_fixture.h"

namespace parplan {
namespace {

using test::TempFile;

std::string qwen3_moe(int layers, const std::string& extra) {
  return R"({"model_type":"qwen3_moe","hidden_size":2048,"intermediate_size":6144,"num_attention_heads":32,)"
         R"("num_key_value_heads":4,"head_dim":128,"vocab_size":151936,"max_position_embeddings":40960,)"
         R"("num_experts":128,"num_experts_per_tok":8,"moe_intermediate_size":768,"num_hidden_layers":)" +
         std::to_string(layers) + extra + "}";
}

void expect_layers_as(const ModelSpec& m, const std::function<bool(int)>& reference) {
  for (int i = 0; i < m.layers; ++i) EXPECT_EQ(is_moe_layer(m, i), reference(i)) << "layer " << i;
}

TEST(HfMoeLayers, QwenSparseStepCountsFromLayerOne) {
  for (const int step : {1, 2, 3, 4}) {
    for (const int layers : {10, 12, 13}) {
      TempFile file("config.json", qwen3_moe(layers, R"(,"decoder_sparse_step":)" + std::to_string(step)));
      const ModelSpec m = load_model(file.path());
      expect_layers_as(m, [&](int i) { return (i + 1) % step == 0; });
    }
  }
}

TEST(HfMoeLayers, QwenMlpOnlyLayersAreDense) {
  TempFile file("config.json", qwen3_moe(10, R"(,"mlp_only_layers":[0,1,2])"));
  const ModelSpec m = load_model(file.path());
  expect_layers_as(m, [](int i) { return i >= 3; });
  TempFile last("config.json", qwen3_moe(10, R"(,"mlp_only_layers":[0,1,2,3,4,5,6,7,8])"));
  expect_layers_as(load_model(last.path()), [](int i) { return i == 9; });
}

TEST(HfMoeLayers, PatternsTheModelCannotHoldAreRefused) {
  for (const std::string& extra :
       {std::string(R"(,"mlp_only_layers":[0,5])"),
        std::string(R"(,"mlp_only_layers":[0,1,2,3,4,5,6,7,8,9])"), std::string(R"(,"mlp_only_layers":[10])"),
        std::string(R"(,"mlp_only_layers":"x")"), std::string(R"(,"mlp_only_layers":[1,1])")}) {
    TempFile file("config.json", qwen3_moe(10, extra));
    try {
      load_model(file.path());
      ADD_FAILURE() << "accepted " << extra;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("mlp_only_layers"), std::string::npos) << e.what();
    }
  }
}

TEST(HfMoeLayers, QwenSharedExpertInWholeWidthsOnly) {
  const auto qwen2 = [](int shared) {
    return R"({"model_type":"qwen2_moe","hidden_size":2048,"intermediate_size":5632,"num_attention_heads":16,)"
           R"("num_key_value_heads":16,"vocab_size":151936,"max_position_embeddings":8192,"num_experts":60,)"
           R"("num_experts_per_tok":4,"moe_intermediate_size":1408,"num_hidden_layers":24,)"
           R"("shared_expert_intermediate_size":)" +
           std::to_string(shared) + "}";
  };
  // Qwen1.5-MoE-A2.7B: 5632 = 4 x 1408.
  TempFile whole("config.json", qwen2(5632));
  EXPECT_EQ(load_model(whole.path()).shared_experts, 4);
  TempFile part("config.json", qwen2(700));
  EXPECT_THROW(load_model(part.path()), InputError);
}

TEST(HfMoeLayers, DeepSeekFrequencyCountsFromLayerZero) {
  const auto deepseek = [](int first_dense, int freq) {
    return R"({"model_type":"deepseek_v3","hidden_size":2048,"intermediate_size":10944,"num_attention_heads":16,)"
           R"("num_key_value_heads":16,"vocab_size":102400,"max_position_embeddings":4096,"n_routed_experts":64,)"
           R"("num_experts_per_tok":6,"moe_intermediate_size":1408,"n_shared_experts":2,"num_hidden_layers":12,)"
           R"("kv_lora_rank":512,"qk_rope_head_dim":64,"v_head_dim":128,"qk_nope_head_dim":128,)"
           R"("first_k_dense_replace":)" +
           std::to_string(first_dense) + R"(,"moe_layer_freq":)" + std::to_string(freq) + "}";
  };
  for (const auto& layout : {std::pair{1, 1}, std::pair{0, 2}, std::pair{2, 2}, std::pair{3, 3}}) {
    // Plain locals: clang does not capture structured bindings in a lambda.
    const int first_dense = layout.first, freq = layout.second;
    TempFile file("config.json", deepseek(first_dense, freq));
    expect_layers_as(load_model(file.path()), [&](int i) { return i >= first_dense && i % freq == 0; });
  }
}

TEST(HfMoeLayers, RoutingGroupsThatContradictAreRefused) {
  const auto grouped = [](int groups, int keep) {
    return R"({"model_type":"deepseek_v3","hidden_size":2048,"intermediate_size":10944,"num_attention_heads":16,)"
           R"("num_key_value_heads":16,"vocab_size":102400,"max_position_embeddings":4096,"n_routed_experts":64,)"
           R"("num_experts_per_tok":6,"moe_intermediate_size":1408,"num_hidden_layers":12,)"
           R"("kv_lora_rank":512,"qk_rope_head_dim":64,"v_head_dim":128,"qk_nope_head_dim":128,"n_group":)" +
           std::to_string(groups) + R"(,"topk_group":)" + std::to_string(keep) + "}";
  };
  TempFile fine("config.json", grouped(8, 3));  // 3 groups of 8 experts hold the top 6
  EXPECT_EQ(load_model(fine.path()).route_groups, 8);
  for (const auto& [groups, keep] : {std::pair{8, 16}, std::pair{3, 1}, std::pair{16, 1}}) {
    TempFile file("config.json", grouped(groups, keep));
    try {
      load_model(file.path());
      ADD_FAILURE() << groups << " groups, keep " << keep;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_TRUE(what.find("n_group") != std::string::npos || what.find("topk_group") != std::string::npos)
          << what;
    }
  }
}

TEST(HfMoeLayers, ExpertCountsThatDisagreeAreRefused) {
  TempFile same("config.json", qwen3_moe(10, R"(,"num_local_experts":128)"));
  EXPECT_EQ(load_model(same.path()).experts, 128);
  TempFile differ("config.json", qwen3_moe(10, R"(,"num_local_experts":16)"));
  EXPECT_THROW(load_model(differ.path()), InputError);
}

TEST(HfMoeLayers, LayoutFinder) {
  EXPECT_FALSE(moe_layer_layout(8, [](int) { return false; }).has_value());
  const auto lone = moe_layer_layout(8, [](int i) { return i == 3; });
  ASSERT_TRUE(lone.has_value());
  EXPECT_EQ(lone->first_dense_layers, 3);
  EXPECT_FALSE(moe_layer_layout(8, [](int i) { return i == 1 || i == 2 || i == 4; }).has_value());
}

}  // namespace
}  // namespace parplan
