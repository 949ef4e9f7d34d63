// An engine that recomputes every layer of a chunk or none (DeepSpeed's
// activation checkpointing, torchtitan's full AC, Megatron-DeepSpeed's
// checkpoint interval) still gets full recomputation in the search: the
// search once sized it to the fewest layers that fit, which those engines
// refuse, so DeepSpeed lost ZeRO-3 with checkpointing wherever fewer layers
// would have fitted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_support.h"

namespace parplan::engine_recompute_space_test {
namespace {

// Llama 3 70B on 64 H100s: ZeRO-3 with every layer recomputed fits (about
// 30 GiB of 78), and some fewer layers would have too.
const std::string kJob =
    " --model llama3.1-70b --cluster dgx-h100 --gpus 64 --gbs 256 --seq 4096 --format json";

TEST(EngineRecomputeSpace, TheOptimumIsNoSlowerThanAFullRecomputeConfigTheEngineRuns) {
  for (const char* engine : {"deepspeed", "torchtitan"}) {
    const std::string flags = std::string(" --engine ") + engine;
    const nlohmann::json given =
        test::cli_json("estimate" + kJob + flags + " --tp 1 --pp 1 --zero 3 --mbs 4 --recompute full");
    ASSERT_TRUE(given["memory"]["fits"].get<bool>()) << engine;
    const nlohmann::json plan = test::cli_json("plan" + kJob + flags);
    EXPECT_LE(plan["time"]["step_s"].get<double>(), given["time"]["step_s"].get<double>() * (1 + 1e-9))
        << engine << ": " << plan["config"].dump();
    // What the plan recomputes is what the engine runs: every layer of a chunk.
    const nlohmann::json& c = plan["config"];
    const int layers = c["recompute_layers"].get<int>();  // 0: every layer
    if (c["recompute"] == "full" && layers > 0) {
      EXPECT_EQ(layers * c["pp"].get<int>() * c["vp"].get<int>(), 80) << c.dump();
    }
  }
}

// Where memory is short the infeasibility names the leanest config as it was
// tried, its micro-batch and recomputation included.
TEST(EngineRecomputeSpace, TheLeanestConfigIsNamedAsTried) {
  const test::CliRun run = test::run_cli(
      "plan --model llama3-405b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 8192 --engine deepspeed");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(
      run.err.find("memory: even the leanest config (tp 1, cp 1, pp 1, dp 8, zero 3, mbs 1, full recompute)"),
      std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace parplan::engine_recompute_space_test
