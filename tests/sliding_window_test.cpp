// Sliding-window attention (cost/sliding_window.h): a window's pairs equal
// their count; a window as long as the sequence, or every layer kept full,
// changes nothing; windowed layers' FLOPs are exactly their band's; a longer
// window never runs faster; Hugging Face configs say which layers are
// windowed; a model file cannot contradict itself.
#include "cost/sliding_window.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cli_support.h"
#include "cost/flops.h"
#include "cost/step_cost.h"
#include "llama3_8b_h100_case.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

TEST(SlidingWindow, PairsEqualTheirCount) {
  for (int seq : {1, 2, 7, 128, 129, 300, 1000}) {
    for (int window : {1, 2, 64, 128, 299, 300, 301, 5000}) {
      double counted = 0;
      for (int i = 0; i < seq; ++i) counted += std::min(i + 1, window);
      EXPECT_DOUBLE_EQ(window_pairs(seq, window), counted) << seq << " " << window;
    }
    double causal = 0;
    for (int i = 0; i < seq; ++i) causal += i + 1;
    EXPECT_DOUBLE_EQ(causal_pairs(seq), causal);
  }
}

struct Case : test::Llama3_8bOnH100 {
  explicit Case(int seq) {
    job.gpus = 8, job.gbs = 8, job.seq = seq;
    config.tp = 1, config.pp = 1, config.cp = 1, config.dp = 8, config.mbs = 1, config.gbs = 8;
    config.zero = 3, config.recompute = Recompute::kFull;
  }
  double step_s(int window, int full_layers = 0) {
    ModelSpec m = model;
    m.sliding_window = window;
    m.full_attention_layers = full_layers;
    return estimate_cost(m, cluster, job, config).time.step_s;
  }
};

TEST(SlidingWindow, AWindowAsLongAsTheSequenceOrFullLayersChangeNothing) {
  Case k(8192);
  const double plain = k.step_s(0);
  EXPECT_DOUBLE_EQ(k.step_s(8192), plain);
  EXPECT_DOUBLE_EQ(k.step_s(100000), plain);
  EXPECT_DOUBLE_EQ(k.step_s(512, k.model.layers), plain);
}

TEST(SlidingWindow, WindowedLayersCountOnlyTheirBand) {
  const ModelSpec plain = load_model("llama3-8b");
  ModelSpec windowed = plain;
  windowed.sliding_window = 128;
  windowed.full_attention_layers = plain.layers / 2;
  const int seq = 32768, gbs = 4;
  const double tokens = static_cast<double>(gbs) * seq;
  // Model FLOPs (forward and backward, 3x): the windowed half of the layers
  // drops the square's share of the pairs its band leaves out.
  const double square_per_layer = 2.0 * tokens * seq * plain.heads * (2.0 * plain.head_dim);
  const double band = window_pairs(seq, 128) / causal_pairs(seq);
  const double expected_drop = 3.0 * (plain.layers / 2) * square_per_layer * (1.0 - band);
  const double drop = step_flops(plain, gbs, seq, Recompute::kNone, 0).model_flops -
                      step_flops(windowed, gbs, seq, Recompute::kNone, 0).model_flops;
  EXPECT_NEAR(drop / expected_drop, 1.0, 1e-12);
}

TEST(SlidingWindow, ALongerWindowNeverRunsFaster) {
  Case k(32768);
  double previous = 0;
  for (int window : {128, 512, 2048, 8192, 32768}) {
    const double t = k.step_s(window);
    EXPECT_GE(t, previous) << window;
    previous = t;
  }
  EXPECT_LT(k.step_s(4096), k.step_s(0));
  // More full layers, no faster.
  EXPECT_LE(k.step_s(4096, 8), k.step_s(4096, 16));
}

ModelSpec hf(const std::string& model_type, const std::string& extra) {
  const std::string path = test::write_temp(
      model_type + ".json", R"({"model_type": ")" + model_type +
                                R"(", "hidden_size": 512, "num_hidden_layers": 12, "num_attention_heads": 8,
             "num_key_value_heads": 8, "intermediate_size": 1024, "vocab_size": 32000,
             "max_position_embeddings": 32768, )" +
                                extra + "}");
  return load_model(path);
}

TEST(SlidingWindow, HuggingFaceConfigsSayWhichLayersAreWindowed) {
  // Mistral v0.1: every layer.
  ModelSpec m = hf("mistral", R"("sliding_window": 4096)");
  EXPECT_EQ(m.sliding_window, 4096);
  EXPECT_EQ(m.full_attention_layers, 0);
  EXPECT_EQ(m.unmodelled.find("sliding"), std::string::npos) << m.unmodelled;
  // A per-layer list (GPT-OSS alternates, starting windowed).
  std::string types = R"("layer_types": [)";
  for (int i = 0; i < 12; ++i)
    types += std::string(i ? ", " : "") + (i % 2 ? "\"full_attention\"" : "\"sliding_attention\"");
  m = hf("llama", R"("sliding_window": 128, )" + types + "]");
  EXPECT_EQ(m.sliding_window, 128);
  EXPECT_EQ(m.full_attention_layers, 6);
  // Gemma 3: one full layer in sliding_window_pattern (6 by default).
  m = hf("gemma3_text", R"("sliding_window": 1024, "sliding_window_pattern": 4, "head_dim": 64)");
  EXPECT_EQ(m.full_attention_layers, 3);
  m = hf("gemma3_text", R"("sliding_window": 1024, "head_dim": 64)");
  EXPECT_EQ(m.full_attention_layers, 2);
  // Gemma 2 alternates.
  m = hf("gemma2", R"("sliding_window": 4096, "head_dim": 64)");
  EXPECT_EQ(m.full_attention_layers, 6);
  // Qwen2 turns its window off.
  m = hf("qwen2", R"("sliding_window": 131072, "use_sliding_window": false)");
  EXPECT_EQ(m.sliding_window, 0);
  // A list of the wrong length names the field.
  try {
    hf("llama", R"("sliding_window": 128, "layer_types": ["full_attention"])");
    ADD_FAILURE() << "a short layer_types list was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layer_types"), std::string::npos) << e.what();
  }
}

TEST(SlidingWindow, AModelFileCannotContradictItself) {
  const std::string base =
      "name: w\nsource: test\nlayers: 4\nhidden: 512\nffn_hidden: 1024\nheads: 8\nkv_groups: 8\n"
      "head_dim: 64\nvocab: 32000\nmax_positions: 4096\ngated_ffn: true\nlinear_bias: false\n"
      "norm: rmsnorm\nposition: rope\ntied_embeddings: false\n";
  const ModelSpec ok =
      load_model(test::write_temp("w_ok.yaml", base + "sliding_window: 512\nfull_attention_layers: 2\n"));
  EXPECT_EQ(ok.sliding_window, 512);
  EXPECT_EQ(ok.full_attention_layers, 2);
  for (const std::string& bad : {std::string("full_attention_layers: 2\n"),
                                 std::string("sliding_window: 512\nfull_attention_layers: 5\n")}) {
    try {
      load_model(test::write_temp("w_bad.yaml", base + bad));
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("full_attention_layers"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace parplan
