// The catalog's Llama 2, 3.1 and 3.2, Qwen2.5, Qwen3, Mixtral 8x22B and
// GPT-OSS entries against the parameter counts their publishers state: a
// wrong width, expert count or tie of the embeddings moves the count past
// the stated figure's last digit.
#include <gtest/gtest.h>

#include "cost/parameters.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

struct Published {
  const char* name;
  double total_billions;
  double active_billions;     // 0: dense (active = total)
  double tolerance_billions;  // half a unit of the figures' last digit
  // The model card cuts its figures to their digits (3.35B says "3.3B"):
  // the count lies in [figure, figure + one unit) instead of within half a
  // unit of it.
  bool cut = false;
  const char* source = "";
  // The active count leaves out the input embedding (a lookup, no work) and
  // keeps the output head (GPT-OSS's model card, Table 1).
  bool active_without_embedding = false;
};

// Hugging Face model pages (safetensors parameter counts) and the model
// cards' / release notes' totals and active counts.
constexpr Published kPublished[] = {
    {"llama2-7b", 6.74, 0, 0.005, false, "meta-llama/Llama-2-7b-hf: 6.74B params"},
    {"llama2-13b", 13.0, 0, 0.05, false, "meta-llama/Llama-2-13b-hf: 13.0B params"},
    {"llama2-70b", 69.0, 0, 0.05, false, "meta-llama/Llama-2-70b-hf: 69.0B params"},
    {"llama3.1-8b", 8.03, 0, 0.005, false, "meta-llama/Llama-3.1-8B: 8.03B params"},
    {"llama3.1-70b", 70.6, 0, 0.05, false, "meta-llama/Llama-3.1-70B: 70.6B params"},
    {"qwen3-30b-a3b", 30.5, 3.3, 0.05, true, "Qwen3-30B-A3B model card: 30.5B in total, 3.3B activated"},
    {"qwen3-235b-a22b", 235, 22, 0.5, true, "Qwen3-235B-A22B model card: 235B in total, 22B activated"},
    {"mixtral-8x22b", 141, 39, 0.5, false, "Mistral AI (2024-04-17): 39B active of 141B"},
    {"llama3.2-1b", 1.23, 0, 0.005, true, "Llama 3.2 model card: 1B (1.23B)"},
    {"llama3.2-3b", 3.21, 0, 0.005, false, "Llama 3.2 model card: 3B (3.21B)"},
    {"qwen2.5-7b", 7.61, 0, 0.005, true, "Qwen2.5-7B model card: Number of Parameters 7.61B"},
    {"qwen2.5-72b", 72.7, 0, 0.05, false, "Qwen2.5-72B model card: Number of Parameters 72.7B"},
    {"gpt-oss-120b", 116.83, 5.13, 0.005, false,
     "OpenAI gpt-oss-120b & gpt-oss-20b model card (2025-08-05), Table 1: 116.83B total, 5.13B active", true},
    {"gpt-oss-20b", 20.91, 3.61, 0.005, false, "the same Table 1: 20.91B total, 3.61B active", true},
};

TEST(ModelCatalogPublished, ParameterCountsMatchThePublishers) {
  for (const Published& p : kPublished) {
    SCOPED_TRACE(std::string(p.name) + ": " + p.source);
    const ModelSpec m = load_model(p.name);
    const double active = p.active_billions > 0 ? p.active_billions : p.total_billions;
    const double embedding = p.active_without_embedding ? embedding_params(m, m.max_positions) : 0.0;
    const double counted[2] = {total_params(m, m.max_positions) / 1e9,
                               (active_params(m, m.max_positions) - embedding) / 1e9};
    const double stated[2] = {p.total_billions, active};
    for (int i = 0; i < 2; ++i) {
      if (p.cut) {
        EXPECT_GE(counted[i], stated[i]);
        EXPECT_LT(counted[i], stated[i] + 2 * p.tolerance_billions);
      } else {
        EXPECT_NEAR(counted[i], stated[i], p.tolerance_billions);
      }
    }
    EXPECT_EQ(m.is_moe(), p.active_billions > 0);
  }
}

// Llama 3.1 changes only the context (RoPE scaling) of Llama 3: the same
// weights.
TEST(ModelCatalogPublished, Llama31HasLlama3Shapes) {
  for (const char* size : {"8b", "70b"}) {
    SCOPED_TRACE(size);
    const ModelSpec v3 = load_model(std::string("llama3-") + size);
    const ModelSpec v31 = load_model(std::string("llama3.1-") + size);
    EXPECT_EQ(total_params(v3, v3.max_positions), total_params(v31, v31.max_positions));
    EXPECT_EQ(v31.max_positions, 131072);
  }
}

}  // namespace
}  // namespace parplan
