// Input-handling bugs of job files, run files and flags: each a CLI run (or
// a reader call) that now gets one clear line naming the field and exit 2,
// where it used to state the wrong limit, use a default without a word,
// accept a list as a name, blame the wrong thing or echo binary bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "src/io/cluster_loader.h"
#include "src/io/input_limits.h"
#include "tests/cli_support.h"
#include "tests/run_file_fixture.h"
#include "tests/temp_dir.h"

namespace parplan {
namespace {

using test::expect_cli_refusal;
using test::run_cli;
using test::write_temp;

// A complete job, without the keys the tests add.
const std::string kJob = "model: gpt3-175b\ncluster: dgx-a100\ngbs: 1536\nseq: 2048\n";
const std::string kJobGpus = kJob + "gpus: 1024\n";

// The limit a job file states for its GPU count is the one --gpus and the
// loaded job are held to, not the int bound of the YAML reader.
TEST(HardeningFields, JobGpusBeyondTheLimitStatesTheRealLimit) {
  const std::string limit = std::to_string(kMaxGpus);
  for (const std::string& gpus : std::vector<std::string>{"3000000000", std::to_string(kMaxGpus + 1)}) {
    const std::string job = write_temp("gpus_limit.yaml", kJob + "gpus: " + gpus + "\n");
    const test::CliRun run = run_cli("plan --job " + job);
    test::expect_refusal(run, "field 'gpus'", gpus);
    EXPECT_NE(run.err.find(limit), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("2000000000"), std::string::npos) << run.err;
  }
  // The flag states the same bound.
  const test::CliRun flag = run_cli(
      "plan --model gpt3-175b --cluster dgx-a100 --gpus 3000000000 --gbs 1536 "
      "--seq 2048");
  test::expect_refusal(flag, "--gpus");
  EXPECT_NE(flag.err.find(limit), std::string::npos) << flag.err;
  // At the limit the field is read (and the job then refused for the
  // cluster, not for the field).
  const std::string at_limit = write_temp("gpus_at_limit.yaml", kJob + "gpus: " + limit + "\n");
  const test::CliRun run = run_cli("plan --job " + at_limit);
  EXPECT_EQ(run.err.find("field 'gpus'"), std::string::npos) << run.err;
}

// `key:` with nothing, `~` and `null` read as absent and the default was
// used silently.
TEST(HardeningFields, NullValuesInAJobFileAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"precision: ~\n", "'precision'"},
      {"precision:\n", "'precision'"},
      {"precision: null\n", "'precision'"},
      {"optimizer: Null\n", "'optimizer'"},
      {"name: ~\n", "'name'"},
      {"memory_headroom: NULL\n", "'memory_headroom'"},
      {"config:\n", "'config'"},
      {"config:\n  tp: 8\n  pp: ~\n", "'config.pp'"},
      {"constraints: {tp: null}\n", "'constraints.tp'"},
  };
  for (const auto& [text, field] : cases) {
    const std::string job = write_temp("null_field.yaml", kJobGpus + text);
    for (const std::string command : {"plan", "estimate", "check"}) {
      const test::CliRun run = run_cli(command + " --job " + job);
      test::expect_refusal(run, "field " + field + " is empty (null)", command + ": " + text);
      EXPECT_NE(run.err.find("give a value or remove the key"), std::string::npos) << run.err;
    }
  }
  // Without the key the default applies as before.
  const test::CliRun run =
      run_cli("estimate --job " + write_temp("no_null.yaml", kJobGpus) + " --tp 8 --pp 8");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST(HardeningFields, NullValuesInARunFileAreRefused) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const std::string run = run_file_test::kTorchtitanLlamaRun;
  for (const char* extra : {", precision: ~", ", precision: null", ", source: ", ", notes: ~"}) {
    try {
      (void)run_file_test::read_one_run("null_run", run + extra, cluster);
      ADD_FAILURE() << extra << ": a null value was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("is empty (null)"), std::string::npos) << e.what();
    }
  }
  // A null key of the file itself, read by `calibrate --runs`.
  const std::string file = write_temp("null_runs.yaml", "source: ~\nruns:\n  - {" + run + "}\n");
  expect_cli_refusal("calibrate --cluster dgx-h100 --runs " + file, "field 'source' is empty (null)");
}

TEST(HardeningFields, JobNameMustBeOneString) {
  for (const char* name : {"[a, b]", "{first: a}", "\n  - a\n  - b"}) {
    const std::string job = write_temp("list_name.yaml", kJobGpus + "name: " + name + "\n");
    expect_cli_refusal("plan --job " + job, "field 'name' must be a text string");
  }
  const std::string job = write_temp("list_description.yaml", kJobGpus + "description: [x]\n");
  expect_cli_refusal("plan --job " + job, "field 'description' must be a text string");
  // A string name is still accepted.
  const std::string named = write_temp("named.yaml", kJobGpus + "name: my job\n");
  EXPECT_EQ(run_cli("estimate --job " + named + " --tp 8 --pp 8").exit_code, 0);
}

// --sp with tp pinned to 1 leaves no config: the message named the GPU
// split instead of sequence parallelism.
TEST(HardeningFields, SequenceParallelismWithTpOneNamesTheFlags) {
  const std::string flags = "--model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq 2048";
  const test::CliRun run = run_cli("plan " + flags + " --sp --tp 1");
  test::expect_refusal(run, "sequence parallelism needs tp > 1");
  EXPECT_NE(run.err.find("--sp"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--tp 1"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("no split"), std::string::npos) << run.err;
  // The same pin from the job file's constraints.
  const std::string job = write_temp("sp_tp1.yaml", kJobGpus + "constraints: {tp: 1}\n");
  expect_cli_refusal("plan --job " + job + " --sp", "sequence parallelism needs tp > 1");
  // One GPU allows only tp 1: the same cause, not "no split of 1 GPUs".
  const test::CliRun one =
      run_cli("plan --model gpt-1.7b --cluster dgx-a100 --gpus 1 --gbs 8 --seq 2048 --sp");
  test::expect_refusal(one, "sequence parallelism (sp) needs tp > 1");
  EXPECT_EQ(one.err.find("no split"), std::string::npos) << one.err;
}

// An integer flag reads the same in every subcommand: '+N' was a number in
// plan and not in sweep.
TEST(HardeningFields, LeadingPlusIsRefusedByEveryIntegerFlag) {
  const std::string tune_job = std::string(PARPLAN_SOURCE_DIR) + "/examples/calibrate/tune-job.yaml";
  const std::string loads = write_temp("plus_loads.csv", "1,2,3,4\n5,6,7,8\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plan --model gpt3-175b --cluster dgx-a100 --gpus +1024 --gbs 1536 --seq 2048", "--gpus"},
      {"estimate --model gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs +1536 --seq 2048 --tp 8 --pp 8",
       "--gbs"},
      {"sweep --models gpt3-175b --cluster dgx-a100 --gpus +1024 --gbs 1536 --seq 2048", "--gpus"},
      {"sweep --models gpt3-175b --cluster dgx-a100 --gpus 1024 --gbs 1536 --seq +2048", "--seq"},
      {"experts --loads " + loads + " --gpus +2", "--gpus"},
      {"scatter --lengths " + loads + " --gpus +8", "--gpus"},
      {"tune --job " + tune_job + " --out " + ::testing::TempDir() + "plus_trials --trials +2", "--trials"},
  };
  for (const auto& [args, flag] : cases) {
    const test::CliRun run = run_cli(args);
    test::expect_refusal(run, flag, args);
    EXPECT_NE(run.err.find("without the '+'"), std::string::npos) << args << "\n" << run.err;
  }
}

TEST(HardeningFields, TuneNamesAMissingJobAndAFileGivenAsOut) {
  test::TempDir dir("tune_paths");
  const std::string tune_job = std::string(PARPLAN_SOURCE_DIR) + "/examples/calibrate/tune-job.yaml";
  const test::CliRun missing = run_cli("tune --job " + (dir.path / "no-such-job.yaml").string() + " --out " +
                                       (dir.path / "t").string());
  test::expect_refusal(missing, "does not exist");
  EXPECT_EQ(missing.err.find("directory"), std::string::npos) << missing.err;
  // An empty file and a file with text: both are files, not directories
  // (the empty one was an internal error, the other "not empty").
  for (const char* text : {"", "notes\n"}) {
    const std::string file = (dir.path / "trials").string();
    std::ofstream(file) << text;
    const test::CliRun run = run_cli("tune --job " + tune_job + " --out " + file);
    test::expect_refusal(run, "is a file, not a directory", std::string("'") + text + "'");
    EXPECT_EQ(run.err.find("not empty"), std::string::npos) << run.err;
    std::filesystem::remove(file);
  }
  // Below a file: no directory can be made there.
  std::ofstream(dir.path / "plain") << "x";
  expect_cli_refusal("tune --job " + tune_job + " --out " + (dir.path / "plain" / "t").string(),
                     "cannot create the directory");
}

// The JSON library's exception names ("[json.exception.parse_error.101]")
// are no part of a message; the line and column stay.
TEST(HardeningFields, JsonErrorsKeepThePositionWithoutTheLibraryPrefix) {
  const std::string loads = write_temp("bad_loads.json", "{\"loads\": [[1, 2,\n  3 4]]}");
  const std::string lengths = write_temp("bad_lengths.json", "{\"steps\": [[1, 2], [3,]]}");
  const std::string config = write_temp("bad_hf_config.json", "{\"hidden_size\": 4096,\n\"x\" }");
  const std::vector<std::string> commands = {
      "experts --loads " + loads + " --gpus 2",
      "scatter --lengths " + lengths + " --gpus 8 --model llama3-8b --cluster dgx-h100",
      "plan --model " + config + " --cluster dgx-h100 --gpus 8 --gbs 8 --seq 1024",
  };
  for (const std::string& command : commands) {
    const test::CliRun run = run_cli(command);
    test::expect_refusal(run, "line ", command);
    EXPECT_NE(run.err.find("column"), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("json.exception"), std::string::npos) << run.err;
  }
}

bool printable_ascii(const std::string& text) {
  for (const char c : text)
    if ((c < 0x20 || c > 0x7e) && c != '\n') return false;
  return true;
}

// Bytes of a binary file given by mistake were written to the terminal
// as they were (escape sequences included), and at any length.
TEST(HardeningFields, BinaryInputIsQuotedEscapedAndShort) {
  // Bytes YAML reads as a plain key: control characters, an escape
  // sequence, invalid UTF-8.
  std::string garbage = "\x01\x02\xff\xfe garbage \x1b[31mRED";
  for (int i = 0; i < 200; ++i) garbage += i % 2 == 0 ? '\x01' : '\x80';
  const std::string yaml_key = write_temp("binary_key.yaml", "model: gpt3-175b\n" + garbage + ": 1\n");
  const std::string yaml_value =
      write_temp("binary_value.yaml", kJob + "gpus: \x1b[2J\x01\x02" + std::string(100, '\x7f') + "\n");
  const std::string scalar = write_temp("binary_scalar.yaml", "\x1b[2J\x01\x02 plain");
  const std::string csv =
      write_temp("binary.csv", "1,2\n3,\x1b[2J\x01\x02\x80x" + std::string(200, 'y') + "\n");
  const std::string lengths = write_temp("binary_lengths.txt", "\x1b]0;title\x07" + std::string(300, 'z'));
  const std::vector<std::string> commands = {
      "plan --job " + yaml_key,
      "plan --job " + scalar,
      "plan --job " + yaml_value,
      "experts --loads " + csv + " --gpus 2",
      "scatter --lengths " + lengths + " --gpus 8 --model llama3-8b --cluster dgx-h100",
      "plan --model gpt3-175b --cluster dgx-a100 --gpus \"$(printf '\\033[31m12')\" --gbs 8 --seq 1024",
  };
  for (const std::string& command : commands) {
    const test::CliRun run = run_cli(command);
    EXPECT_EQ(run.exit_code, 2) << command << "\n" << run.err;
    EXPECT_EQ(test::line_count(run.err), 1) << command << "\n" << run.err;
    EXPECT_TRUE(printable_ascii(run.err)) << command << "\n" << run.err;
    EXPECT_NE(run.err.find("\\x"), std::string::npos) << command << "\n" << run.err;
    // The path, the field and the advice, plus an excerpt of ~40 characters
    // (each escaped byte 4 characters), not the input.
    EXPECT_LT(run.err.size(), 600u) << command << "\n" << run.err;
  }
}

}  // namespace
}  // namespace parplan
