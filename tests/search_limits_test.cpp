// What plan searches at the edges of its space: context parallelism beyond
// 64 when pinned, Megatron's first/last split on a heterogeneous cluster, and
// micro-batches up to the global batch's limit.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_support.h"

namespace parplan::test {
namespace {

TEST(SearchLimits, PinnedContextParallelismBeyondSixtyFourIsSearched) {
  // 131072 tokens over cp 128: 1024 tokens per rank, 2 x 128 chunks divide it.
  const nlohmann::json j = cli_json(
      "plan --model llama3.2-1b --cluster dgx-h100 --gpus 256 --gbs 2 --seq 131072 --cp 128 --format json");
  EXPECT_EQ(j["config"]["cp"], 128);
}

TEST(SearchLimits, HeterogeneousClusterFallsBackToMegatronsFirstLastSplit) {
  // holmes-mixed's 40 GPUs put 32 layers on 5 stages: no even split, and
  // the per-stage counts of its node groups are no layout Megatron takes;
  // its first/last split is.
  const nlohmann::json j =
      cli_json("plan --model llama3-8b --cluster holmes-mixed --gpus 40 --gbs 40 --seq 8192 --format json");
  EXPECT_EQ(j["engine"], "megatron");
  const int pp = j["config"]["pp"];
  const int first = j["config"]["first_stage_layers"], last = j["config"]["last_stage_layers"];
  ASSERT_GT(pp, 2);
  EXPECT_EQ((32 - first - last) % (pp - 2), 0);
}

TEST(SearchLimits, MicroBatchesUpToTheGlobalBatchLimitAreCosted) {
  const CliRun r = run_cli(
      "estimate --model llama3.2-1b --cluster dgx-h100 --gpus 1 --gbs 2097152 --seq 2048 --mbs 2097152 --tp "
      "1 "
      "--pp 1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("parallel size"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace parplan::test
