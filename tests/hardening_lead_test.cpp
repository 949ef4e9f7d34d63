// Issue 17 items that live in files being reworked on main (the YAML helper,
// the cost model's config rules). Written as CLI reproductions and
// here; enable each when its fix lands.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::CliRun;
using test::run_cli;

const std::string kJobHead = "model: gpt3-175b\ncluster: dgx-a100\ngbs: 1536\nseq: 2048\n";

// Item 6: a duplicate key in a job or cluster file took the first value.
TEST(HardeningLead, DuplicateKeysInJobFilesAreRefused) {
  test::expect_cli_refusal("plan --job " + test::write_temp("dup.yaml", kJobHead + "gpus: 1024\ngpus: 8\n"),
                           "gpus");
}

TEST(HardeningLead, DuplicateKeysInClusterFilesAreRefused) {
  std::ifstream in(std::string(PARPLAN_SOURCE_DIR) + "/hardware-profiles/dgx-a100.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const std::string path = test::write_temp("dup_cluster.yaml", text.str() + "nodes: 3\n");
  test::expect_cli_refusal("plan --model gpt3-175b --cluster " + path + " --gpus 1024 --gbs 1536 --seq 2048",
                           "nodes");
}

// Item 6: a second YAML document was ignored.
TEST(HardeningLead, SecondYamlDocumentIsRefused) {
  test::expect_cli_refusal(
      "plan --job " + test::write_temp("two_docs.yaml", kJobHead + "gpus: 1024\n---\ngpus: 8\n"), "document");
}

// Item 9: `first_stage_layers: 200` on a 96-layer model was answered with
// "(or give first/last stage layers)".
TEST(HardeningLead, FirstStageLayersBeyondTheModelSaysSo) {
  const std::string job = test::write_temp(
      "first200.yaml", kJobHead + "gpus: 1024\nconfig: {tp: 8, pp: 8, first_stage_layers: 200}\n");
  const CliRun run = run_cli("estimate --job " + job);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("first_stage_layers"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("96"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("or give first/last stage layers"), std::string::npos) << run.err;
}

// Item 6: a Hugging Face config.json with a duplicate key took the last.
TEST(HardeningLead, DuplicateKeysInHfConfigAreRefused) {
  const std::string config = test::write_temp(
      "dup_config.json",
      R"({"model_type":"llama","num_hidden_layers":32,"num_hidden_layers":16,"hidden_size":4096,)"
      R"("intermediate_size":14336,"num_attention_heads":32,"num_key_value_heads":8,"vocab_size":128256,)"
      R"("max_position_embeddings":8192})");
  test::expect_cli_refusal("plan --model " + config + " --cluster dgx-h100 --gpus 8 --gbs 8 --seq 2048",
                           "num_hidden_layers");
}

}  // namespace
}  // namespace parplan
