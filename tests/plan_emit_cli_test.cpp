// `plan --emit`: the CLI writes the launch files of a plan the engine accepts,
// and nothing when it cannot.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;
using test::run_cli;

std::string fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("parplan_emit_cli_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  return dir.string();
}

TEST(PlanEmitCli, MegatronTorchrunWritesAnExecutableLaunchScript) {
  const std::string out = fresh_dir("megatron");
  const auto run = run_cli("plan --job " + std::string(PARPLAN_SOURCE_DIR) +
                           "/examples/gpt3-175b-a100.yaml --emit megatron --launcher torchrun --out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const fs::path script = fs::path(out) / "launch.sh";
  ASSERT_TRUE(fs::exists(script));
  EXPECT_NE(fs::status(script).permissions() & fs::perms::owner_exec, fs::perms::none);
  const std::string text = test::slurp(script.string());
  EXPECT_NE(text.find("pretrain_gpt.py"), std::string::npos);
  EXPECT_NE(text.find("--tensor-model-parallel-size"), std::string::npos);
}

TEST(PlanEmitCli, DeepSpeedConfigFollowsTheBatchRule) {
  const std::string out = fresh_dir("deepspeed");
  const auto run = run_cli("plan --job " + std::string(PARPLAN_SOURCE_DIR) +
                           "/examples/gpt3-175b-a100.yaml --emit deepspeed --out " + out + " --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto plan = nlohmann::json::parse(run.out);
  const auto ds = nlohmann::json::parse(test::slurp(out + "/ds_config.json"));
  const int dp = plan["config"]["dp"];
  EXPECT_EQ(ds["train_batch_size"].get<int>(), ds["train_micro_batch_size_per_gpu"].get<int>() *
                                                   ds["gradient_accumulation_steps"].get<int>() * dp);
  EXPECT_EQ(ds["train_batch_size"].get<int>(), 1536);
}

TEST(PlanEmitCli, BadEngineOrMissingOutWritesNothing) {
  const std::string out = fresh_dir("bad");
  const std::string job = "plan --job " + std::string(PARPLAN_SOURCE_DIR) + "/examples/gpt3-175b-a100.yaml";
  const auto unknown = run_cli(job + " --emit nemo --out " + out);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(test::line_count(unknown.err), 1) << unknown.err;
  EXPECT_FALSE(fs::exists(out));
  const auto no_out = run_cli(job + " --emit megatron");
  EXPECT_EQ(no_out.exit_code, 2);
  EXPECT_NE(no_out.err.find("--out"), std::string::npos);
}

}  // namespace
}  // namespace parplan
