// Groundwork: units that cannot be misread (HBM in GiB), the shared YAML
// reader's suggestions and refusals, the Hugging Face model_type table, and
// one validator behind estimate, check and plan.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_support.h"
#include "cost/config_rules.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

using test::run_cli;

using test::write_temp;

std::string catalog_profile(const std::string& name) {
  std::ifstream in(data_dir() / "hardware-profiles" / (name + ".yaml"));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Units, An80GiBDeviceHas80TimesTwoToThe30BytesOfHbm) {
  // NVIDIA's "80GB" H100 and A100 carry 81920 MiB (nvidia-smi).
  for (const char* name : {"dgx-a100", "dgx-h100"}) {
    const ClusterSpec c = load_cluster(name);
    EXPECT_DOUBLE_EQ(c.device.hbm_bytes, 80.0 * 1024 * 1024 * 1024) << name;
  }
  // What a process may allocate on an H100: nvidia-smi's 81559 MiB.
  EXPECT_NEAR(load_cluster("dgx-h100").device.usable_hbm_bytes(), 81559.0 * 1024 * 1024,
              0.01 * 1024 * 1024 * 1024);
  // An MI250X GCD: 64 GiB.
  EXPECT_DOUBLE_EQ(load_cluster("frontier").device.hbm_bytes, 64.0 * 1024 * 1024 * 1024);
}

TEST(Units, EveryShippedProfileNamesItsUnits) {
  for (const auto& entry : std::filesystem::directory_iterator(data_dir() / "hardware-profiles")) {
    std::ifstream in(entry.path());
    std::stringstream s;
    s << in.rdbuf();
    const std::string text = s.str();
    EXPECT_NE(text.find("hbm_gib:"), std::string::npos) << entry.path();
    for (const char* old_key : {"hbm_gb:", "hbm_tbps:", "bandwidth_gbps:", "reserved_gb:"})
      EXPECT_EQ(text.find(old_key), std::string::npos) << entry.path() << " still has " << old_key;
  }
}

TEST(Units, OldKeysAreReadInTheirOldUnitWithADeprecationLine) {
  std::string text = catalog_profile("dgx-a100");
  const auto at = text.find("hbm_gib: 80");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 11, "hbm_gb: 80 ");
  const auto line = text.find("\n  hbm_usable_gib");
  text.erase(line, text.find('\n', line + 1) - line);
  const std::string path = write_temp("old.yaml", text);
  EXPECT_DOUBLE_EQ(load_cluster(path).device.hbm_bytes, 80e9);
  const auto run =
      run_cli("estimate --model gpt-1.7b --cluster " + path + " --gpus 8 --gbs 8 --seq 2048 --tp 1 --pp 1");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("'device.hbm_gb' is deprecated; write 'device.hbm_gib'"), std::string::npos)
      << run.err;
}

TEST(YamlReader, ClusterAndJobFilesGetSuggestionsAndRefuseDuplicatesAndSecondDocuments) {
  std::string text = catalog_profile("dgx-a100");
  text.replace(text.find("hbm_tb_per_s"), 12, "hbm_tb_per_sec");
  const auto typo = run_cli("plan --model gpt-1.7b --cluster " + write_temp("typo.yaml", text) +
                            " --gpus 8 --gbs 8 --seq 2048");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("did you mean 'hbm_tb_per_s'?"), std::string::npos) << typo.err;
  EXPECT_EQ(test::line_count(typo.err), 1) << typo.err;

  const auto dup = run_cli("plan --job " + write_temp("dup.yaml", "model: gpt-1.7b\ngbs: 8\ngbs: 16\n"));
  EXPECT_EQ(dup.exit_code, 2);
  EXPECT_NE(dup.err.find("dup.yaml:3: field 'gbs' is given twice"), std::string::npos) << dup.err;

  const auto two = run_cli("plan --job " + write_temp("two.yaml", "model: gpt-1.7b\n---\ngbs: 8\n"));
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.err.find("2 YAML documents"), std::string::npos) << two.err;

  const auto fraction = run_cli("plan --job " + write_temp("zero.yaml",
                                                           "model: gpt-1.7b\ncluster: dgx-a100\n"
                                                           "gpus: 8\ngbs: 8\nseq: 2048\n"
                                                           "config: {zero: 1.5}\n"));
  EXPECT_EQ(fraction.exit_code, 2);
  EXPECT_NE(fraction.err.find("'config.zero' must be 0, 1, 2 or 3"), std::string::npos) << fraction.err;
}

TEST(HfTable, UnknownModelTypeIsRefusedNamingTheSupportedOnes) {
  const std::string path = write_temp("bert.json", R"({"model_type": "bert", "hidden_size": 64,
    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 8})");
  try {
    load_model(path);
    FAIL() << "bert was read";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'bert'"), std::string::npos) << what;
    for (const char* type : {"llama", "qwen2_moe", "deepseek_v3", "gemma2", "gpt_neox"})
      EXPECT_NE(what.find(type), std::string::npos) << what;
  }
  // Gemma-2 is read, and what it has that the cost model lacks is named.
  const std::string gemma = write_temp("gemma.json", R"({"model_type": "gemma2", "hidden_size": 2304,
    "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
    "intermediate_size": 9216, "vocab_size": 256000, "max_position_embeddings": 8192})");
  const ModelSpec m = load_model(gemma);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_NE(m.unmodelled.find("soft-capping"), std::string::npos);
}

TEST(OneValidator, EstimateCheckAndPlanRejectTheSameConfigWithTheSameMessage) {
  const std::string job =
      "--model gpt3-175b --cluster dgx-a100 --gpus 1536 --gbs 1536 --seq 2048 --tp 5 --pp 8";
  const std::string expected = "tp 5 must divide the model's 96 attention heads";
  std::string first;
  for (const char* command : {"estimate", "check", "plan"}) {
    const auto run = run_cli(std::string(command) + " " + job);
    EXPECT_EQ(run.exit_code, 2) << command;
    EXPECT_NE(run.err.find(expected), std::string::npos) << command << ": " << run.err;
    const std::string sentence = run.err.substr(0, run.err.find_first_of(";\n"));
    if (first.empty()) first = sentence;
    EXPECT_EQ(sentence, first) << command;
  }
}

TEST(OneValidator, TensorParallelMustDivideTheKeyValueGroups) {
  // Megatron-Core TransformerConfig: num_query_groups % tensor_model_parallel_size == 0.
  ModelSpec m;
  m.layers = 32, m.hidden = 4096, m.ffn_hidden = 14336, m.heads = 32, m.kv_groups = 8, m.head_dim = 128;
  EXPECT_FALSE(tp_rule(m, 8));
  const ConfigViolation v = tp_rule(m, 16);
  EXPECT_EQ(v.rule, ConfigRule::kTpKvGroups);
  EXPECT_EQ(describe(v).find("tp 16 must divide the model's 8 key/value groups"), 0u) << describe(v);
}

}  // namespace
}  // namespace parplan
