// --routing-stats: measured expert loads set the MoE imbalance of each ep
// (contiguous placement, mean over layers); a more skewed file never
// predicts a faster step; bad files exit 2 with one line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cost/moe.h"
#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/model_loader.h"
#include "src/io/routing_stats.h"
#include "tests/cli_support.h"
#include "tests/data_parallel_case.h"

namespace parplan {
namespace {

using test::CliRun;
using test::run_cli;

using test::write_temp;

// Hand-computed: layer 0 = 8,2,1,1 -> ranks of 2 experts: 10, 2 (mean 6):
// 10/6; layer 1 = 1,1,1,1 -> 1. Mean over layers (10/6 + 1) / 2; with one
// expert per rank layer 0 is 8/3.
TEST(RoutingStats, ContiguousRanksMeanOverLayers) {
  const ExpertLoads loads = parse_expert_loads("8,2,1,1\n1,1,1,1\n", "test");
  EXPECT_DOUBLE_EQ(contiguous_ep_imbalance(loads, 1), 1.0);
  EXPECT_DOUBLE_EQ(contiguous_ep_imbalance(loads, 2), (10.0 / 6.0 + 1.0) / 2.0);
  EXPECT_DOUBLE_EQ(contiguous_ep_imbalance(loads, 4), (8.0 / 3.0 + 1.0) / 2.0);
  EXPECT_DOUBLE_EQ(load_imbalance({3, 1}), 1.5);
}

// Loads (1 - a) uniform + a peaked: every rank load is linear in a, so the
// imbalance grows with a, and so must the predicted step time.
std::string mixed_loads(double a) {
  std::ostringstream out;
  const double peaked[8] = {40, 5, 5, 10, 5, 20, 5, 10};  // sums to 100
  for (int layer = 0; layer < 4; ++layer) {
    for (int e = 0; e < 8; ++e) out << (e ? "," : "") << (1 - a) * 12.5 + a * peaked[(e + layer) % 8];
    out << "\n";
  }
  return out.str();
}

TEST(RoutingStats, MoreSkewedLoadsNeverPredictAFasterStep) {
  const ModelSpec m = load_model("mixtral-8x7b");
  const ClusterSpec c = load_cluster("dgx-h100");
  auto [job, config] = test::data_parallel_case(64, 256, 4096, 1, 1);
  config.ep = 8;
  double previous_s = 0, previous_imbalance = 0;
  for (double a : {0.0, 0.2, 0.4, 0.6, 0.8, 1.0}) {
    apply_routing_stats(write_temp("mix" + std::to_string(a) + ".csv", mixed_loads(a)), m, job);
    const double imbalance = moe_imbalance(m, job, config);
    const double step_s = estimate_cost(m, c, job, config).time.step_s;
    EXPECT_GE(imbalance, previous_imbalance) << a;
    EXPECT_GE(step_s, previous_s) << a;
    previous_s = step_s, previous_imbalance = imbalance;
  }
  EXPECT_DOUBLE_EQ(previous_imbalance, 40.0 / 12.5);  // a = 1, one expert per rank
  // ep 2 sums four experts per rank: the file's imbalance there is smaller.
  config.ep = 2;
  EXPECT_LT(moe_imbalance(m, job, config), previous_imbalance);
}

TEST(RoutingStats, CliSkewedFileIsNotFaster) {
  const std::string base =
      "estimate --model mixtral-8x7b --cluster dgx-h100 --gpus 64 --gbs 256 --seq 4096 "
      "--tp 1 --pp 1 --ep 8 --zero 1 --format json --routing-stats ";
  const CliRun flat = run_cli(base + write_temp("flat.csv", mixed_loads(0.1)));
  const CliRun skewed = run_cli(base + write_temp("skewed.json", "{\"loads\": [[40,5,5,10,5,20,5,10]]}"));
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  ASSERT_EQ(skewed.exit_code, 0) << skewed.err;
  const auto step = [](const std::string& out) {
    return nlohmann::json::parse(out)["time"]["step_s"].get<double>();
  };
  EXPECT_GT(step(skewed.out), step(flat.out));
}

// Fuzz-style bad files on each command that takes --routing-stats.
TEST(RoutingStatsCli, BadFilesExitTwoWithOneLine) {
  const std::string job = " --model mixtral-8x7b --cluster dgx-h100 --gpus 16 --gbs 32 --seq 4096";
  const std::string estimate = "estimate" + job + " --tp 1 --pp 1 --ep 8 --routing-stats ";
  const std::vector<std::pair<std::string, std::string>> files = {
      {"", "empty"},
      {"\n\n  \n", "empty"},
      {"1,2,3,4,5,6,7,8\n1,2,3\n", "layer 1 has 3"},
      {"1,2,3,4,5,6,7,nan\n", "not a finite number"},
      {"1,2,3,4,5,6,7,NaN\n", "not a finite number"},
      {"1,-2,3,4,5,6,7,8\n", "negative"},
      {"1,2,3,4,5,6,7,-0.5\n", "negative"},
      {"1,2,3,4,5,6,7,1e999\n", "not a finite number"},
      {"1,2,3,4,5,6,7,x\n", "'x'"},
      {"0,0,0,0,0,0,0,0\n", "no tokens"},
      {"{\"loads\": []}", "--routing-stats"},
      {"{\"loads\": [[1,2,3,4,5,6,7,8],[1,2]]}", "layer 1 has 2"},
      {"{\"loads\": [[1,2,3,4,5,6,7,null]]}", "layer 0, expert 7"},
      {"{\"loads\": [[1,2,3,4,5,6,7,8]", "not valid JSON"},
      {"1,2,3,4\n", "8 routed experts"},
  };
  int i = 0;
  for (const auto& [text, needle] : files) {
    const std::string path = write_temp("bad" + std::to_string(i++) + ".csv", text);
    test::expect_cli_refusal(estimate + path, needle);
  }
  const std::string bad = write_temp("plan_bad.csv", "1,2,3,4,5,6,7,nan\n");
  test::expect_cli_refusal("plan" + job + " --routing-stats " + bad, "--routing-stats");
  test::expect_cli_refusal("check" + job + " --tp 1 --pp 1 --routing-stats " + bad, "--routing-stats");
  test::expect_cli_refusal(estimate + "/nonexistent/loads.csv", "no such file");
  const std::string ok = write_temp("ok.csv", "1,2,3,4,5,6,7,8\n");
  test::expect_cli_refusal(estimate + ok + " --moe-imbalance 1.1", "give one of them");
  test::expect_cli_refusal(
      "estimate --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 8 --seq 4096 --tp 1 --pp 1 "
      "--routing-stats " +
          ok,
      "MoE models only");
}

}  // namespace
}  // namespace parplan
