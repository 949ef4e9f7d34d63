// `--timeline` through the binary (estimate, plan and check), and the output-path
// flags of every command refusing an empty path instead of reading it as
// "not given".
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace parplan::test {
namespace {

const std::string kGpt3 =
    "--model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 256 --seq 2048 --tp 8 --pp 8 --vp 2 --sp";

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(TimelineCli, EstimateDrawsEveryPassAndPrintsTheSameTable) {
  const std::string svg = ::testing::TempDir() + "timeline_" + std::to_string(::getpid()) + ".svg";
  const CliRun drawn = run_cli("estimate " + kGpt3 + " --timeline " + svg);
  const CliRun plain = run_cli("estimate " + kGpt3);
  ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
  EXPECT_EQ(drawn.out, plain.out);
  const std::string picture = slurp(svg);
  EXPECT_EQ(picture.rfind("<svg", 0), 0u);
  EXPECT_EQ(count(picture, ">stage "), 8);
  // 256 sequences over dp 16: 16 micro-batches, each forward and backward
  // through 2 chunks on each of 8 stages.
  EXPECT_EQ(count(picture, "<title>micro-batch"), 16 * 2 * 2 * 8);
  std::remove(svg.c_str());
}

TEST(TimelineCli, AJsonPathGetsAChromeTraceOfTheSamePasses) {
  const std::string path = ::testing::TempDir() + "timeline_" + std::to_string(::getpid()) + ".json";
  const CliRun run = run_cli("estimate " + kGpt3 + " --format json --timeline " + path);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto trace = nlohmann::json::parse(slurp(path));
  const auto estimate = nlohmann::json::parse(run.out);
  int passes = 0, names = 0;
  double end_us = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M") ++names;
    if (e["ph"] != "X") continue;
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    end_us = std::max(end_us, e["ts"].get<double>() + e["dur"].get<double>());
    if (e["cat"] == "forward" || e["cat"] == "backward") ++passes;
  }
  EXPECT_EQ(names, 8);  // a thread per stage
  EXPECT_EQ(passes, 16 * 2 * 2 * 8);
  // The trace ends with the step the estimate prints.
  EXPECT_NEAR(end_us / 1e6,
              trace["otherData"]["pipeline_span_s"].get<double>() +
                  estimate["time"]["dp_comm_s"].get<double>() + estimate["time"]["optimizer_s"].get<double>(),
              1e-6);
  std::remove(path.c_str());
}

TEST(TimelineCli, PlanDrawsTheRecommendedPlanAndSaysSo) {
  const std::string svg = ::testing::TempDir() + "plan_timeline_" + std::to_string(::getpid()) + ".svg";
  const CliRun run =
      run_cli("plan --job examples/gpt3-175b-a100.yaml --format json --no-timings --timeline " + svg,
              std::string("cd ") + PARPLAN_SOURCE_DIR + " && ");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("pipeline timeline of the"), std::string::npos) << run.err;
  EXPECT_NE(slurp(svg).find("</svg>"), std::string::npos);
  std::remove(svg.c_str());
}

TEST(TimelineCli, CheckDrawsTheConfigItChecks) {
  const std::string svg = ::testing::TempDir() + "check_timeline_" + std::to_string(::getpid()) + ".svg";
  const CliRun run = run_cli("check " + kGpt3 + " --recompute selective --timeline " + svg);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string picture = slurp(svg);
  EXPECT_NE(picture.find("tp 8  pp 8  vp 2"), std::string::npos);
  EXPECT_EQ(count(picture, "<title>micro-batch"), 16 * 2 * 2 * 8);
  std::remove(svg.c_str());
}

TEST(TimelineCli, AnUnwritablePathIsRefusedBeforeAnyWork) {
  expect_cli_refusal("estimate " + kGpt3 + " --timeline /nonexistent-dir/step.svg", "--timeline");
  expect_cli_refusal(
      "plan --model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048 --timeline /",
      "--timeline");
}

TEST(TimelineCli, AStepTooLongToReplayIsRefusedWithoutWritingIt) {
  // 200 000 micro-batches through 8 stages of 2 chunks: 6.4 million passes.
  const std::string svg = ::testing::TempDir() + "too_long_" + std::to_string(::getpid()) + ".svg";
  expect_cli_refusal(
      "estimate --model gpt3-175b --cluster dgx-a100 --gpus 64 --gbs 200000 --seq 2048 --tp 8 --pp 8 "
      "--vp 2 --timeline " +
          svg,
      "--timeline: this step runs 6400000 passes");
  EXPECT_NE(::access(svg.c_str(), F_OK), 0);
}

TEST(TimelineCli, EmptyOutputPathsAreRefused) {
  const std::string sweep = "sweep --models gpt3-175b --cluster dgx-a100 --gpus 512 --gbs 1536 --seq 2048 ";
  const std::string scatter = std::string("scatter --lengths ") + PARPLAN_SOURCE_DIR +
                              "/examples/scatter/long-tail-steps.txt --gpus 64 --coefficients " +
                              PARPLAN_SOURCE_DIR + "/examples/scatter/flexsp-gpt-7b-64xa100.json ";
  const std::string experts = std::string("experts --loads ") + PARPLAN_SOURCE_DIR +
                              "/examples/experts/deepseek-v3-like.csv --gpus 64 --nodes 8 ";
  const std::pair<std::string, std::string> cases[] = {
      {"estimate " + kGpt3 + " --timeline ''", "--timeline"},
      {"plan --model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048 --timeline ''",
       "--timeline"},
      {"plan --model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048 --emit megatron --out ''",
       "--out"},
      {sweep + "--csv ''", "--csv"},
      {sweep + "--json ''", "--json"},
      {sweep + "--plot ''", "--plot"},
      {sweep + "--emit-slurm-array ''", "--emit-slurm-array"},
      {scatter + "--out ''", "--out"},
      {experts + "--out ''", "--out"},
      {std::string("skip-paths --problem ") + PARPLAN_SOURCE_DIR +
           "/examples/skip-paths/geo-20-nodes.yaml --svg ''",
       "--svg"},
  };
  for (const auto& [args, flag] : cases) expect_cli_refusal(args, flag + " is empty");
}

}  // namespace
}  // namespace parplan::test
