// torchtitan fp8 plans: written for v0.2.x (--engine-version 0.2), whose
// Float8 converter runs tensorwise scaling as parplan prices it; refused for
// main, whose converter runs rowwise only. v0.2.x registers the converter as
// "quantize.linear.float8" but applies Float8 tensor parallelism only when
// "float8" is among model.converters, so its tp all-gathers stay 16 bits.
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "emit_fixtures/emit_test_util.h"
#include "src/io/input_error.h"

namespace parplan::emit_test {
namespace {

// Llama 3 70B on 64 H100 under FSDP 8 x TP 8 in fp8.
Plan llama3_70b_fp8_fsdp8_tp8() {
  Plan plan = llama31_70b_on_64_h100();
  set_mesh(plan, 64, 8, 1, 1, 1);
  plan.config.zero = 3;
  plan.job.precision = Precision::kFp8;
  return plan;
}

std::map<std::string, std::string> emitted_toml(const Plan& plan, const TempDir& dir) {
  EmitOptions options{Engine::kTorchtitan, Launcher::kTorchrun, dir.path / "out"};
  options.torchtitan_version = TorchtitanVersion::kV02;
  (void)emit_launch_files(plan, options);
  return parse_toml(read_text(dir.path / "out" / "torchtitan.toml"));
}

TEST(EmitTorchtitanFp8, V02WritesTensorwiseFloat8Linears) {
  Plan plan = llama3_70b_fp8_fsdp8_tp8();
  plan.job.fsdp_fp8_all_gather = true;
  EXPECT_EQ(joined(engine_rule_violations(plan, Engine::kTorchtitan)), "");
  TempDir dir;
  const auto toml = emitted_toml(plan, dir);
  for (const auto& [key, value] : toml) EXPECT_TRUE(torchtitan_known_keys().count(key)) << key;
  // The name the converter registers under at v0.2.x (float8.py:238).
  EXPECT_EQ(toml.at("model.converters"), "[\"quantize.linear.float8\"]");
  // No recipe_name: tensorwise, the only recipe with fp8 FSDP all-gathers
  // (float8.py:65-68 asserts against the two together).
  EXPECT_EQ(toml.count("quantize.linear.float8.recipe_name"), 0u);
  EXPECT_EQ(toml.at("quantize.linear.float8.enable_fsdp_float8_all_gather"), "true");
  EXPECT_EQ(toml.at("quantize.linear.float8.precompute_float8_dynamic_scale_for_fsdp"), "true");
  // The LM head stays 16-bit, as costed.
  EXPECT_EQ(toml.at("quantize.linear.float8.filter_fqns"), "[\"output\"]");
  EXPECT_EQ(toml.at("training.mixed_precision_param"), "bfloat16");
}

TEST(EmitTorchtitanFp8, Bf16AndPlainFp8WriteOnlyWhatTheyUse) {
  Plan bf16 = llama3_70b_fp8_fsdp8_tp8();
  bf16.job.precision = Precision::kBf16;
  TempDir a;
  const auto plain = emitted_toml(bf16, a);
  EXPECT_EQ(plain.count("model.converters"), 0u);
  for (const auto& [key, value] : plain) EXPECT_EQ(key.rfind("quantize.", 0), std::string::npos) << key;
  TempDir b;
  const auto fp8 = emitted_toml(llama3_70b_fp8_fsdp8_tp8(), b);
  EXPECT_EQ(fp8.count("quantize.linear.float8.enable_fsdp_float8_all_gather"), 0u);
  EXPECT_EQ(fp8.at("model.converters"), "[\"quantize.linear.float8\"]");
}

TEST(EmitTorchtitanFp8, MainRefusesFp8AndFp16IsNoTorchtitanPrecision) {
  const Plan plan = llama3_70b_fp8_fsdp8_tp8();
  TempDir dir;
  EmitOptions options{Engine::kTorchtitan, Launcher::kTorchrun, dir.path / "out"};
  try {
    (void)emit_launch_files(plan, options);
    ADD_FAILURE() << "torchtitan main wrote an fp8 plan";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--engine-version 0.2"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path / "out" / "launch.sh"));
  Plan fp16 = plan;
  fp16.job.precision = Precision::kFp16;
  EXPECT_TRUE(contains(engine_rule_violations(fp16, Engine::kTorchtitan), "mixed_precision_param"));
}

TEST(EmitTorchtitanFp8, V02CostsItsLlamaAsItRuns) {
  JobSpec job;
  apply_engine_recipe("torchtitan", job);
  ASSERT_TRUE(job.fp8_tp_all_gather);
  cost_as_torchtitan_version(TorchtitanVersion::kV02, job);
  EXPECT_FALSE(job.fp8_tp_all_gather);
  EXPECT_TRUE(job.separate_qkv);
  EXPECT_EQ(job.attention_kernel, AttentionKernel::kCudnn);
  JobSpec main_job;
  apply_engine_recipe("torchtitan", main_job);
  cost_as_torchtitan_version(TorchtitanVersion::kMain, main_job);
  EXPECT_TRUE(main_job.fp8_tp_all_gather);
}

double tp_comm_s(const std::string& args) {
  const test::CliRun run = test::run_cli(args + " --format json");
  EXPECT_EQ(run.exit_code, 0) << args << "\n" << run.err;
  return run.exit_code == 0 ? nlohmann::json::parse(run.out)["time"]["tp_comm_s"].get<double>() : 0.0;
}

// Through the CLI: plan --emit torchtitan --engine-version 0.2 prices the
// 16-bit tp gathers it writes (more tp time than Float8 tensor parallelism
// would take); without the version, one line naming it, exit 2.
TEST(EmitTorchtitanFp8, CliPlansV02AndRefusesMain) {
  const std::string job =
      "--model llama3.1-8b --cluster dgx-h100 --gpus 16 --gbs 32 --seq 8192 --precision fp8 --engine "
      "torchtitan "
      "--tp 8 --pp 1 --cp 1 --mbs 1 --zero 3 --recompute none --sp";
  TempDir dir;
  const double written = tp_comm_s("plan " + job + " --emit torchtitan --engine-version 0.2 --out " +
                                   (dir.path / "v02").string());
  EXPECT_TRUE(fs::exists(dir.path / "v02" / "torchtitan.toml"));
  EXPECT_GT(written, tp_comm_s("estimate " + job));
  test::expect_cli_refusal("plan " + job + " --emit torchtitan --out " + (dir.path / "main").string(),
                           "--engine-version 0.2");
  EXPECT_FALSE(fs::exists(dir.path / "main" / "launch.sh"));
  // v0.2 writes llama3 flavors only: an fp8 plan of another model is sent
  // to bf16 or Megatron, not back to main.
  test::expect_cli_refusal(
      "plan --model qwen3-30b-a3b --cluster dgx-h100 --gpus 16 --gbs 64 --seq 4096 "
      "--precision fp8 --engine torchtitan --emit torchtitan --engine-version 0.2 --out " +
          (dir.path / "qwen").string(),
      "emit megatron");
  // Transformer Engine's scaling recipe is no torchtitan input.
  test::expect_cli_refusal("estimate " + job + " --fp8-recipe current", "--fp8-recipe");
  // tune writes main's Python configs (calibrate reads them back).
  const std::string tune_job = test::write_temp("tune_fp8_titan.yaml",
                                                "model: llama3.1-8b\ncluster: dgx-h100\ngpus: 16\ngbs: 32\n"
                                                "seq: 8192\nprecision: fp8\nengine: torchtitan\n");
  test::expect_cli_refusal("tune --job " + tune_job + " --trials 3 --out " + (dir.path / "tune").string(),
                           "rowwise");
  EXPECT_FALSE(fs::exists(dir.path / "tune"));
}

}  // namespace
}  // namespace parplan::emit_test
