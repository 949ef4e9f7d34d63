// parplan skip-paths through the binary: output fields, identical output with
// --no-timings, the SVG, and bad input (one line, exit 2) or no schedule (exit 1).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "tests/cli_support.h"

namespace parplan::test {
namespace {

std::string write_problem(const std::string& name, const std::string& text) {
  return write_temp("skip_" + name + ".yaml", text);
}

const char* kSmall =
    "nodes: 3\nstage_sizes: [1, 1, 1]\npath_length: 2\nmemory: 2\nmicro_batches_per_source: 2\n"
    "stage_forward_s: 1\nbackward_factor: 2\nloss_factor: 0.5\n"
    "transfer_s: [[0, 0.5, 2], [0.5, 0, 1], [2, 1, 0]]\n";

TEST(SkipPathsCli, JsonHasTheDocumentedFields) {
  const CliRun run = run_cli("skip-paths --problem " + write_problem("small", kSmall) + " --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  for (const char* key :
       {"partition", "micro_batches", "makespan_s", "full_pipeline", "lower_bound_s", "solve_s"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["micro_batches"].size(), 2u);
  EXPECT_TRUE(j["full_pipeline"].contains("makespan_s"));
  // Path length 2 over stages of one node each: the best path goes to the
  // nearer node, 0.5 s away (round trip 1+.5+1+.5+.5+.5+2+.5+2 = 8.5 s alone).
  EXPECT_LE(j["lower_bound_s"].get<double>(), j["makespan_s"].get<double>());
}

TEST(SkipPathsCli, NoTimingsGivesIdenticalOutputAndAnSvg) {
  const std::string problem = write_problem("small2", kSmall);
  const std::string svg = ::testing::TempDir() + "skip_timeline_" + std::to_string(::getpid()) + ".svg";
  const CliRun a = run_cli("skip-paths --problem " + problem + " --format json --no-timings --svg " + svg);
  const CliRun b = run_cli("skip-paths --problem " + problem + " --format json --no-timings");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.out.find("solve_s"), std::string::npos);
  const std::string picture = slurp(svg);
  EXPECT_NE(picture.find("<svg"), std::string::npos);
  EXPECT_NE(picture.find("node 2 (stage"), std::string::npos);
  EXPECT_NE(picture.find("backward"), std::string::npos);
  const CliRun table = run_cli("skip-paths --problem " + problem);
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("full pipeline"), std::string::npos);
}

// Every micro-batch its own colour: geo-20's 30 micro-batches (2 mod 4)
// drew k and k + 15 in one hue.
TEST(SkipPathsCli, EveryMicroBatchHasItsOwnColour) {
  const std::string svg = ::testing::TempDir() + "skip_colours_" + std::to_string(::getpid()) + ".svg";
  const CliRun run = run_cli("skip-paths --problem " + std::string(PARPLAN_SOURCE_DIR) +
                             "/examples/skip-paths/geo-20-nodes.yaml --no-timings --svg " + svg);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string picture = slurp(svg);
  std::remove(svg.c_str());
  std::map<int, std::string> fill_of;
  const std::regex pass(R"re(fill="(hsl\([^"]*\))"[^>]*><title>micro-batch (\d+) )re");
  for (auto it = std::sregex_iterator(picture.begin(), picture.end(), pass); it != std::sregex_iterator();
       ++it)
    fill_of[std::stoi((*it)[2])] = (*it)[1];
  ASSERT_EQ(fill_of.size(), 30u);
  std::set<std::string> fills;
  for (const auto& [mb, fill] : fill_of) fills.insert(fill);
  EXPECT_EQ(fills.size(), fill_of.size());
}

// With model and cluster each node holds layers / stages of the model: a
// split that does not divide is refused, a stage that does not fit a GPU
// is infeasible (Llama 3 70B in two stages: 40 layers with Adam states,
// over 560 GiB, on an 80 GiB A100).
TEST(SkipPathsCli, ACostModelStageMustDivideTheLayersAndFit) {
  std::string problem =
      test::slurp(std::string(PARPLAN_SOURCE_DIR) + "/examples/skip-paths/llama3-8b-cost-model.yaml");
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = problem;
    return text.replace(text.find(from), from.size(), to);
  };
  const CliRun five =
      run_cli("skip-paths --problem " + write_problem("five", with("stages: 4", "stages: 5")));
  EXPECT_EQ(five.exit_code, 2) << five.err;
  EXPECT_NE(five.err.find("must divide the 32 layers"), std::string::npos) << five.err;
  const std::string big = with("model: llama3-8b", "model: llama3-70b");
  const CliRun seventy = run_cli("skip-paths --problem " + write_problem("seventy", big));
  EXPECT_EQ(seventy.exit_code, 1) << seventy.err;
  EXPECT_NE(seventy.err.find("memory: a node of dgx-a100 holds 20 layers of llama3-70b"), std::string::npos)
      << seventy.err;
  EXPECT_EQ(test::line_count(seventy.err), 1) << seventy.err;
}

void expect_bad(const std::string& name, const std::string& text, const std::string& field) {
  expect_refusal(run_cli("skip-paths --problem " + write_problem(name, text)), field, name);
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  return text.replace(text.find(from), from.size(), to);
}

TEST(SkipPathsCli, BadInputIsOneLineAndExitTwo) {
  const std::string s = kSmall;
  expect_bad("nonsquare", replace(s, "[2, 1, 0]]", "[2, 1]]"), "transfer_s");
  expect_bad("tworows", replace(s, ", [2, 1, 0]]", "]"), "transfer_s");
  expect_bad("negative", replace(s, "[0, 0.5, 2]", "[0, -0.5, 2]"), "transfer_s");
  expect_bad("diagonal", replace(s, "[0, 0.5, 2]", "[5, 0.5, 2]"), "is node 0 to itself and must be 0");
  expect_bad("longpath", replace(s, "path_length: 2", "path_length: 4"), "path_length");
  expect_bad("shortpath", replace(s, "path_length: 2", "path_length: 1"), "path_length");
  expect_bad("memory0", replace(s, "memory: 2", "memory: 0"), "memory");
  expect_bad("sizes", replace(s, "[1, 1, 1]", "[1, 1, 2]"), "stage_sizes");
  expect_bad("huge", replace(s, "nodes: 3", "nodes: 1e12"), "nodes");
  expect_bad("unknown", s + "colour: blue\n", "colour");
  expect_bad("text", replace(s, "stage_forward_s: 1", "stage_forward_s: fast"), "stage_forward_s");
  expect_bad("bandwidth",
             replace(s, "transfer_s: [[0, 0.5, 2], [0.5, 0, 1], [2, 1, 0]]",
                     "latency_ms: [[0, 1, 1], [1, 0, 1], [1, 1, 0]]\n"
                     "bandwidth_gb_per_s: [[0, 1, 1], [1, 0, 0], [1, 1, 0]]\nactivation_bytes: 1000"),
             "bandwidth_gb_per_s");
  const CliRun missing = run_cli("skip-paths --problem /nonexistent/problem.yaml");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(line_count(missing.err), 1);
}

TEST(SkipPathsCli, NoScheduleWithinTheRulesIsExitOneNamingTheRule) {
  // With --svg too: no schedule, no file (not even an empty one).
  const std::string svg = ::testing::TempDir() + "skip_none_" + std::to_string(::getpid()) + ".svg";
  const CliRun run = run_cli(
      "skip-paths --problem " +
      write_problem("capacity", std::string(kSmall) + "stage_capacity: [null, 1, 0]\n") + " --svg " + svg);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(line_count(run.err), 1);
  EXPECT_NE(run.err.find("stage_capacity"), std::string::npos) << run.err;
  EXPECT_NE(::access(svg.c_str(), F_OK), 0) << svg << " was left behind";
}

// Stage 0 starts every micro-batch: a bound given there cannot hold and
// must not be dropped in silence.
TEST(SkipPathsCli, ACapacityOnStageZeroIsRefused) {
  for (const std::string cap : {"[0, 8, 8]", "[5, null, null]"}) {
    const CliRun run = run_cli("skip-paths --problem " +
                               write_problem("cap0", std::string(kSmall) + "stage_capacity: " + cap + "\n"));
    EXPECT_EQ(run.exit_code, 2) << cap;
    EXPECT_EQ(line_count(run.err), 1) << run.err;
    EXPECT_NE(run.err.find("stage_capacity"), std::string::npos) << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
  }
}

TEST(SkipPathsCli, LatencyBandwidthFormGivesTheSameTransfers) {
  // 1 ms + 1e9 bytes at 1 GB/s + 0.5 s overhead = 1.501 s each way.
  const std::string text =
      "nodes: 2\nstages: 2\npath_length: 2\nmemory: 1\nmicro_batches_per_source: 1\nstage_forward_s: 1\n"
      "latency_ms: [[0, 1], [1, 0]]\nbandwidth_gb_per_s: [[1, 1], [1, 1]]\nactivation_bytes: 1e9\n"
      "message_overhead_s: 0.5\n";
  const CliRun run = run_cli("skip-paths --format json --problem " + write_problem("latbw", text));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // One micro-batch: F 1 + 1.501 + F 1 + 1.501 + loss 0 + 1.501 + B 2 + 1.501 + B 2.
  EXPECT_NEAR(nlohmann::json::parse(run.out)["makespan_s"].get<double>(), 6 + 4 * 1.501, 1e-9);
}

}  // namespace
}  // namespace parplan::test
