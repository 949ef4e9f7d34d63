// Model loader: bad input gives one line naming the file, the line and the field.
// Hugging Face config.json). Expected numbers come from the papers and the
// published config.json files named in each test, never from the loader.
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
#include "src/io/model_loader.h"
#include "tests/model_yaml_fixture.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;
using test::TempFile;

/// A file in a private temp directory, removed at the end of the test.
/// Loads `content` from a temp file and returns the InputError message ("" if none).
std::string load_error(const std::string& filename, const std::string& content) {
  TempFile file(filename, content);
  try {
    load_model(file.path());
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "message is not one line: " << message;
    EXPECT_EQ(message.rfind(file.path(), 0), 0u) << "message does not start with the file: " << message;
    return message;
  }
  ADD_FAILURE() << "no InputError for " << filename << ":\n" << content;
  return "";
}

#define EXPECT_MENTIONS(message, ...)                                               \
  do {                                                                              \
    const std::string m_ = (message);                                               \
    for (const std::string s_ : {__VA_ARGS__}) {                                    \
      EXPECT_NE(m_.find(s_), std::string::npos) << "'" << s_ << "' not in: " << m_; \
    }                                                                               \
  } while (0)

using test::kMinimalYaml;

TEST(ModelLoaderErrors, MlaNeedsAConsistentHeadDim) {
  const std::string mla = "mla:\n  kv_lora_rank: 64\n  qk_rope_head_dim: 16\n  v_head_dim: 32\n";
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) + mla), "'head_dim'", "missing");
  EXPECT_MENTIONS(
      load_error("x.yaml", std::string(kMinimalYaml) + "head_dim: 40\n" + mla + "  qk_nope_head_dim: 32\n"),
      "'mla.qk_nope_head_dim'", "'head_dim'");
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) + "head_dim: 16\n" + mla), "'head_dim'",
                  "'mla.qk_rope_head_dim'");
}

// ---------------------------------------------------------------------------
// Bad input: each throws InputError, one line, naming the file and the field

TEST(ModelLoaderErrors, UnknownNameOrMissingFile) {
  EXPECT_THROW(load_model("no-such-model"), InputError);
  EXPECT_THROW(load_model("/nonexistent/dir/config.json"), InputError);
  try {
    load_model("llama3-8");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_MENTIONS(e.what(), "--model", "llama3-8b");
  }
}

TEST(ModelLoaderErrors, MalformedYamlGivesLine) {
  const std::string message = load_error("bad.yaml", "source: x\nlayers: 2\nhidden: [256, 512\nheads: 4\n");
  // The parser's 1-based line follows the file name: the open list starts on
  // line 3 and the parser gives up on line 4.
  EXPECT_TRUE(std::regex_search(message, std::regex("bad\\.yaml:[34]: invalid YAML"))) << message;
}

TEST(ModelLoaderErrors, MalformedJsonGivesLine) {
  const std::string message = load_error("config.json", "{\n  \"hidden_size\": 4096,\n  \"n_layer\": ,\n}\n");
  EXPECT_MENTIONS(message, "invalid JSON", "line 3");
}

TEST(ModelLoaderErrors, MissingRequiredField) {
  EXPECT_MENTIONS(load_error("m.yaml", "source: x\nlayers: 2\nheads: 4\nvocab: 10\nmax_positions: 8\n"),
                  "'hidden'", "missing");
  EXPECT_MENTIONS(load_error("m.yaml", "layers: 2\nhidden: 256\nheads: 4\nvocab: 10\nmax_positions: 8\n"),
                  "'source'", "missing");
  EXPECT_MENTIONS(load_error("m.yaml", std::string(kMinimalYaml) + "moe:\n  experts: 8\n"), "'moe.top_k'",
                  "missing");
  EXPECT_MENTIONS(
      load_error("config.json", R"({"intermediate_size": 128, "hidden_size": 64, "num_attention_heads": 4,
      "vocab_size": 10, "max_position_embeddings": 8})"),
      "'num_hidden_layers'", "missing");
  EXPECT_MENTIONS(
      load_error("config.json", R"({"intermediate_size": 128, "model_type": "mixtral", "hidden_size": 64,
      "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 10,
      "max_position_embeddings": 8, "num_local_experts": 8})"),
      "'num_experts_per_tok'", "missing");
}

TEST(ModelLoaderErrors, WrongType) {
  const std::string base = "source: x\nlayers: 2\nheads: 4\nvocab: 10\nmax_positions: 8\n";
  EXPECT_MENTIONS(load_error("m.yaml", base + "hidden: abc\n"), "'hidden'", "positive integer", "abc");
  EXPECT_MENTIONS(load_error("m.yaml", base + "hidden: 256.5\n"), "'hidden'", "integer");
  EXPECT_MENTIONS(load_error("m.yaml", base + "hidden: \"256\"\n"), "'hidden'", "quoted");
  EXPECT_MENTIONS(load_error("m.yaml", base + "hidden: [256]\n"), "'hidden'", "a list");
  EXPECT_MENTIONS(load_error("m.yaml", base + "hidden:\n"), "'hidden'", "is empty (null)");
  EXPECT_MENTIONS(load_error("m.yaml", std::string(kMinimalYaml) + "gated_ffn: maybe\n"), "'gated_ffn'",
                  "true or false");
  EXPECT_MENTIONS(load_error("m.yaml", std::string(kMinimalYaml) + "moe: 8\n"), "'moe'", "mapping");
  EXPECT_MENTIONS(load_error("m.yaml", "- layers\n- hidden\n"), "mapping");
  EXPECT_MENTIONS(
      load_error("config.json", R"({"intermediate_size": 128, "hidden_size": "4096", "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8})"),
      "'hidden_size'", "\"4096\"");
  EXPECT_MENTIONS(
      load_error("config.json", R"({"intermediate_size": 128, "hidden_size": 64.0, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8})"),
      "'hidden_size'", "integer");
  EXPECT_MENTIONS(
      load_error("config.json", R"({"intermediate_size": 128, "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8,
      "tie_word_embeddings": "no"})"),
      "'tie_word_embeddings'", "true or false");
  EXPECT_MENTIONS(load_error("config.json", "[1, 2, 3]"), "JSON object");
}

TEST(ModelLoaderErrors, NonPositiveNumbers) {
  const std::string base = "source: x\nlayers: 2\nheads: 4\nvocab: 10\nmax_positions: 8\n";
  EXPECT_MENTIONS(load_error("x.yaml", base + "hidden: -5\n"),
                  "field 'hidden' must be a positive integer (got -5)");
  EXPECT_MENTIONS(load_error("x.yaml",
                             "source: x\nlayers: 0\nhidden: 256\nheads: 4\nvocab: 10\n"
                             "max_positions: 8\n"),
                  "'layers'", "(got 0)");
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) + "moe:\n  experts: 8\n  top_k: 2\n"
                                                                   "  shared_experts: -1\n"),
                  "'moe.shared_experts'", "non-negative");
  EXPECT_MENTIONS(load_error("x.yaml", base + "hidden: 99999999999999999999999\n"), "'hidden'", "too large");
  EXPECT_MENTIONS(
      load_error("config.json", R"({"intermediate_size": 128, "hidden_size": 64, "num_hidden_layers": -2,
      "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8})"),
      "'num_hidden_layers'", "positive");
}

TEST(ModelLoaderErrors, HiddenNotDivisibleByHeads) {
  const std::string base = "source: x\nlayers: 2\nheads: 32\nvocab: 10\nmax_positions: 8\n";
  EXPECT_MENTIONS(load_error("x.yaml", base + "hidden: 4100\n"), "'hidden'", "'heads'", "'head_dim'");
  // With an explicit head_dim the shape is accepted.
  TempFile ok("ok.yaml", base + "hidden: 4100\nhead_dim: 128\n");
  EXPECT_EQ(load_model(ok.path()).head_dim, 128);
  EXPECT_MENTIONS(
      load_error("config.json", R"({"intermediate_size": 128, "hidden_size": 100, "num_hidden_layers": 2,
      "num_attention_heads": 3, "vocab_size": 10, "max_position_embeddings": 8})"),
      "'hidden_size'", "'num_attention_heads'");
}

TEST(ModelLoaderErrors, HeadsNotDivisibleByKvGroups) {
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) + "kv_groups: 3\n"), "'kv_groups'",
                  "'heads'");
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) + "kv_groups: 8\n"), "'kv_groups'");
  EXPECT_MENTIONS(
      load_error("config.json", R"({"intermediate_size": 128, "hidden_size": 4096, "num_hidden_layers": 2,
      "num_attention_heads": 32, "num_key_value_heads": 5, "vocab_size": 10,
      "max_position_embeddings": 8})"),
      "'num_key_value_heads'", "'num_attention_heads'");
}

TEST(ModelLoaderErrors, UnknownNormOrPosition) {
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) + "norm: batchnorm\n"), "'norm'",
                  "layernorm", "rmsnorm", "batchnorm");
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) + "position: alibi\n"), "'position'",
                  "learned", "rope", "alibi");
}

TEST(ModelLoaderErrors, TopKAboveExperts) {
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) + "moe:\n  experts: 8\n  top_k: 9\n"),
                  "'moe.top_k'", "'moe.experts'");
  EXPECT_MENTIONS(
      load_error("config.json", R"({"intermediate_size": 128, "model_type": "mixtral", "hidden_size": 64,
      "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 10,
      "max_position_embeddings": 8, "num_local_experts": 8, "num_experts_per_tok": 9})"),
      "'num_experts_per_tok'", "'num_local_experts'");
}

TEST(ModelLoaderErrors, FirstDenseLayersCoversEveryLayer) {
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) +
                                           "moe:\n  experts: 8\n  top_k: 2\n  first_dense_layers: 2\n"),
                  "'moe.first_dense_layers'", "'layers'");
}

TEST(ModelLoaderErrors, UnknownKeysAreNamed) {
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) + "hiden: 256\n"), "unknown field 'hiden'",
                  "did you mean 'hidden'");
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) + "moe:\n  experts: 8\n  topk: 2\n"),
                  "'moe.topk'", "top_k");
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) + "mla:\n  kv_rank: 8\n"), "'mla.kv_rank'");
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) + "colour: blue\n"), "'colour'");
  // HF configs carry many keys parplan does not need: those are ignored.
  TempFile hf(
      "config.json",
      R"({"intermediate_size": 128, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
      "vocab_size": 10, "max_position_embeddings": 8, "some_future_key": {"a": [1, 2]}})");
  EXPECT_NO_THROW(load_model(hf.path()));
}

TEST(ModelLoaderErrors, DuplicateAndEmpty) {
  EXPECT_MENTIONS(load_error("x.yaml", std::string(kMinimalYaml) + "layers: 3\n"), "'layers'", "twice");
  EXPECT_MENTIONS(load_error("x.yaml", ""), "empty");
  EXPECT_MENTIONS(load_error("config.json", ""), "invalid JSON");
}

TEST(ModelLoaderErrors, MessageCarriesTheYamlLine) {
  const std::string message = load_error("x.yaml", "source: x\nlayers: 2\nhidden: -5\nheads: 4\n");
  EXPECT_MENTIONS(message, "x.yaml:3: field 'hidden'");
}

}  // namespace
}  // namespace parplan
