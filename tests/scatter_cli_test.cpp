// `parplan scatter` end to end: the JSON schema, --out lines, --no-timings,
// and every bad input as one stderr line with exit 2 (exit 1 for a sequence
// no group can hold).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::CliRun;
using test::line_count;
using test::run_cli;
using test::write_temp;

const std::string kExamples = std::string(PARPLAN_SOURCE_DIR) + "/examples/scatter/";
const std::string kCoefficients = " --coefficients " + kExamples + "flexsp-gpt-7b-64xa100.json";

TEST(ScatterCli, JsonHasTheDocumentedKeysAndAValidPlan) {
  const std::string lengths = write_temp("ok.txt", "8192 2048, 1024 512\n196608 4096 4096\n");
  const std::string out = ::testing::TempDir() + "scatter_plan_" + std::to_string(::getpid()) + ".jsonl";
  const CliRun run =
      run_cli("scatter --lengths " + lengths + " --gpus 64" + kCoefficients + " --format json --out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  for (const char* key : {"coefficients", "steps", "summary"}) EXPECT_TRUE(j.contains(key)) << key;
  ASSERT_EQ(j["steps"].size(), 2u);
  for (const auto& step : j["steps"]) {
    for (const char* key : {"micro_batches", "time_ms", "static", "speedup", "certificate", "solve_ms"}) {
      EXPECT_TRUE(step.contains(key)) << key;
    }
    for (const char* key : {"status", "objective", "bound", "gap", "backend"}) {
      EXPECT_TRUE(step["certificate"].contains(key)) << key;
    }
    EXPECT_GE(step["speedup"].get<double>(), 1.0 - 1e-12);  // static plans are adaptive plans too
  }
  EXPECT_EQ(j["coefficients"]["alltoall_ms_per_token"]["8"].get<double>(), 0.002590674);
  // --out: one line per step; each sequence exactly once.
  const std::string lines = test::slurp(out);
  EXPECT_EQ(line_count(lines), 2);
  const auto first = nlohmann::json::parse(lines.substr(0, lines.find('\n')));
  std::vector<int> seen(4, 0);
  for (const auto& mb : first["micro_batches"]) {
    for (const auto& g : mb["groups"]) {
      for (int i : g["sequences"]) ++seen[i];
    }
  }
  EXPECT_EQ(seen, std::vector<int>(4, 1));
}

TEST(ScatterCli, NoTimingsIsByteIdentical) {
  // Identical when no step stops on its time limit (then the MILP proves the optimum).
  const std::string args = "scatter --lengths " + kExamples +
                           "small-steps.json --gpus 8 --model llama3-8b "
                           "--cluster dgx-a100 --format json --no-timings --step-time-limit-ms 60000";
  const CliRun a = run_cli(args);
  const CliRun b = run_cli(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.out.find("solve_ms"), std::string::npos);
  EXPECT_EQ(a.out.find("time_s"), std::string::npos);
}

TEST(ScatterCli, BadInputIsOneLineAndExitTwo) {
  struct Case {
    std::string lengths, extra, says;
  };
  const std::vector<Case> cases = {
      {"1024 2048\n , \n", kCoefficients, "empty step"},
      {"{\"steps\": [[1024], []]}", kCoefficients, "empty step"},
      {"1024,2048,,4096\n", kCoefficients, "field 3 is empty"},
      {"1024, 2048,\n", kCoefficients, "field 3 is empty"},
      {",1024 2048\n", kCoefficients, "field 1 is empty"},
      {"1024 0 2048\n", kCoefficients, "between 1 and"},
      {"1024 -5\n", kCoefficients, "-5"},
      {"1024 20.5\n", kCoefficients, "20.5"},
      {"1024 99999999999999999999\n", kCoefficients, "99999999999999999999"},
      {"1024\n", kCoefficients + " --group-sizes 1,2,3", "group size 3 must"},
      {"1024\n", kCoefficients + " --group-sizes 1,2,128", "group size 128 must"},
      {"1024\n", " --model llama3-8b --cluster dgx-a100 --group-sizes 2,6", "group size 6 must"},
      {"1024\n", "", "either --model and --cluster, or --coefficients"},
      {"1024\n", " --model no-such-model --cluster dgx-a100", "no-such-model"},
      {"1024\n", kCoefficients + " --solver gurobi", "gurobi"},
      {"1024\n", kCoefficients + " --improve-ms -5", "--improve-ms"},
      {"1024\n", kCoefficients + " --group-sizes ''", "--group-sizes is empty"},
  };
  int k = 0;
  for (const Case& c : cases) {
    const std::string path = write_temp("bad" + std::to_string(k++) + ".txt", c.lengths);
    test::expect_refusal(run_cli("scatter --lengths " + path + " --gpus 64" + c.extra), c.says,
                         c.lengths + c.extra);
  }
}

TEST(ScatterCli, SequenceLongerThanAnyGroupExitsOneNamingIt) {
  // 64 GPUs x 5992 tokens = 383488 tokens is the largest group's capacity.
  const std::string path = write_temp("long.txt", "1024 2048\n4096 400000 512\n");
  const CliRun run = run_cli("scatter --lengths " + path + " --gpus 64" + kCoefficients);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(line_count(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("step 1, sequence 1 has 400000 tokens"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("383488"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty());
}

TEST(ScatterCli, RepeatedKeysUnknownFieldsAndByteOrderMarkAreRefused) {
  const std::string coefficients = test::slurp(kExamples + "flexsp-gpt-7b-64xa100.json");
  const auto with = [&](const std::string& before, const std::string& after) {
    std::string text = coefficients;
    text.replace(text.find(before), before.size(), after);
    return write_temp("coef_" + std::to_string(std::hash<std::string>{}(after)) + ".json", text);
  };
  const std::string ok = write_temp("keys_ok.txt", "1024 2048\n");
  nlohmann::json numbered = nlohmann::json::parse(coefficients);
  numbered["source"] = 5;
  const std::string numbered_source = write_temp("coef_source.json", numbered.dump());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--lengths " + write_temp("dup.json", "{\"steps\": [[8192, 2048]], \"steps\": [[1]]}") + kCoefficients,
       "key \"steps\" appears twice"},
      {"--lengths " + write_temp("extra.json", "{\"steps\": [[8192]], \"extra\": 1}") + kCoefficients,
       "unknown field \"extra\""},
      {"--lengths " +
           write_temp("bom.txt",
                      "\xEF\xBB\xBF"
                      "1024 2048\n") +
           kCoefficients,
       "byte-order mark"},
      {"--lengths " + ok + " --coefficients " + with("{", "{\"quadratic_ms\": 1e-6, "),
       "\"quadratic_ms\" appears twice"},
      {"--lengths " + ok + " --coefficients " + with("\"2\":", "\"002\": 0.1, \"2\":"),
       "also given as \"002\""},
      {"--lengths " + ok + " --coefficients " + with("\"2\":", "\"+4\": 0.1, \"2\":"), "\"+4\""},
      {"--lengths " + ok + " --coefficients " + numbered_source, "\"source\" must be a string"},
      {"--lengths " + ok + " --coefficients " + with("{", "\xEF\xBB\xBF{"), "byte-order mark"},
  };
  for (const auto& [args, says] : cases) test::expect_cli_refusal("scatter --gpus 64 " + args, says);
}

TEST(ScatterCli, ModelSettingsWithCoefficientsAreRefused) {
  const std::string ok = write_temp("settings.txt", "1024 2048\n");
  for (const std::string flag : {"--precision bf16", "--zero 3", "--recompute none"}) {
    test::expect_cli_refusal("scatter --lengths " + ok + " --gpus 64" + kCoefficients + " " + flag,
                             flag.substr(0, flag.find(' ')) + " applies with --model and --cluster");
  }
}

TEST(ScatterCli, ModelStatesBeyondMemoryExitOneNamingThem) {
  const std::string path = write_temp("states.txt", "1024 2048\n");
  const CliRun run =
      run_cli("scatter --lengths " + path + " --gpus 8 --model llama3-405b --cluster dgx-a100");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(line_count(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("model states of"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("GiB of HBM usable"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty());
}

TEST(ScatterCli, StepsBeyondTheSequenceLimitAreRefusedAtOnce) {
  std::string line, json = "{\"steps\": [[";
  for (int k = 0; k < 8193; ++k) {
    line += (k ? " " : "") + std::string("64");
    json += (k ? "," : "") + std::string("64");
  }
  json += "]]}";
  const std::string text = write_temp("many.txt", "1024\n" + line + "\n");
  test::expect_cli_refusal("scatter --lengths " + text + " --gpus 64 --time-limit 2" + kCoefficients,
                           "8193 sequences in one step, more than the 8192");
  const std::string doc = write_temp("many.json", json);
  test::expect_cli_refusal("scatter --lengths " + doc + " --gpus 64 --time-limit 2" + kCoefficients,
                           "steps[0]: 8193 sequences");
}

TEST(ScatterCli, HelpHasAnExample) {
  const CliRun run = run_cli("scatter --help");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("parplan scatter --lengths"), std::string::npos);
}

}  // namespace
}  // namespace parplan
