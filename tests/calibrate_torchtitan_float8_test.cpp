// torchtitan's Float8 linears as calibrate reads them from a job file: the
// converter's two names (before and after torchtitan's quantization
// refactor of 2025-09-30) decide whether tensor parallelism gathers fp8,
// the FSDP fp8 all-gather is read, and rowwise recipes (torchtitan main's
// only Float8 since 2026-04-27) are refused, since parplan prices tensorwise
// scaling. A plan written for v0.2.x reads back as it was costed.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "emit_fixtures/emit_test_util.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/input_error.h"
#include "src/io/torchtitan_log_reader.h"
#include "src/io/torchtitan_python_config.h"

namespace parplan::titan_float8_test {
namespace {

const std::string kLog = "tests/calibrate_fixtures/torchtitan-llama3-8b-16gpu.log";
const std::string kToml = "tests/calibrate_fixtures/torchtitan-llama3-8b-16gpu.toml";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

FitRun read(const std::string& extra_toml, const std::string& flags = "") {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  return parse_torchtitan_log(slurp((data_dir() / kLog).string()),
                              slurp((data_dir() / kToml).string()) + extra_toml, flags, "run.log", cluster);
}

TEST(CalibrateTorchtitanFloat8, TheConverterNameDecidesTheTensorParallelGathers) {
  // The fixture: FSDP 8 x TP 2, resharding after forward (zero 3).
  const FitRun bf16 = read("");
  EXPECT_EQ(bf16.job.precision, Precision::kBf16);
  // v0.2.x: "quantize.linear.float8", whose llama3 parallelize looks for
  // "float8" and applies plain tensor parallelism.
  const FitRun v02 = read("\n[model]\nconverters = [\"quantize.linear.float8\"]\n");
  EXPECT_EQ(v02.job.precision, Precision::kFp8);
  EXPECT_FALSE(v02.job.fp8_tp_all_gather);
  EXPECT_FALSE(v02.job.fsdp_fp8_all_gather);
  // Before the refactor: "float8", Float8 tensor parallelism.
  const FitRun old = read("", "--model.converters float8");
  EXPECT_EQ(old.job.precision, Precision::kFp8);
  EXPECT_TRUE(old.job.fp8_tp_all_gather);
  const FitRun switch2024 = read("\n[float8]\nenable_float8_linear = true\n");
  EXPECT_TRUE(switch2024.job.fp8_tp_all_gather);
}

TEST(CalibrateTorchtitanFloat8, FsdpFloat8AllGatherIsRead) {
  const FitRun v02 = read(
      "\n[model]\nconverters = [\"quantize.linear.float8\"]\n[quantize.linear.float8]\n"
      "enable_fsdp_float8_all_gather = true\nprecompute_float8_dynamic_scale_for_fsdp = true\n");
  EXPECT_EQ(v02.config.zero, 3);
  EXPECT_TRUE(v02.job.fsdp_fp8_all_gather);
  const FitRun old = read("\n[float8]\nenable_fsdp_float8_all_gather = true\n", "--model.converters=float8");
  EXPECT_TRUE(old.job.fsdp_fp8_all_gather);
}

TEST(CalibrateTorchtitanFloat8, RowwiseRecipesAreRefused) {
  for (const char* recipe : {"rowwise", "rowwise_with_gw_hp"}) {
    try {
      (void)read(
          std::string("\n[model]\nconverters = [\"quantize.linear.float8\"]\n[quantize.linear.float8]\n"
                      "recipe_name = \"") +
          recipe + "\"\n");
      ADD_FAILURE() << recipe << " was read";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("tensorwise"), std::string::npos) << e.what();
    }
  }
  // tensorwise, named: read as the default.
  EXPECT_EQ(read("\n[model]\nconverters = [\"quantize.linear.float8\"]\n[quantize.linear.float8]\n"
                 "recipe_name = \"tensorwise\"\n")
                .job.precision,
            Precision::kFp8);
}

// A Python config of the llama3 8B flavor with Float8 linears configured
// by `arguments` (Float8LinearConverter.Config's keywords).
std::map<std::string, std::string> llama3_8b_float8(const std::string& arguments) {
  return parse_torchtitan_python_config(
      "config = llama3_8b()\nconfig.model_spec = model_registry(\"8B\", "
      "converters=[Float8LinearConverter.Config(" +
          arguments + ")])\n",
      "float8.py");
}

// torchtitan main's Python configs: Float8 is rowwise unless the config
// predates 2026-04-27 (it sets enable_fsdp_float8_all_gather, a field main
// dropped with tensorwise) or names its recipe.
TEST(CalibrateTorchtitanFloat8, PythonConfigsNameTheirRecipe) {
  const auto current =
      parse_torchtitan_python_config("config = llama3_405b()\nconfig.activation_checkpoint = None\n", "a.py");
  EXPECT_EQ(current.at("quantize.linear.float8.recipe_name"), "rowwise");
  const auto older = llama3_8b_float8("enable_fsdp_float8_all_gather=True");
  EXPECT_EQ(older.count("quantize.linear.float8.recipe_name"), 0u);
  EXPECT_EQ(older.at("quantize.linear.float8.enable_fsdp_float8_all_gather"), "true");
  const auto named = llama3_8b_float8("recipe_name=\"rowwise_with_gw_hp\"");
  EXPECT_EQ(named.at("quantize.linear.float8.recipe_name"), "rowwise_with_gw_hp");
  // calibrate refuses the rowwise run, naming what it prices.
  try {
    (void)parse_torchtitan_log(slurp((data_dir() / kLog).string()), "config = llama3_405b()\n", "", "run.log",
                               load_cluster("dgx-h100"), TorchtitanJobFormat::kPython);
    ADD_FAILURE() << "a rowwise Float8 run was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rowwise"), std::string::npos) << e.what();
  }
}

// plan --emit torchtitan --engine-version 0.2 of an fp8 plan, read back:
// the fp8 linears, the 16-bit tp gathers and the fp8 FSDP gathers it was
// costed with.
TEST(CalibrateTorchtitanFloat8, AWrittenV02PlanReadsBackAsCosted) {
  using namespace emit_test;
  Plan plan = llama31_70b_on_64_h100();
  set_mesh(plan, 64, 8, 1, 1, 1);
  plan.config.zero = 3;
  plan.job.precision = Precision::kFp8;
  plan.job.fsdp_fp8_all_gather = true;
  TempDir dir;
  EmitOptions options{Engine::kTorchtitan, Launcher::kTorchrun, dir.path / "out"};
  options.torchtitan_version = TorchtitanVersion::kV02;
  (void)emit_launch_files(plan, options);
  const std::string toml = slurp((dir.path / "out" / "torchtitan.toml").string());
  const std::string log = "[rank0]: Building 2-D device mesh with ['dp_shard', 'tp'], [8, 8]\n" +
                          slurp((data_dir() / kLog).string());
  const FitRun run =
      parse_torchtitan_log(log, toml, "--nnodes 8 --nproc_per_node 8", "run.log", load_cluster("dgx-h100"));
  EXPECT_EQ(run.job.precision, Precision::kFp8);
  EXPECT_FALSE(run.job.fp8_tp_all_gather);
  EXPECT_TRUE(run.job.fsdp_fp8_all_gather);
  EXPECT_TRUE(run.job.separate_qkv);
  EXPECT_EQ(run.config.tp, 8);
  EXPECT_EQ(run.config.zero, 3);
}

}  // namespace
}  // namespace parplan::titan_float8_test
