// parplan sweep end to end: the CLI binary on a 100-point grid, and its
// answers to bad input (exit 2, one line on stderr naming the flag).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_support.h"
#include "tests/temp_dir.h"

namespace parplan {
namespace {

namespace fs = std::filesystem;
using test::CliRun;
using test::line_count;
using test::run_cli;
using test::slurp;

using test::TempDir;

const std::string kGrid =
    "sweep --models gpt-1.7b,gpt-18.4b,gpt3-175b,llama3-70b --cluster dgx-a100 --gpus 64:1024:x2 "
    "--gbs 512:2560:+512 --seq 2048 --engine megatron";

TEST(SweepCli, HundredPointsGiveHundredRows) {
  TempDir dir;
  const fs::path csv = dir.path / "sweep.csv", json = dir.path / "sweep.json", svg = dir.path / "sweep.svg";
  const auto start = std::chrono::steady_clock::now();
  const CliRun r =
      run_cli(kGrid + " --csv " + csv.string() + " --json " + json.string() + " --plot " + svg.string());
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ sweep    ] 100 points (4 models x 5 GPU counts x 5 batches) in %.2f s wall\n", wall_s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // stderr is not a terminal here: no progress, nothing at all.
  EXPECT_EQ(r.err, "");
  // The table: header, 100 rows, summary.
  EXPECT_EQ(line_count(r.out), 102) << r.out;
  const std::string text = slurp(csv.string());
  EXPECT_EQ(line_count(text), 101);
  EXPECT_EQ(text.rfind("model,params,gpus,gbs,seq,feasible,", 0), 0u);
  const nlohmann::json j = nlohmann::json::parse(slurp(json.string()));
  EXPECT_EQ(j["points"].size(), 100u);
  EXPECT_EQ(j["sweep"]["points"], 100);
  EXPECT_EQ(slurp(svg.string()).rfind("<svg", 0), 0u);
}

TEST(SweepCli, InfeasiblePointsAreRowsNotErrors) {
  TempDir dir;
  const fs::path csv = dir.path / "s.csv";
  const CliRun r = run_cli(
      "sweep --models gpt-1t --cluster dgx-a100 --gpus 8,512 --gbs 512 --seq 2048 --csv " + csv.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no plan: memory"), std::string::npos) << r.out;
  const std::string text = slurp(csv.string());
  EXPECT_EQ(line_count(text), 3);
  EXPECT_NE(text.find(",8,512,2048,false,"), std::string::npos);
  EXPECT_NE(text.find(",512,512,2048,true,"), std::string::npos);
}

TEST(SweepCli, SlurmArrayFromTheCommandLine) {
  TempDir dir;
  const fs::path out = dir.path / "runs";
  const CliRun r = run_cli(
      "sweep --models gpt-1.7b --cluster dgx-a100 --gpus 8:32:x2 --gbs 256 --seq 2048 "
      "--emit-slurm-array " +
      out.string() + " --array-parallel 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(slurp((out / "array.sbatch").string()).find("\n#SBATCH --array=0-2%2\n"), std::string::npos);
  for (const char* point : {"point-0000", "point-0001", "point-0002"})
    EXPECT_TRUE(fs::is_regular_file(out / point / "job.sbatch")) << point;
  EXPECT_TRUE(fs::is_regular_file(out / "submit_all.sh"));
}

struct BadInput {
  std::string args;
  std::string flag;  // named in the message
};

TEST(SweepCli, BadInputExitsTwoWithOneLine) {
  TempDir dir;
  std::ofstream(dir.path / "full.txt") << "x";
  fs::create_directories(dir.path / "nonempty");
  std::ofstream(dir.path / "nonempty" / "f") << "x";
  const std::string ok = " --cluster dgx-a100 --seq 2048";
  const std::vector<BadInput> cases = {
      {"--models no-such-model --gpus 64 --gbs 512" + ok, "--models"},
      {"--models gpt-1.7b,,llama3-8b --gpus 64 --gbs 512" + ok, "--models"},
      {"--models ladder:nope --gpus 64 --gbs 512" + ok, "--models"},
      {"--models gpt-1.7b --gpus 64,abc --gbs 512" + ok, "--gpus"},
      {"--models gpt-1.7b --gpus '' --gbs 512" + ok, "--gpus"},
      {"--models gpt-1.7b --gpus 0 --gbs 512" + ok, "--gpus"},
      {"--models gpt-1.7b --gpus=-64 --gbs 512" + ok, "--gpus"},
      {"--models gpt-1.7b --gpus 1024:64:x2 --gbs 512" + ok, "--gpus"},
      {"--models gpt-1.7b --gpus 64:1024 --gbs 512" + ok, "--gpus"},
      {"--models gpt-1.7b --gpus 64 --gbs 512:1024:+0" + ok, "--gbs"},
      {"--models gpt-1.7b --gpus 64 --gbs x" + ok, "--gbs"},
      {"--models gpt-1.7b --gpus 8192 --gbs 512" + ok, "--gpus"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --cluster no-such-cluster --seq 2048", "--cluster"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --cluster dgx-a100 --seq 0", "--seq"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --cluster dgx-a100", "--seq"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --precision fp4" + ok, "--precision"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --solver nope" + ok, "--solver"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --csv " + (dir.path / "no" / "dir.csv").string() + ok, "--csv"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --json " + dir.path.string() + ok, "--json"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --plot " + (dir.path / "full.txt" / "p.svg").string() + ok,
       "--plot"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --emit-slurm-array " + (dir.path / "nonempty").string() + ok,
       "--emit-slurm-array"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --emit-slurm-array " + (dir.path / "a").string() +
           " --engine x" + ok,
       "--engine"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --array-parallel 0" + ok, "--array-parallel"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --engine torchtitan --engine-version 0.2" + ok,
       "--engine-version"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --engine-version 0.2 --emit-slurm-array " +
           (dir.path / "a").string() + ok,
       "--engine-version"},
      {"--models gpt-1.7b --gpus 64 --gbs 512 --engine torchtitan --engine-version 0.3 --emit-slurm-array " +
           (dir.path / "a").string() + ok,
       "--engine-version"},
  };
  for (const BadInput& c : cases) {
    test::expect_refusal(run_cli("sweep " + c.args), c.flag, c.args);
  }
  EXPECT_FALSE(fs::exists(dir.path / "a"));
}

// A sweep point's row is the plan `plan` gives for that job: the same
// engine recipe (loss kernel, attention kernel, gradient schedule; torchtitan
// compiles its loss), so the same optimum at the same predicted step time.
TEST(SweepCli, EachPointIsThePlanOfItsEngine) {
  const std::string job = " --cluster dgx-h100 --gpus 64 --gbs 256 --seq 8192 --format json --engine ";
  const std::pair<const char*, const char*> cases[] = {{"any", "llama3.1-8b"},
                                                       {"megatron-deepspeed", "llama3-8b"},
                                                       {"torchtitan", "llama3.1-8b"},
                                                       {"torchtitan", "qwen3-30b-a3b"}};
  for (const auto& [engine, model] : cases) {
    const CliRun swept = run_cli(std::string("sweep --models ") + model + job + engine);
    const CliRun planned = run_cli(std::string("plan --model ") + model + job + engine);
    ASSERT_EQ(swept.exit_code, 0) << swept.err;
    ASSERT_EQ(planned.exit_code, 0) << planned.err;
    const nlohmann::json point = nlohmann::json::parse(swept.out)["points"][0];
    const nlohmann::json plan = nlohmann::json::parse(planned.out);
    EXPECT_DOUBLE_EQ(point["step_s"].get<double>(), plan["optimum"]["step_s"].get<double>())
        << engine << " " << model;
  }
}

// --engine-version 0.2 writes every point as a torchtitan v0.2.x TOML (fp8
// points as tensorwise Float8) and costs it as v0.2.x runs it, as plan
// --emit does; without it an fp8 point is skipped, naming the flag.
TEST(SweepCli, TorchtitanV02ArrayWritesAndCostsFp8Points) {
  TempDir dir;
  const std::string job =
      " --cluster dgx-h100 --gpus 16 --gbs 32 --seq 8192 --precision fp8 --engine torchtitan --format json";
  const CliRun swept = run_cli("sweep --models llama3.1-8b" + job +
                               " --engine-version 0.2 --emit-slurm-array " + (dir.path / "v02").string());
  ASSERT_EQ(swept.exit_code, 0) << swept.err;
  EXPECT_NE(slurp((dir.path / "v02" / "point-0000" / "torchtitan.toml").string())
                .find("converters = [\"quantize.linear.float8\"]"),
            std::string::npos);
  const CliRun planned =
      run_cli("plan --model llama3.1-8b" + job + " --emit torchtitan --engine-version 0.2 --out " +
              (dir.path / "plan").string());
  ASSERT_EQ(planned.exit_code, 0) << planned.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(swept.out)["points"][0]["step_s"].get<double>(),
                   nlohmann::json::parse(planned.out)["optimum"]["step_s"].get<double>());
  const CliRun main_run =
      run_cli("sweep --models llama3.1-8b" + job + " --emit-slurm-array " + (dir.path / "main").string());
  EXPECT_EQ(main_run.exit_code, 1);
  EXPECT_NE(main_run.err.find("--engine-version 0.2"), std::string::npos) << main_run.err;
  EXPECT_FALSE(fs::exists(dir.path / "main" / "point-0000"));
}

TEST(SweepCli, BadOutputPathWritesNoOtherFile) {
  TempDir dir;
  const fs::path csv = dir.path / "s.csv";
  const CliRun r =
      run_cli("sweep --models gpt-1.7b --cluster dgx-a100 --gpus 64 --gbs 512 --seq 2048 --csv " +
              csv.string() + " --json " + (dir.path / "missing" / "s.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(csv));
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++entries;
  EXPECT_EQ(entries, 0);
}

}  // namespace
}  // namespace parplan
