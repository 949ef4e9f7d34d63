// --torch-compile on|off and the job key torch_compile: torchtitan runs
// eager PyTorch unless asked to compile, so a plan can be priced and
// emitted either way; other engines refuse the switch.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/cli_support.h"

namespace parplan {
namespace {

using test::run_cli;

const std::string kJob = "--model llama3.1-8b --cluster dgx-h100 --gpus 8 --gbs 32 --seq 8192";
const std::string kTitan = kJob + " --engine torchtitan --tp 1 --pp 1 --zero 3 --format json";

double step_s(const std::string& args) {
  const test::CliRun run = run_cli("estimate " + args);
  EXPECT_EQ(run.exit_code, 0) << args << "\n" << run.err;
  return run.exit_code == 0 ? nlohmann::json::parse(run.out)["time"]["step_s"].get<double>() : 0.0;
}

// Eager PyTorch runs every norm, activation and residual as kernels of
// their own (docs/cost-model.md): never faster than compiled.
TEST(TorchCompileFlag, EagerIsSlowerThanCompiledAndOnIsTheDefault) {
  const double on = step_s(kTitan + " --torch-compile on");
  const double off = step_s(kTitan + " --torch-compile off");
  EXPECT_GT(off, on);
  EXPECT_DOUBLE_EQ(step_s(kTitan), on);
}

TEST(TorchCompileFlag, JobFileKeyActsAsTheFlag) {
  const std::string file = test::write_temp(
      "compile_job.yaml",
      "model: llama3.1-8b\ncluster: dgx-h100\ngpus: 8\ngbs: 32\nseq: 8192\nengine: torchtitan\n"
      "torch_compile: false\nconfig: {tp: 1, pp: 1, zero: 3}\n");
  EXPECT_DOUBLE_EQ(step_s("--job " + file + " --format json"), step_s(kTitan + " --torch-compile off"));
  // The flag overrides the key.
  EXPECT_DOUBLE_EQ(step_s("--job " + file + " --torch-compile on --format json"),
                   step_s(kTitan + " --torch-compile on"));
}

TEST(TorchCompileFlag, EmittedLaunchFileCompilesOnlyWhenOn) {
  for (const char* mode : {"on", "off"}) {
    const std::string dir = ::testing::TempDir() + "parplan_compile_" + std::to_string(::getpid()) + mode;
    std::filesystem::remove_all(dir);
    const test::CliRun run =
        run_cli("plan " + kJob + " --emit torchtitan --torch-compile " + mode + " --out " + dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::string py = test::slurp(dir + "/parplan_torchtitan.py");
    ASSERT_FALSE(py.empty());
    EXPECT_EQ(py.find("CompileConfig(enable=True") != std::string::npos, std::string(mode) == "on") << py;
    std::filesystem::remove_all(dir);
  }
}

// torchtitan compiles the loss with the model (compile.components "model",
// "loss"): 4 + 4 bytes per logit against the eager 22 + 26, so the compiled
// default is faster than naming the eager loss; compile off runs it eager.
TEST(TorchCompileFlag, CompiledTorchtitanRunsTheCompiledLoss) {
  const double compiled = step_s(kTitan);
  EXPECT_LT(compiled, step_s(kTitan + " --cross-entropy eager"));
  EXPECT_DOUBLE_EQ(compiled, step_s(kTitan + " --cross-entropy compiled"));
  EXPECT_DOUBLE_EQ(step_s(kTitan + " --torch-compile off"),
                   step_s(kTitan + " --torch-compile off --cross-entropy eager"));
  test::expect_refusal(run_cli("estimate " + kTitan + " --torch-compile off --cross-entropy compiled"),
                       "--cross-entropy compiled");
  test::expect_refusal(
      run_cli("estimate " + kJob + " --tp 1 --pp 1 --engine megatron --cross-entropy compiled"),
      "--cross-entropy compiled");
  // Transformer Engine's in-place loss is Megatron-LM's alone: refused as a
  // request for another engine (it used to search, then find no plan).
  test::expect_refusal(run_cli("estimate " + kTitan + " --cross-entropy te"), "--cross-entropy te");
  test::expect_refusal(run_cli("plan " + kJob + " --engine deepspeed --cross-entropy te"),
                       "--engine megatron");
  const test::CliRun any = run_cli("plan " + kJob + " --cross-entropy te");
  EXPECT_EQ(any.exit_code, 0) << any.err;
  EXPECT_NE(any.out.find("torchtitan: not searched: --cross-entropy te"), std::string::npos) << any.out;
}

TEST(TorchCompileFlag, OtherEnginesAndBadValuesAreRefused) {
  test::expect_refusal(run_cli("estimate " + kJob + " --tp 1 --pp 1 --engine megatron --torch-compile off"),
                       "--torch-compile is torchtitan's");
  test::expect_refusal(run_cli("plan " + kJob + " --torch-compile off"), "--engine torchtitan");
  test::expect_refusal(run_cli("estimate " + kTitan + " --torch-compile maybe"), "on or off");
  const std::string file = test::write_temp("compile_megatron.yaml",
                                            "model: llama3.1-8b\ncluster: dgx-h100\ngpus: 8\ngbs: 32\nseq: "
                                            "8192\nengine: megatron\ntorch_compile: true\n");
  test::expect_refusal(run_cli("plan --job " + file), "field 'torch_compile'");
  const std::string typo = test::write_temp("compile_typo.yaml",
                                            "model: llama3.1-8b\ncluster: dgx-h100\ngpus: 8\ngbs: 32\nseq: "
                                            "8192\nengine: torchtitan\ntorch_compile: yes please\n");
  test::expect_refusal(run_cli("plan --job " + typo), "torch_compile");
}

}  // namespace
}  // namespace parplan
