// `parplan experts`: bad input exits 2 with one line; the JSON schema; the
// EPLB-convention --out file; --no-timings gives identical bytes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::CliRun;
using test::run_cli;

using test::write_temp;

void expect_bad_input(const std::string& args, const std::string& needle) {
  test::expect_refusal(run_cli("experts " + args), needle, args);
}

TEST(ExpertsCli, BadLoadFilesExitTwoWithOneLine) {
  expect_bad_input("--loads " + write_temp("empty.csv", "") + " --gpus 2", "empty");
  expect_bad_input("--loads " + write_temp("ragged.csv", "1,2,3,4\n1,2,3\n") + " --gpus 2", "layer 1 has 3");
  expect_bad_input("--loads " + write_temp("neg.csv", "1,-2,3,4\n") + " --gpus 2", "negative");
  expect_bad_input("--loads " + write_temp("nan.csv", "1,nan,3,4\n") + " --gpus 2", "not a finite number");
  expect_bad_input("--loads " + write_temp("inf.csv", "1,2,1e999,4\n") + " --gpus 2", "not a finite number");
  expect_bad_input("--loads " + write_temp("text.csv", "1,2,3,4\n1,two,3,4\n") + " --gpus 2", "'two'");
  expect_bad_input("--loads " + write_temp("hex.csv", "1,0x10,3,4\n") + " --gpus 2", "'0x10'");
  expect_bad_input("--loads " + write_temp("header_only.csv", "a,b,c,d\n") + " --gpus 2", "no MoE layer");
  expect_bad_input("--loads " + write_temp("short_header.csv", "e0,e1,e2\n1,2,3,4\n") + " --gpus 2",
                   "the header names 3 experts but layer 0 has 4");
  expect_bad_input("--loads " + write_temp("zero.csv", "0,0,0,0\n") + " --gpus 2", "no tokens");
  expect_bad_input("--loads " + write_temp("bad.json", "{\"loads\": [[1,2],[3,\"x\"]]}") + " --gpus 2",
                   "layer 1, expert 1");
  expect_bad_input("--loads " + write_temp("ragged.json", "{\"loads\": [[1,2],[3]]}") + " --gpus 2",
                   "layer 1 has 1");
  expect_bad_input("--loads " + write_temp("nokey.json", "{\"load\": []}") + " --gpus 2", "'loads'");
  expect_bad_input("--loads " + write_temp("broken.json", "{\"loads\": [[1,2]") + " --gpus 2",
                   "not valid JSON");
  expect_bad_input("--loads /nonexistent/loads.csv --gpus 2", "no such file");
  // A bare list is JSON without its object: the JSON format's message.
  expect_bad_input("--loads " + write_temp("bare.json", "[[1,2,3,4]]") + " --gpus 2", "{\"loads\":");
}

TEST(ExpertsCli, UnderflowingLoadIsZeroInCsvAndJson) {
  // 1e-400 is below the smallest double: both readers round it to 0.
  const std::string tail = " --gpus 2 --format json --no-timings --time-limit 0.1";
  const CliRun csv = run_cli("experts --loads " + write_temp("under.csv", "1,2,1e-400,4\n") + tail);
  const CliRun json =
      run_cli("experts --loads " + write_temp("under.json", "{\"loads\": [[1,2,1e-400,4]]}") + tail);
  const CliRun zero = run_cli("experts --loads " + write_temp("zero3.csv", "1,2,0,4\n") + tail);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  ASSERT_EQ(json.exit_code, 0) << json.err;
  ASSERT_EQ(zero.exit_code, 0) << zero.err;
  EXPECT_EQ(nlohmann::json::parse(csv.out)["layers"], nlohmann::json::parse(zero.out)["layers"]);
  EXPECT_EQ(nlohmann::json::parse(json.out)["layers"], nlohmann::json::parse(zero.out)["layers"]);
}

TEST(ExpertsCli, BadShapesExitTwoWithOneLine) {
  const std::string loads = "--loads " + write_temp("ok.csv", "10,20,30,40\n5,5,5,5\n");
  expect_bad_input(loads + " --gpus 3", "not a multiple of --gpus 3");                            // (4+0) % 3
  expect_bad_input(loads + " --gpus 2 --redundant -2", "--redundant must be an integer from 0");  // R < 0
  expect_bad_input(loads + " --gpus 8", "exceeds the 4 physical slots");                          // G > slots
  expect_bad_input(loads + " --gpus 2 --redundant 6", "distinct GPUs");  // 5 per GPU > 4 experts
  expect_bad_input(loads + " --gpus 4 --nodes 3", "--nodes 3");
  expect_bad_input(loads + " --gpus 2 --groups 3", "--groups 3");
  expect_bad_input(loads + " --gpus 2 --solver gurobi", "--solver");
  expect_bad_input(loads + " --gpus 2 --format xml", "--format");
  expect_bad_input(loads + " --gpus 2 --time-limit 0", "--time-limit");
  expect_bad_input(loads + " --gpus two", "--gpus");
  expect_bad_input(loads + " --gpus 99999999999", "--gpus");
  expect_bad_input(loads + " --gpus 2 --out /nonexistent/dir/p.json", "--out");
  expect_bad_input(loads + " --gpus 2 --redundant 2000000000", "--redundant");
  expect_bad_input("--loads " + write_temp("huge.csv", "1e308,1e308,1e308,1e308\n") + " --gpus 2",
                   "sum beyond");
}

TEST(ExpertsCli, RepeatedKeysUnknownFieldsAndByteOrderMarkAreRefused) {
  expect_bad_input(
      "--loads " + write_temp("dup.json", "{\"loads\": [[1,2]], \"loads\": [[3,4]]}") + " --gpus 2",
      "key \"loads\" appears twice");
  expect_bad_input("--loads " + write_temp("extra.json", "{\"loads\": [[1,2]], \"extra\": 1}") + " --gpus 2",
                   "unknown field \"extra\"");
  // The mark would make the first layer's first field a header's.
  expect_bad_input("--loads " +
                       write_temp("bom.csv",
                                  "\xEF\xBB\xBF"
                                  "100,20,30,40\n5,5,5,5\n") +
                       " --gpus 2",
                   "byte-order mark");
}

TEST(ExpertsCli, BatchFlagsWithoutAModelAreRefused) {
  const std::string loads = "--loads " + write_temp("batch.csv", "10,20,30,40\n");
  expect_bad_input(loads + " --gpus 2 --gbs 8", "--gbs applies with --model and --cluster");
  expect_bad_input(loads + " --gpus 2 --seq 4096", "--seq applies with --model and --cluster");
}

TEST(ExpertsCli, TensOfThousandsOfExpertsArePlaced) {
  // The count-vector enumeration recursed once per expert and overflowed a
  // worker thread's stack here.
  std::string row;
  for (int e = 0; e < 45000; ++e) row += (e ? "," : "") + std::to_string(1 + e % 97);
  const std::string loads = write_temp("wide.csv", row + "\n" + row + "\n");
  const CliRun run =
      run_cli("experts --loads " + loads + " --gpus 8 --format json --no-timings", "timeout 120 ");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["layers"].size(), 2u);
}

TEST(ExpertsCli, LeadingZeroIsDecimal) {
  const std::string loads = "--loads " + write_temp("dec.csv", "10,20,30,40,50,60,70,80,90,100\n");
  // 010 is ten GPUs, not octal eight: 10 slots on 10 GPUs.
  const CliRun run = run_cli("experts " + loads + " --gpus 010 --format json --no-timings");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["problem"]["gpus"], 10);
}

TEST(ExpertsCli, JsonSchemaAndEplbOutFile) {
  const std::string loads = write_temp("mx.json",
                                       "{\"loads\": [[90,132,40,61,104,165,39,4,73,56,45,79],"
                                       "[20,107,104,64,19,197,187,157,172,86,16,27]]}");
  const std::string out =
      ::testing::TempDir() + "parplan_experts_out_" + std::to_string(::getpid()) + ".json";
  const CliRun run = run_cli("experts --loads " + loads +
                             " --gpus 8 --nodes 2 --groups 4 --redundant 4 --format json --out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  for (const char* key : {"problem", "layers", "summary", "baseline", "milp_improvements"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"imbalance_mean", "imbalance_max", "time_s"})
    EXPECT_TRUE(j["summary"].contains(key)) << key;
  EXPECT_TRUE(j["baseline"].contains("static"));
  EXPECT_TRUE(j["baseline"].contains("greedy"));
  ASSERT_EQ(j["layers"].size(), 2u);
  const auto eplb = nlohmann::json::parse(test::slurp(out));
  for (int l = 0; l < 2; ++l) {
    const auto& layer = j["layers"][l];
    for (const char* key :
         {"physical_to_logical", "replicas", "gpu_load", "imbalance", "lower_bound_imbalance"})
      EXPECT_TRUE(layer.contains(key)) << key;
    for (const char* key : {"status", "objective", "bound", "gap", "backend", "time_s"})
      EXPECT_TRUE(layer["certificate"].contains(key)) << key;
    ASSERT_EQ(layer["physical_to_logical"].size(), 8u);
    // phy2log is physical_to_logical flattened row-major; logcnt is replicas.
    std::vector<int> flat;
    for (const auto& gpu : layer["physical_to_logical"])
      for (const auto& e : gpu) flat.push_back(e.get<int>());
    EXPECT_EQ(eplb["phy2log"][l].get<std::vector<int>>(), flat);
    EXPECT_EQ(eplb["logcnt"][l], layer["replicas"]);
    // log2phy inverts phy2log.
    for (int e = 0; e < 12; ++e) {
      int found = 0;
      for (const auto& p : eplb["log2phy"][l][e]) {
        if (p.get<int>() < 0) continue;
        EXPECT_EQ(flat[p.get<int>()], e);
        ++found;
      }
      EXPECT_EQ(found, eplb["logcnt"][l][e].get<int>());
    }
    // 12 + 4 slots on 8 GPUs; imbalance is busiest GPU / mean.
    double total = 0, busiest = 0;
    for (const auto& x : layer["gpu_load"])
      total += x.get<double>(), busiest = std::max(busiest, x.get<double>());
    EXPECT_NEAR(layer["imbalance"].get<double>(), busiest / (total / 8), 1e-12);
    EXPECT_LE(layer["lower_bound_imbalance"].get<double>(), layer["imbalance"].get<double>() + 1e-12);
  }
  std::remove(out.c_str());
}

TEST(ExpertsCli, NoTimingsGivesIdenticalBytes) {
  const std::string loads =
      "--loads " + write_temp("nt.csv", "expert_a,expert_b,c,d,e,f\n9,1,3,7,2,8\n4,4,9,1,1,3\n");
  // A budget the tiny MILPs always finish in: the answer cannot depend on the clock.
  const std::string args =
      "experts " + loads + " --gpus 3 --redundant 3 --time-limit 60 --no-timings --format json";
  const CliRun a = run_cli(args);
  const CliRun b = run_cli(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.out.find("time_s"), std::string::npos);
  const CliRun table = run_cli("experts " + loads + " --gpus 3 --redundant 3 --no-timings");
  EXPECT_EQ(table.out.find("time:"), std::string::npos);
  EXPECT_NE(table.out.find("imbalance"), std::string::npos);
}

// Every placement is priced on one config: a better-balanced placement
// (lower mean imbalance) never predicts a slower step.
TEST(ExpertsCli, BetterBalancedPlacementIsNeverSlower) {
  const std::string loads = "--loads " + write_temp("st.csv", "9,1,3,7,2,8,4,4\n12,1,1,2,3,1,1,3\n");
  // Mixtral 8x7B has 8 routed experts; 4 loads per layer do not match it.
  expect_bad_input("--loads " + write_temp("st4.csv", "9,1,3,7\n") +
                       " --gpus 2 --model mixtral-8x7b --cluster dgx-h100 --gbs 8 --seq 4096",
                   "8 routed experts");
  expect_bad_input(loads + " --gpus 2 --model no-such-model --cluster dgx-h100 --gbs 8 --seq 4096",
                   "no-such-model");
  expect_bad_input(loads + " --gpus 2 --model mixtral-8x7b --cluster dgx-h100", "--gbs and --seq");
  const std::string job =
      write_temp("mixtral.yaml", "model: mixtral-8x7b\ncluster: dgx-h100\ngpus: 64\ngbs: 256\nseq: 4096\n");
  const CliRun run =
      run_cli("experts " + loads + " --gpus 8 --redundant 8 --job " + job + " --format json --no-timings");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json step = nlohmann::json::parse(run.out)["step_time"];
  ASSERT_TRUE(step["available"].get<bool>()) << step.dump();
  EXPECT_EQ(step["config"]["ep"].get<int>(), 8);
  const auto& p = step["placements"];
  for (const char* a : {"static", "greedy", "parplan"}) {
    for (const char* b : {"static", "greedy", "parplan"}) {
      if (p[a]["imbalance"].get<double>() <= p[b]["imbalance"].get<double>()) {
        EXPECT_LE(p[a]["step_s"].get<double>(), p[b]["step_s"].get<double>()) << a << " vs " << b;
      }
    }
  }
  // The skewed loads leave room: the balanced placement beats static.
  EXPECT_LT(p["parplan"]["imbalance"].get<double>(), p["static"]["imbalance"].get<double>());
  EXPECT_LT(p["parplan"]["step_s"].get<double>(), p["static"]["step_s"].get<double>());
}

}  // namespace
}  // namespace parplan
