// Requests that contradict themselves or the model are refused (exit 2, one
// line naming the flag): expert flags on a dense model, a job file's dp
// that its own split contradicts under plan, a group-size list with an
// empty or repeated item, more experts a layer than the limit, and a time
// limit outside the range every command keeps.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "src/io/data_paths.h"
#include "tests/cli_support.h"

namespace parplan {
namespace contradictory_flags {

const std::string kDense = "--model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096";

TEST(ContradictoryFlags, ExpertFlagsOnADenseModelAreRefused) {
  test::expect_cli_refusal("estimate " + kDense + " --tp 1 --pp 1 --moe-imbalance 1.5",
                           "--moe-imbalance: model llama3-8b is dense");
  test::expect_cli_refusal("plan " + kDense + " --moe-imbalance 2",
                           "--moe-imbalance: model llama3-8b is dense");
  test::expect_cli_refusal("estimate " + kDense + " --tp 1 --pp 1 --a2a-compression 0.5 --allow-lossy-comm",
                           "--a2a-compression: model llama3-8b is dense");
}

TEST(ContradictoryFlags, PlanRefusesAJobFileWhoseDpContradictsItsSplit) {
  const std::string job = test::write_temp(
      "dp-contradicts.yaml",
      "model: llama3-70b\ncluster: dgx-h100\ngpus: 64\ngbs: 512\nseq: 8192\nconfig: {tp: 8, pp: 4, dp: 7}\n");
  test::expect_cli_refusal("plan --job " + job, "config: dp 7 disagrees with the job");
}

// A pinned ZeRO stage with pins that leave one data-parallel rank shards
// over nothing: named as such, not as configs no engine runs.
TEST(ContradictoryFlags, ZeroPinnedWhereNothingIsShardedIsRefused) {
  test::expect_cli_refusal(
      "plan --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 8 --seq 4096 --tp 8 --zero 3",
      "zero: ZeRO-3 shards the model states over the data-parallel (x cp) ranks, and every split of 8 GPUs "
      "the "
      "pinned sizes leave has dp x cp = 1");
}

// run_trials.sh runs the trials from one shell: a multi-node torchrun trial
// would wait for nodes that never join. Refused before anything is written.
TEST(ContradictoryFlags, TuneRefusesMultiNodeTrialsUnderTorchrun) {
  const std::string out = ::testing::TempDir() + "tune-torchrun-multinode";
  test::expect_cli_refusal("tune --job " + std::string(PARPLAN_SOURCE_DIR) +
                               "/examples/calibrate/tune-job-fp8.yaml --trials 6 --emit torchtitan "
                               "--engine-version 0.2 --launcher torchrun --out " +
                               out,
                           "--launcher torchrun: trial 1 (plan-1) runs on 4 nodes");
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(ContradictoryFlags, GroupSizeListsWithAnEmptyOrRepeatedItemAreRefused) {
  const std::string scatter =
      "scatter --lengths " + (data_dir() / "examples/scatter/small-steps.json").string() +
      " --gpus 8 --coefficients " + (data_dir() / "examples/scatter/flexsp-gpt-7b-64xa100.json").string();
  test::expect_cli_refusal(scatter + " --group-sizes 1,2,4,8,",
                           "--group-sizes: '1,2,4,8,' ends in an empty item");
  test::expect_cli_refusal(scatter + " --group-sizes 1,2,2", "--group-sizes: group size 2 is listed twice");
}

TEST(ContradictoryFlags, ExpertsKeepsTheLimitsOfEveryCommand) {
  std::string row;
  for (int e = 0; e < (1 << 20) + 1; ++e) row += e ? ",1" : "1";
  const std::string wide = test::write_temp("wide-loads.csv", row + "\n");
  test::expect_cli_refusal("experts --loads " + wide + " --gpus 1",
                           "1048577 experts per layer, over 1048576");
  const std::string loads =
      "experts --loads " + (data_dir() / "examples/experts/mixtral-like.json").string() + " --gpus 8";
  test::expect_cli_refusal(loads + " --time-limit 604801",
                           "--time-limit '604801' must be a number of seconds");
  test::expect_cli_refusal(loads + " --time-limit 0.0005",
                           "--time-limit '0.0005' must be a number of seconds");
}

TEST(ContradictoryFlags, ArrayParallelWithoutTheArrayIsRefused) {
  test::expect_cli_refusal(
      "sweep --models llama3-8b --cluster dgx-h100 --seq 4096 --gbs 64 --gpus 8,16 --array-parallel 4",
      "only apply with --emit-slurm-array");
}

}  // namespace contradictory_flags
}  // namespace parplan
