// A Hugging Face config's rope_scaling: the llama3 form Megatron runs is
// read, any other kind is named as not modelled, and a malformed block is
// refused naming the field (not a bare JSON type error, not ignored).
#include <gtest/gtest.h>

#include <string>

#include "src/io/input_error.h"
#include "src/io/model_loader.h"
#include "tests/model_yaml_fixture.h"

namespace parplan {
namespace {

using test::TempFile;

std::string llama_with(const std::string& rope_scaling) {
  return R"({"model_type":"llama","hidden_size":4096,"intermediate_size":14336,"num_attention_heads":32,)"
         R"("num_key_value_heads":8,"num_hidden_layers":32,"vocab_size":128256,)"
         R"("max_position_embeddings":131072,"rope_scaling":)" +
         rope_scaling + "}";
}

std::string refusal(const std::string& rope_scaling) {
  TempFile file("config.json", llama_with(rope_scaling));
  try {
    load_model(file.path());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(HfRopeScaling, Llama31FormIsRead) {
  TempFile file(
      "config.json",
      llama_with(R"({"rope_type":"llama3","factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,)"
                 R"("original_max_position_embeddings":8192})"));
  const ModelSpec m = load_model(file.path());
  EXPECT_EQ(m.rope_scaling_factor, 8.0);
  EXPECT_TRUE(m.unmodelled.empty()) << m.unmodelled;
}

TEST(HfRopeScaling, OtherKindsAreNamedAsNotModelled) {
  TempFile file("config.json", llama_with(R"({"type":"yarn","factor":4})"));
  EXPECT_NE(load_model(file.path()).unmodelled.find("RoPE scaling 'yarn'"), std::string::npos);
}

TEST(HfRopeScaling, MalformedBlocksAreRefusedNamingTheField) {
  EXPECT_NE(refusal(R"("linear")").find("field 'rope_scaling' must be an object"), std::string::npos);
  EXPECT_NE(refusal("[1,2]").find("field 'rope_scaling' must be an object"), std::string::npos);
  EXPECT_NE(refusal(R"({"rope_type":"llama3","factor":8,"low_freq_factor":"1.0"})")
                .find("field 'rope_scaling.low_freq_factor' must be a number"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"rope_type":"llama3","factor":"8"})").find("rope_scaling.factor"), std::string::npos);
  EXPECT_NE(refusal(R"({"rope_type":3,"factor":8})").find("rope_scaling.rope_type"), std::string::npos);
}

}  // namespace
}  // namespace parplan
