// Flags that shape the pipeline split and the expert all-to-all: a valid
// request is taken, a contradictory one refused in one line naming the flag
// (docs/errors.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::cli_json;
using test::expect_cli_refusal;

// 61 layers as 8 + 6 x 8 + 5: the middle stages hold 8, more than 61 / 8.
const std::string kUneven =
    "estimate --model deepseek-v3 --cluster dgx-h800 --gpus 256 --gbs 1024 --seq 4096 --tp 2 --sp --pp 8 "
    "--ep 16 --zero 1 --recompute full --first-stage-layers 8 --last-stage-layers 5 --no-timings";

TEST(RecomputeLayersFlag, CountsTheLargestStageOfAnUnevenSplit) {
  const auto eight = cli_json(kUneven + " --recompute-layers 8 --format json");
  EXPECT_EQ(eight["config"]["recompute_layers"], 8);
  expect_cli_refusal(kUneven + " --recompute-layers 9",
                     "--recompute-layers 9 exceeds the 8 layers of the largest model chunk");
}

TEST(RecomputeLayersFlag, CountsAChunkOfAnEvenSplit) {
  // 32 layers over pp 4 x vp 2: chunks of 4.
  const std::string even =
      "estimate --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096 --tp 2 --pp 4 --vp 2 "
      "--recompute full --no-timings";
  EXPECT_EQ(cli_json(even + " --recompute-layers 4 --format json")["config"]["recompute_layers"], 4);
  expect_cli_refusal(even + " --recompute-layers 5", "--recompute-layers 5 exceeds the 4 layers");
}

const std::string kMixtral = "plan --model mixtral-8x7b --cluster dgx-h100 --gpus 16 --gbs 256 --seq 4096";

TEST(SplitFlags, FirstStageLayersThatLeaveTheOtherStagesNothingAreRefused) {
  expect_cli_refusal(kMixtral + " --pp 2 --first-stage-layers 40", "--first-stage-layers 40");
  expect_cli_refusal(kMixtral + " --pp 2 --first-stage-layers 32", "every stage needs a layer");
  expect_cli_refusal(kMixtral + " --pp 2 --first-stage-layers 10 --last-stage-layers 10",
                     "must add up to the model's 32 layers");
  expect_cli_refusal(kMixtral + " --pp 4 --first-stage-layers 6", "leave a multiple of 3");
}

TEST(SplitFlags, HierarchicalAllToAllWithoutExpertParallelismIsRefused) {
  expect_cli_refusal(kMixtral + " --a2a hierarchical --ep 1", "--a2a hierarchical");
}

}  // namespace
}  // namespace parplan
