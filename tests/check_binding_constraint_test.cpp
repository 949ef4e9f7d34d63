// check's exit 1 names what binds (memory: how much more the config needs;
// the engine's rule), and states no gap for a config its engine does not
// run (it may look faster than every plan the engine runs).
#include <gtest/gtest.h>

#include "tests/cli_support.h"

namespace parplan {
namespace check_binding {

TEST(CheckBindingConstraint, AConfigThatDoesNotFitSaysHowMuchMoreItNeeds) {
  const test::CliRun run = test::run_cli(
      "check --model llama3-8b --cluster dgx-h100 --gpus 64 --gbs 256 --seq 4096 --tp 1 --pp 1 --zero 1 "
      "--mbs 2 --engine megatron");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("the config does not fit in memory: it needs"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("GiB more)"), std::string::npos) << run.err;
}

TEST(CheckBindingConstraint, AConfigItsEngineDoesNotRunHasNoGap) {
  const nlohmann::json j = [] {
    const test::CliRun run = test::run_cli(
        "check --model llama3.2-1b --cluster dgx-h100 --gpus 64 --gbs 16 --seq 4096 --tp 1 --pp 2 --cp 2 "
        "--mbs 1 --zero 1 --recompute selective --engine deepspeed --format json");
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find("deepspeed cannot run this config"), std::string::npos) << run.err;
    return nlohmann::json::parse(run.out);
  }();
  EXPECT_TRUE(j["gap_percent"].is_null()) << j.dump();
  EXPECT_FALSE(j["pass"].get<bool>());
  EXPECT_TRUE(j.contains("engine_problem"));
}

}  // namespace check_binding
}  // namespace parplan
