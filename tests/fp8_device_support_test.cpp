// fp8 training needs fp8 tensor cores: Transformer Engine asserts compute
// capability 8.9+ (Ada/Hopper) for fp8 execution, torchao's float8 the same,
// and MI250X (CDNA2) has no fp8 matrix cores. A job asking fp8 on such a
// device is an impossible request (exit 2 naming the precision), never a plan
// timed at the bf16 peak.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::CliRun;
using test::run_cli;

void expect_fp8_refused(const std::string& args) {
  const CliRun run = run_cli(args);
  test::expect_refusal(run, "fp8", args);
  EXPECT_NE(run.err.find("bf16"), std::string::npos) << run.err;
}

TEST(Fp8DeviceSupport, PlansOnDevicesWithoutFp8AreRefused) {
  expect_fp8_refused(
      "plan --model llama3-8b --cluster frontier --gpus 64 --gbs 512 --seq 8192 --precision fp8");
  expect_fp8_refused(
      "plan --model llama3-8b --cluster dgx-a100 --gpus 64 --gbs 512 --seq 8192 --precision fp8");
  expect_fp8_refused(
      "estimate --model llama3-8b --cluster dgx-a100 --gpus 8 --gbs 64 --seq 4096 --tp 8 --precision fp8");
}

TEST(Fp8DeviceSupport, ScatterOnDevicesWithoutFp8IsRefused) {
  const std::string lengths = test::write_temp("fp8_lengths.txt", "4096 8192 1024\n");
  expect_fp8_refused("scatter --lengths " + lengths +
                     " --gpus 8 --model llama3-8b --cluster dgx-a100 --precision fp8");
}

TEST(Fp8DeviceSupport, HopperStillPlansFp8) {
  const CliRun run =
      run_cli("plan --model llama3-8b --cluster dgx-h100 --gpus 64 --gbs 512 --seq 8192 --precision fp8");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

}  // namespace
}  // namespace parplan
