// check's optimum runs the attention kernel the config names, as plan
// --attention searches only that kernel: the config plan recommends is the
// optimum check states (gap 0), and a flash config on a profile whose default
// is unfused is measured against the flash optimum, not the unfused one.
// Unnamed, each engine runs its own kernel in both commands.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace check_attention {

std::string config_flags(const nlohmann::json& c) {
  std::string out;
  for (const char* key : {"tp", "pp", "vp", "cp", "mbs", "zero"})
    out += std::string(" --") + key + " " + std::to_string(c[key].get<int>());
  out += " --recompute " + c["recompute"].get<std::string>();
  if (c["recompute_layers"].get<int>() > 0)
    out += " --recompute-layers " + std::to_string(c["recompute_layers"].get<int>());
  if (c["sp"].get<bool>()) out += " --sp";
  return out;
}

TEST(CheckAttentionKernel, ThePlannedConfigIsTheOptimumForEitherKernel) {
  const std::string job = "--model llama3-8b --cluster dgx-h100 --gpus 16 --gbs 128 --seq 4096";
  for (const std::string attention : {"flash", "unfused"}) {
    const nlohmann::json plan =
        test::cli_json("plan " + job + " --attention " + attention + " --format json --no-timings");
    ASSERT_EQ(plan["config"]["attention"], attention);
    const std::string engine = plan["engine"].get<std::string>();
    const test::CliRun run = test::run_cli("check " + job + config_flags(plan["config"]) + " --attention " +
                                           attention + " --engine " + engine + " --format json --no-timings");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const nlohmann::json check = nlohmann::json::parse(run.out);
    EXPECT_NEAR(check["gap_percent"].get<double>(), 0.0, 1e-9) << attention << "\n" << run.out;
    EXPECT_NEAR(check["optimum_step_s"].get<double>(), plan["time"]["step_s"].get<double>(),
                1e-9 * plan["time"]["step_s"].get<double>());
  }
}

// dgx-a100's profile times attention unfused by default (its calibration
// runs had no fused kernel): a flash config is checked against plan
// --attention flash's optimum.
TEST(CheckAttentionKernel, AFlashConfigMeetsTheFlashOptimum) {
  const std::string job =
      "--model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048 --engine megatron";
  const nlohmann::json plan = test::cli_json("plan " + job + " --attention flash --format json --no-timings");
  const test::CliRun run = test::run_cli("check " + job +
                                         " --tp 4 --pp 16 --vp 6 --cp 1 --mbs 1 --zero 0 --recompute "
                                         "selective --sp --attention flash --format json "
                                         "--no-timings");
  const nlohmann::json check = nlohmann::json::parse(run.out);
  const double optimum_s = plan["time"]["step_s"].get<double>();
  EXPECT_NEAR(check["optimum_step_s"].get<double>(), optimum_s, 1e-9 * optimum_s);
  EXPECT_EQ(check["optimum"]["config"]["attention"], "flash");
  EXPECT_NEAR(check["gap_percent"].get<double>(), (check["step_s"].get<double>() / optimum_s - 1.0) * 100.0,
              1e-6);
  EXPECT_GT(check["gap_percent"].get<double>(), 0.0);
}

// Without --attention under --engine any each engine searches its own
// kernel, as plan does (torchtitan runs SDPA's flash path, the others the
// profile's): plan's optimum, checked as it came (here a torchtitan plan on
// dgx-a100, whose profile default is unfused), is check's optimum, gap 0.
TEST(CheckAttentionKernel, UnnamedAttentionIsEachEnginesAsInPlan) {
  const std::string job = "--model qwen3-30b-a3b --cluster dgx-a100 --gpus 64 --gbs 512 --seq 4096";
  const nlohmann::json plan = test::cli_json("plan " + job + " --format json --no-timings");
  const nlohmann::json& c = plan["config"];
  std::string flags = config_flags(c) + " --ep " + std::to_string(c["ep"].get<int>()) + " --etp " +
                      std::to_string(c["etp"].get<int>());
  if (c["first_stage_layers"].get<int>() > 0)
    flags += " --first-stage-layers " + std::to_string(c["first_stage_layers"].get<int>()) +
             " --last-stage-layers " + std::to_string(c["last_stage_layers"].get<int>());
  const test::CliRun run = test::run_cli("check " + job + flags + " --max-gap 0 --format json --no-timings");
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const nlohmann::json check = nlohmann::json::parse(run.out);
  const double optimum_s = plan["time"]["step_s"].get<double>();
  EXPECT_NEAR(check["optimum_step_s"].get<double>(), optimum_s, 1e-9 * optimum_s) << run.out;
  EXPECT_NEAR(check["gap_percent"].get<double>(), 0.0, 1e-9) << run.out;
  EXPECT_EQ(check["config"]["attention"], plan["config"]["attention"]);
}

}  // namespace check_attention
}  // namespace parplan
