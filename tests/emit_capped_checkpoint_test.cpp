// A run longer than the site's wall-time limit: -t is the limit, and the files
// save checkpoints so that resubmitting job.sbatch resumes the run. Megatron
// (and Megatron-DeepSpeed) save every quarter of what fits and, by
// --exit-duration-in-mins, once more inside the limit before they exit
// (training.py's duration check saves first); torchtitan, whose checkpointing
// is off by default, turns it on at the same interval.
#include "cli_support.h"
#include "emit_fixtures/emit_test_util.h"
#include "src/emit/wall_time.h"

namespace parplan::emit_test {
namespace {

// GPT-3 175B on 128 DGX nodes at 30 s a step, under a 6-hour limit.
Plan capped_175b() {
  Plan plan = gpt3_175b_on_1024_a100();
  plan.cluster.batch_limits.partition = "batch";
  plan.cluster.batch_limits.source = "test limit";
  plan.cluster.batch_limits.bins = {{1, 1000, 6.0}};
  return plan;
}

// pretrain_gpt.py's arguments when job.sbatch runs with `vars` (and, in
// `env`, its environment).
ArgMap run_generic(const Plan& plan, Engine engine, const TempDir& dir,
                   std::map<std::string, std::string> vars, std::string* output = nullptr,
                   std::map<std::string, std::string>* env = nullptr) {
  const std::vector<fs::path> files = emit_launch_files(plan, {engine, Launcher::kSlurm, dir.path / "out"});
  const fs::path record = dir.path / "record";
  fs::create_directories(record);
  vars["SLURM_JOB_NUM_NODES"] = "128";
  vars["SLURM_JOB_NODELIST"] = "gpu[001-128]";
  vars["PARPLAN_TEST_NODES"] = "gpu001 gpu002";
  const RunResult r = run_clean(make_stubs(dir.path), record, "bash " + files.front().string(), vars);
  EXPECT_EQ(r.rc, 0) << r.output;
  if (output != nullptr) *output = r.output;
  if (env != nullptr) *env = read_env(record / "torchrun.env");
  return parse_args(after(read_lines(record / "torchrun.args"), "pretrain_gpt.py"));
}

TEST(EmitCappedCheckpoint, MegatronSavesAndExitsInsideTheLimit) {
  const Plan plan = capped_175b();
  // 1000 x 33 s + 15 min = 9.4 h > 6 h. Iterations that fit:
  // (21600 - 900) / 33 = 627; a checkpoint every 627 / 4 = 156; exit after
  // (21600 - 900 - 33) / 60 = 344 minutes, leaving the start-up allowance
  // for the launch and the final save.
  TempDir dir;
  auto vars = kMegatronUser;
  vars["CHECKPOINT_DIR"] = "/ckpt";
  std::map<std::string, std::string> env;
  const ArgMap a = run_generic(plan, Engine::kMegatron, dir, vars, nullptr, &env);
  expect_flag(a, "--save", "/ckpt");
  expect_flag(a, "--load", "/ckpt");
  expect_flag(a, "--save-interval", "156");
  expect_flag(a, "--exit-duration-in-mins", "344");
  EXPECT_EQ(joined(megatron_check(a, 1024, env)), "");
  EXPECT_NE(read_text(dir.path / "out" / "job.sbatch").find("a checkpoint every 156 iterations"),
            std::string::npos);
}

TEST(EmitCappedCheckpoint, MegatronWithoutCheckpointDirWarns) {
  TempDir dir;
  std::string output;
  const ArgMap a = run_generic(capped_175b(), Engine::kMegatron, dir, kMegatronUser, &output);
  EXPECT_FALSE(a.has("--save"));
  EXPECT_FALSE(a.has("--exit-duration-in-mins"));
  EXPECT_NE(output.find("set CHECKPOINT_DIR"), std::string::npos) << output;
}

TEST(EmitCappedCheckpoint, UncappedRunKeepsTheUsualInterval) {
  TempDir dir;
  auto vars = kMegatronUser;
  vars["CHECKPOINT_DIR"] = "/ckpt";
  std::string output;
  const ArgMap a = run_generic(gpt3_175b_on_1024_a100(), Engine::kMegatron, dir, vars, &output);
  expect_flag(a, "--save-interval", std::to_string(kCheckpointIntervalIters));
  EXPECT_FALSE(a.has("--exit-duration-in-mins"));
  EXPECT_EQ(output.find("CHECKPOINT_DIR"), std::string::npos) << output;
}

TEST(EmitCappedCheckpoint, MegatronDeepSpeedExitsInsideTheLimitToo) {
  Plan plan = capped_175b();
  plan.config.vp = 1;  // DeepSpeed's pipeline engine has no interleaved schedule
  TempDir dir;
  emit_launch_files(plan, {Engine::kMegatronDeepSpeed, Launcher::kSlurm, dir.path / "out"});
  const std::string launch = read_text(dir.path / "out" / "launch.sh");
  EXPECT_NE(launch.find("--save-interval 156"), std::string::npos) << launch;
  EXPECT_NE(launch.find("--exit-duration-in-mins 344"), std::string::npos) << launch;
  EXPECT_TRUE(megatron_deepspeed_known_flags().count("--exit-duration-in-mins"));
}

TEST(EmitCappedCheckpoint, TorchtitanTurnsCheckpointingOnWhenCapped) {
  // llama3.1-8b on 8 Frontier nodes: 2 hours for 1-91 nodes, far less than
  // 100000 steps need. The interval is a quarter of the steps stderr says fit.
  for (const bool v02 : {false, true}) {
    TempDir dir;
    const fs::path out = dir.path / "out";
    const test::CliRun r = test::run_cli(
        "plan --model llama3.1-8b --cluster frontier --gpus 64 --gbs 512 --seq 8192 --emit torchtitan "
        "--out " +
        out.string() + " --train-iters 100000" + (v02 ? " --engine-version 0.2" : ""));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto at = r.err.find("about ");
    ASSERT_NE(at, std::string::npos) << r.err;
    const long long fit = std::stoll(r.err.substr(at + 6));
    const std::string interval = std::to_string(std::clamp(fit / 4, 1LL, kCheckpointIntervalIters));
    if (v02) {
      const std::string toml = read_text(out / "torchtitan.toml");
      EXPECT_NE(toml.find("[checkpoint]\nenable = true\ninterval = " + interval + "\n"), std::string::npos)
          << toml;
    } else {
      const std::string py = read_text(out / "parplan_torchtitan.py");
      EXPECT_NE(
          py.find("config.checkpoint.enable = True\n    config.checkpoint.interval = " + interval + "\n"),
          std::string::npos)
          << py;
    }
  }
  // Short enough to finish inside the limit: checkpointing stays as the recipe has it.
  TempDir dir;
  const test::CliRun r = test::run_cli(
      "plan --model llama3.1-8b --cluster frontier --gpus 64 --gbs 512 --seq 8192 --emit torchtitan --out " +
      (dir.path / "out").string() + " --train-iters 20");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_text(dir.path / "out" / "parplan_torchtitan.py").find("config.checkpoint"),
            std::string::npos);
}

}  // namespace
}  // namespace parplan::emit_test
