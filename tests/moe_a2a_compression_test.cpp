// --a2a-compression R: the expert all-to-all carries R of the bytes (LSH-MoE
// style), only with --allow-lossy-comm; bad ratios exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cost/moe_dispatch.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::CliRun;
using test::run_cli;

// The sent bytes are linear in tokens x ratio: compressing by R is sending
// R of the tokens, flat or hierarchical.
TEST(A2aCompression, DispatchOfRIsDispatchOfRTimesTheTokens) {
  const ModelSpec m = load_model("deepseek-v3");
  const ClusterSpec c = load_cluster("dgx-h800");
  for (bool hierarchical : {false, true}) {
    const GroupSpan span = group_span_at(c, 64, 1, 0);
    DispatchShape full;
    full.tokens = 4096;
    full.hierarchical = hierarchical;
    DispatchShape compressed = full;
    compressed.compression = 0.25;
    DispatchShape fewer = full;
    fewer.tokens = 1024;
    EXPECT_DOUBLE_EQ(dispatch_s(c, span, m, compressed), dispatch_s(c, span, m, fewer));
    EXPECT_LT(dispatch_s(c, span, m, compressed), dispatch_s(c, span, m, full));
  }
}

TEST(A2aCompression, LossyOptInAndRange) {
  const std::string job =
      " --model mixtral-8x7b --cluster dgx-h100 --gpus 64 --gbs 256 --seq 4096 --tp 1 --pp 1 --ep 8 --zero 1";
  test::expect_cli_refusal("estimate" + job + " --a2a-compression 0.5", "--allow-lossy-comm");
  test::expect_cli_refusal("check" + job + " --a2a-compression 0.5", "--allow-lossy-comm");
  test::expect_cli_refusal(
      "plan --model mixtral-8x7b --cluster dgx-h100 --gpus 64 --gbs 256 --seq 4096 --a2a-compression 0.5",
      "--allow-lossy-comm");
  test::expect_cli_refusal("estimate" + job + " --a2a-compression 0 --allow-lossy-comm", "(0, 1]");
  test::expect_cli_refusal("estimate" + job + " --a2a-compression 1.5 --allow-lossy-comm", "from 0 to 1");
  test::expect_cli_refusal("estimate" + job + " --a2a-compression nan --allow-lossy-comm",
                           "--a2a-compression");
  const auto step = [](const CliRun& run) {
    return nlohmann::json::parse(run.out)["time"]["step_s"].get<double>();
  };
  const CliRun plain = run_cli("estimate" + job + " --format json");
  const CliRun same = run_cli("estimate" + job + " --format json --a2a-compression 1 --allow-lossy-comm");
  const CliRun half = run_cli("estimate" + job + " --format json --a2a-compression 0.5 --allow-lossy-comm");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(same.exit_code, 0) << same.err;
  ASSERT_EQ(half.exit_code, 0) << half.err;
  EXPECT_DOUBLE_EQ(step(same), step(plain));
  EXPECT_LE(step(half), step(plain));
}

}  // namespace
}  // namespace parplan
