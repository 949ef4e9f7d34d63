// Refusals that keep a command's input intact and its stderr one line: a
// sweep output naming a model or cluster file it reads, JSON nested past
// any real input (a stack overflow where it was quoted back), and --emit
// of a model with several features the engine cannot carry.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "src/io/data_paths.h"
#include "tests/cli_support.h"

namespace parplan {
namespace output_input_clash {

TEST(OutputInputClash, SweepRefusesToWriteOverAModelFileItReads) {
  const std::string model =
      test::write_temp("sweep-model.yaml", test::slurp((data_dir() / "models/llama3-8b.yaml").string()));
  const std::string before = test::slurp(model);
  for (const char* flag : {"--csv", "--json", "--plot"})
    test::expect_cli_refusal(
        "sweep --models " + model + " --cluster dgx-h100 --gpus 16 --seq 1024 --gbs 64 " + flag + " " + model,
        "is the --models input");
  EXPECT_EQ(test::slurp(model), before);
}

TEST(OutputInputClash, JsonNestedPastAnyRealInputIsRefused) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string config = test::write_temp("deep-config.json", deep);
  test::expect_cli_refusal(
      "estimate --model " + config + " --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096 --tp 1 --pp 1",
      "nested more than 64 levels");
  const std::string steps = test::write_temp("deep-steps.json", "{\"steps\": " + deep + "}");
  test::expect_cli_refusal("scatter --lengths " + steps + " --gpus 64 --coefficients " +
                               (data_dir() / "examples/scatter/flexsp-gpt-7b-64xa100.json").string(),
                           "nested more than 64 levels");
}

TEST(OutputInputClash, EmitNamesEveryFeatureItCannotCarryOnOneLine) {
  const std::string out = ::testing::TempDir() + "parplan_emit_oss_" + std::to_string(::getpid());
  test::expect_cli_refusal(
      "plan --model gpt-oss-20b --cluster dgx-h100 --gpus 64 --gbs 128 --seq 4096 "
      "--emit megatron --out " +
          out,
      "sliding-window attention");
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace output_input_clash
}  // namespace parplan
