// The sweep CSV as a contract (issue 12, item 8): the same bytes with and
// without --emit-slurm-array, every column documented in docs/sweep.md, and
// model files named by their name or file stem, never by their path.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "cli_support.h"
#include "src/io/data_paths.h"
#include "src/plan/sweep.h"
#include "src/report/sweep_report.h"
#include "tests/temp_dir.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;
using test::CliRun;
using test::run_cli;
using test::slurp;

using test::TempDir;

TEST(SweepCsvContract, SameBytesWithAndWithoutTheSlurmArray) {
  TempDir dir;
  // A dense and an MoE model, points with and without a plan.
  const std::string grid =
      "sweep --models gpt-1.7b,mixtral-8x7b,gpt-1t --cluster dgx-a100 --gpus 8,64 --gbs 128,512 --seq 2048 "
      "--no-timings";
  for (const std::string engine : {" --engine megatron", " --engine deepspeed"}) {
    const fs::path plain = dir.path / ("plain" + std::to_string(engine.size()) + ".csv");
    const fs::path with = dir.path / ("with" + std::to_string(engine.size()) + ".csv");
    const fs::path json_plain = dir.path / ("plain" + std::to_string(engine.size()) + ".json");
    const fs::path json_with = dir.path / ("with" + std::to_string(engine.size()) + ".json");
    const CliRun a = run_cli(grid + engine + " --csv " + plain.string() + " --json " + json_plain.string());
    ASSERT_EQ(a.exit_code, 0) << a.err;
    const CliRun b =
        run_cli(grid + engine + " --csv " + with.string() + " --json " + json_with.string() +
                " --emit-slurm-array " + (dir.path / ("array" + std::to_string(engine.size()))).string());
    ASSERT_EQ(b.exit_code, 0) << b.err;
    const std::string csv = slurp(plain.string());
    EXPECT_EQ(csv, slurp(with.string())) << "engine:" << engine;
    EXPECT_EQ(slurp(json_plain.string()), slurp(json_with.string())) << "engine:" << engine;
    // The table on stdout too, but for the array's closing line.
    EXPECT_EQ(b.out.rfind(a.out, 0), 0u) << b.out;
    // Every row with a plan names the engine asked for.
    const std::string asked = engine.substr(engine.rfind(' ') + 1);
    const std::string other = asked == "megatron" ? "deepspeed" : "megatron";
    EXPECT_EQ(csv.find("," + other + ","), std::string::npos) << "engine:" << engine;
    EXPECT_NE(csv.find("," + asked + ","), std::string::npos) << "engine:" << engine;
  }
}

TEST(SweepCsvContract, EveryColumnIsDocumented) {
  const std::string doc = slurp((data_dir() / "docs" / "sweep.md").string());
  const auto start = doc.find("**CSV**");
  ASSERT_NE(start, std::string::npos);
  const auto end = doc.find("**JSON**", start);
  const std::string table = doc.substr(start, end - start);
  // Table rows name columns as `a`, or `a`, `b`, ... in the first cell.
  std::set<std::string> documented;
  const std::regex row(R"(^\| ([^|]+) \|)");
  const std::regex name("`([a-z_]+)`");
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::smatch cell;
    if (!std::regex_search(line, cell, row)) continue;
    const std::string first = cell[1];
    for (std::sregex_iterator it(first.begin(), first.end(), name), stop; it != stop; ++it)
      documented.insert((*it)[1]);
  }
  for (const std::string& column : sweep_columns()) EXPECT_EQ(documented.count(column), 1u) << column;
  EXPECT_EQ(documented.size(), sweep_columns().size());
}

TEST(SweepCsvContract, ModelFilesAreNamedByStemNotPath) {
  TempDir dir;
  // A model YAML without a name: field, and a Hugging Face config.json in its checkpoint directory.
  std::string yaml = slurp((data_dir() / "models" / "gpt-1.7b.yaml").string());
  yaml = std::regex_replace(yaml, std::regex("(^|\n)name:[^\n]*"), "$1");
  std::ofstream(dir.path / "my-model.yaml") << yaml;
  fs::create_directories(dir.path / "Qwen2.5-0.5B");
  std::ofstream(dir.path / "Qwen2.5-0.5B" / "config.json") << R"({
    "model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
    "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936,
    "max_position_embeddings": 32768, "tie_word_embeddings": true})";
  const std::vector<ModelSpec> models =
      load_sweep_models((dir.path / "my-model.yaml").string() + "," +
                            (dir.path / "Qwen2.5-0.5B" / "config.json").string() + ",llama3-8b",
                        "--models");
  ASSERT_EQ(models.size(), 3u);
  EXPECT_EQ(models[0].name, "my-model");
  EXPECT_EQ(models[1].name, "Qwen2.5-0.5B");
  EXPECT_EQ(models[2].name, "llama3-8b");
  EXPECT_EQ(sweep_model_name("runs/a/config.json"), "a");
  EXPECT_EQ(sweep_model_name("x/y/tiny.yaml"), "tiny");
}

}  // namespace
}  // namespace parplan
