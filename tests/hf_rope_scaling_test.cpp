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

// transformers v5 writes the base and the scaling in rope_parameters: read
// as rope_theta and rope_scaling were (the base was 10000 without a word).
TEST(HfRopeScaling, TransformersV5RopeParametersAreRead) {
  const std::string shape =
      R"({"model_type":"llama","hidden_size":4096,"intermediate_size":14336,"num_attention_heads":32,)"
      R"("num_key_value_heads":8,"num_hidden_layers":32,"vocab_size":128256,"max_position_embeddings":131072,)";
  TempFile llama31("config.json", shape +
                                      R"("rope_parameters":{"rope_theta":500000.0,"rope_type":"llama3",)" +
                                      R"("factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,)" +
                                      R"("original_max_position_embeddings":8192}})");
  const ModelSpec m = load_model(llama31.path());
  EXPECT_EQ(m.rope_theta, 500000.0);
  EXPECT_EQ(m.rope_scaling_factor, 8.0);
  EXPECT_EQ(m.unmodelled, "");
  TempFile plain("config.json",
                 shape + R"("rope_parameters":{"rope_theta":1000000.0,"rope_type":"default"}})");
  const ModelSpec p = load_model(plain.path());
  EXPECT_EQ(p.rope_theta, 1000000.0);
  EXPECT_EQ(p.rope_scaling_factor, 0.0);
  EXPECT_EQ(p.unmodelled, "");
  // No rope_type is transformers' default: no scaling.
  TempFile untyped("config.json", shape + R"("rope_parameters":{"rope_theta":500000.0}})");
  const ModelSpec u = load_model(untyped.path());
  EXPECT_EQ(u.rope_theta, 500000.0);
  EXPECT_EQ(u.unmodelled, "");
  TempFile both(
      "config.json",
      shape + R"("rope_theta":10000.0,"rope_parameters":{"rope_theta":500000.0,"rope_type":"default"}})");
  EXPECT_THROW(load_model(both.path()), InputError);
}

// A missing FFN width is refused (it read as 4 x hidden, which no Llama-type
// class defaults to); Qwen's sliding window is off unless the config turns it
// on (Qwen2Config use_sliding_window False).
TEST(HfRopeScaling, MissingWidthAndQwenWindowDefaults) {
  TempFile no_width("config.json",
                    R"({"model_type":"mistral","hidden_size":4096,"num_attention_heads":32,)"
                    R"("num_hidden_layers":32,"vocab_size":32000,"max_position_embeddings":32768})");
  try {
    load_model(no_width.path());
    ADD_FAILURE() << "a config without intermediate_size was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'intermediate_size' is missing"), std::string::npos)
        << e.what();
  }
  const std::string qwen =
      R"({"model_type":"qwen2","hidden_size":3584,"intermediate_size":18944,"num_attention_heads":28,)"
      R"("num_key_value_heads":4,"num_hidden_layers":28,"vocab_size":152064,"max_position_embeddings":32768,)"
      R"("sliding_window":4096)";
  TempFile off("config.json", qwen + "}");
  EXPECT_EQ(load_model(off.path()).sliding_window, 0);
  TempFile on("config.json", qwen + R"(,"use_sliding_window":true})");
  EXPECT_EQ(load_model(on.path()).sliding_window, 4096);
}

}  // namespace
}  // namespace parplan
