// --emit torchtitan for Qwen3: torchtitan main registers qwen3 flavors
// (torchtitan/models/qwen3 at b5bcd76c), dense and MoE; the config builds
// the flavor of the model's shape, with expert parallelism borrowed from
// dp_shard * cp * tp. What the flavor would build differently (RoPE base,
// Q/K norms, tying) is refused, and v0.2's TOML (llama3 only) refuses them.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "src/emit/emit_internal.h"
#include "src/io/model_loader.h"
#include "tests/cli_support.h"

namespace parplan {
namespace {

std::string read_text(const std::filesystem::path& path) { return test::slurp(path.string()); }

// "name=value," lines of the emitted ParallelismConfig(...).
int parallelism_value(const std::string& python, const std::string& name) {
  const auto at = python.find("        " + name + "=");
  if (at == std::string::npos) return -1;
  return std::stoi(python.substr(at + 9 + name.size()));
}

TEST(EmitTorchtitanQwen3, MoeFlavorWithExpertParallelismBorrowedFromTheShardedRanks) {
  const std::string out = ::testing::TempDir() + "tt_qwen3_moe_" + std::to_string(::getpid());
  std::filesystem::remove_all(out);
  const test::CliRun run = test::run_cli(
      "plan --model qwen3-30b-a3b --cluster dgx-h100 --gpus 16 --gbs 256 --seq 4096 --emit torchtitan "
      "--out " +
      out + " --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string py = read_text(std::filesystem::path(out) / "parplan_torchtitan.py");
  EXPECT_NE(py.find("from torchtitan.models.qwen3 import model_registry"), std::string::npos);
  EXPECT_NE(py.find("from torchtitan.models.qwen3.config_registry import qwen3_30b_a3b"), std::string::npos);
  EXPECT_NE(py.find("model_registry(\"30B-A3B\")"), std::string::npos);
  const auto plan = nlohmann::json::parse(run.out)["recommended"]["config"];
  const int ep = parallelism_value(py, "expert_parallel_degree");
  EXPECT_EQ(ep, plan["ep"].get<int>());
  // ParallelDims: ep divides dp_shard * cp * tp, and the degrees cover the world.
  const int shard = parallelism_value(py, "data_parallel_shard_degree");
  const int replicate = parallelism_value(py, "data_parallel_replicate_degree");
  const int tp = parallelism_value(py, "tensor_parallel_degree");
  const int cp = parallelism_value(py, "context_parallel_degree");
  const int pp = parallelism_value(py, "pipeline_parallel_degree");
  EXPECT_EQ(replicate * shard * tp * cp * pp, 16);
  EXPECT_EQ((shard * cp * tp) % ep, 0);
  std::filesystem::remove_all(out);
}

// A flavor without a recipe of its own (Qwen3 8B) starts from its family's
// nearest recipe and names its own assets.
TEST(EmitTorchtitanQwen3, DenseFlavorWithoutItsOwnRecipe) {
  const std::string model = test::write_temp(
      "qwen3-8b.yaml",
      "name: qwen3-8b\nsource: \"Qwen/Qwen3-8B config.json\"\nlayers: 36\nhidden: 4096\nffn_hidden: 12288\n"
      "heads: 32\nkv_groups: 8\nhead_dim: 128\nvocab: 151936\n"
      "max_positions: 40960\ngated_ffn: true\nlinear_bias: false\n"
      "norm: rmsnorm\nposition: rope\ntied_embeddings: false\n"
      "qk_norm: true\ndropout: 0.0\nrope_theta: 1000000\n");
  const std::string out = ::testing::TempDir() + "tt_qwen3_8b_" + std::to_string(::getpid());
  std::filesystem::remove_all(out);
  const test::CliRun run =
      test::run_cli("plan --model " + model +
                    " --cluster dgx-h100 --gpus 8 --gbs 64 --seq 4096 --emit torchtitan --out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string py = read_text(std::filesystem::path(out) / "parplan_torchtitan.py");
  EXPECT_NE(py.find("model_registry(\"8B\")"), std::string::npos);
  EXPECT_NE(py.find("import qwen3_14b"), std::string::npos);
  EXPECT_NE(py.find("\"./assets/hf/Qwen3-8B\""), std::string::npos);
  EXPECT_EQ(py.find("expert_parallel_degree"), std::string::npos);
  std::filesystem::remove_all(out);
}

// torchtitan's 235B-A22B flavor uses RoPE base 5e6 where the published
// config.json has 1e6: the files would train another model.
TEST(EmitTorchtitanQwen3, AFlavorThatBuildsAnotherModelIsRefused) {
  const ModelSpec qwen = load_model("qwen3-235b-a22b");
  const emit_detail::TorchtitanFlavor* f = emit_detail::torchtitan_flavor(qwen);
  ASSERT_NE(f, nullptr);
  const auto differences = emit_detail::torchtitan_flavor_differences(qwen, *f);
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_NE(differences[0].find("RoPE base 1000000"), std::string::npos) << differences[0];
  // Llama 3.1 8B with Q/K norms is a llama3 8B shape the flavor builds without them.
  ModelSpec llama = load_model("llama3.1-8b");
  ASSERT_EQ(emit_detail::torchtitan_llama3_flavor(llama), "8B");
  llama.qk_norm = true;
  EXPECT_EQ(emit_detail::torchtitan_flavor_differences(llama, *emit_detail::torchtitan_flavor(llama)).size(),
            1u);
  const std::string out = ::testing::TempDir() + "tt_qwen3_235b_" + std::to_string(::getpid());
  const test::CliRun run = test::run_cli(
      "plan --model qwen3-235b-a22b --cluster dgx-h100 --gpus 256 --gbs 2048 --seq 4096 --emit torchtitan "
      "--out " +
      out);
  // The model, not a plan, is what torchtitan cannot run: refused as a
  // request, before any search.
  test::expect_refusal(run, "--emit torchtitan cannot build qwen3-235b-a22b as it is");
  EXPECT_NE(run.err.find("RoPE base"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(EmitTorchtitanQwen3, TheV02TomlWritesLlama3Only) {
  const std::string out = ::testing::TempDir() + "tt_qwen3_v02_" + std::to_string(::getpid());
  const test::CliRun run = test::run_cli(
      "plan --model qwen3-30b-a3b --cluster dgx-h100 --gpus 16 --gbs 256 --seq 4096 --emit torchtitan "
      "--engine-version 0.2 --out " +
      out);
  test::expect_refusal(run, "llama3 flavors only");
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace parplan
