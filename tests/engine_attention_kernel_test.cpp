// The attention kernel follows the engine (src/emit/engine_capabilities.cpp
// engine_attention_kernel, sources there); `--engine any` keeps the
// profile's calibrated constant.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cost/attention_kernels.h"
#include "src/emit/engine_capabilities.h"
#include "tests/cli_support.h"
#include "tests/kernel_csv.h"

namespace parplan {
namespace {

AttentionKernel kernel_of(const char* engine) {
  return engine_recipe_defaults(parse_engine_selection(engine)).attention_kernel;
}

TEST(EngineAttentionKernel, EachEngineRunsItsDefaultKernel) {
  // Transformer Engine prefers cuDNN FusedAttention on Hopper under
  // Megatron's default --attention-backend auto.
  EXPECT_EQ(kernel_of("megatron"), AttentionKernel::kCudnn);
  // torchtitan main builds language models with FlexAttention (its
  // model_registry's default attn_backend "flex"; "sdpa" raises).
  EXPECT_EQ(kernel_of("torchtitan"), AttentionKernel::kFlex);
  // Megatron-DeepSpeed's --use-flash-attn-v2: the flash-attn 2 package.
  EXPECT_EQ(kernel_of("megatron-deepspeed"), AttentionKernel::kFlash2);
  // DeepSpeed leaves attention to the model; `any` does not know the engine:
  // both keep the profile's calibrated constant.
  EXPECT_EQ(kernel_of("deepspeed"), AttentionKernel::kProfile);
  EXPECT_EQ(kernel_of("any"), AttentionKernel::kProfile);
}

double step_s(const std::string& engine) {
  const test::CliRun run = test::run_cli(
      "estimate --model llama3.1-70b --cluster dgx-h100 --gpus 64 --gbs 512 --seq 8192 --tp 8 --pp 4 --zero "
      "1 "
      "--format json --engine " +
      engine);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return nlohmann::json::parse(run.out)["time"]["step_s"].get<double>();
}

// FlashAttention-2 is slower than cuDNN's fused attention on H100 at 8K
// (Shah et al. 2024, FlashAttention-3 paper, Fig. 5/6, as
// cost/attention_kernels.cpp transcribes them), so the same config is
// slower under Megatron-DeepSpeed's kernel than under Megatron's.
TEST(EngineAttentionKernel, FlashAttention2EngineIsSlowerThanCudnnEngineOnH100) {
  ASSERT_LT(published_attention_tflops(AttentionKernel::kFlash2, 8192, false),
            published_attention_tflops(AttentionKernel::kCudnn, 8192, false));
  EXPECT_GT(step_s("megatron-deepspeed"), step_s("megatron"));
}

// The Megatron launch file runs the kernel the plan was costed with:
// "flash" would force Transformer Engine's FlashAttention backend
// (megatron/core/models/common/language_module/language_module.py sets
// NVTE_FUSED_ATTN=0 for it).
TEST(EngineAttentionKernel, MegatronLaunchFileAsksForFusedAttention) {
  const std::string out = ::testing::TempDir() + "attn_kernel_emit_" + std::to_string(::getpid());
  const test::CliRun run = test::run_cli(
      "plan --model llama3.1-8b --cluster dgx-h100 --gpus 8 --gbs 128 --seq 8192 --engine megatron --emit "
      "megatron "
      "--out " +
      out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string launch = test::slurp(out + "/launch.sh");
  EXPECT_NE(launch.find("--attention-backend fused"), std::string::npos);
  std::filesystem::remove_all(out);
}

// FlexAttention keeps, at every measured length, its share of
// FlashAttention-2 measured in the same run on one H100
// (calibration/h100-kernels/attention_flex.csv: flex_attention under
// torch.compile's defaults against SDPA's flash path), forward and backward,
// and the shortest length's share below it.
TEST(EngineAttentionKernel, FlexAttentionIsItsMeasuredShareOfFlashAttention2) {
  std::map<double, double> flash_fwd, flash_bwd, flex_fwd, flex_bwd;
  for (const test::CsvRow& r : test::read_kernel_csv("attention_flex.csv")) {
    if (r.at("fwd_ms").empty() || r.at("kv_heads") != r.at("heads")) continue;
    const double seq = test::csv_number(r, "seq");
    if (r.at("kernel") == "flash (SDPA FlashAttention-2)") {
      flash_fwd[seq] = test::csv_number(r, "fwd_ms");
      flash_bwd[seq] = test::csv_number(r, "bwd_ms");
    } else if (r.at("kernel") == "flex (torch.compile defaults)") {
      flex_fwd[seq] = test::csv_number(r, "fwd_ms");
      flex_bwd[seq] = test::csv_number(r, "bwd_ms");
    }
  }
  ASSERT_EQ(flex_fwd.size(), 7u);
  const auto share = [](AttentionKernel k, double seq, bool backward) {
    return published_attention_tflops(k, seq, backward) /
           published_attention_tflops(AttentionKernel::kFlash2, seq, backward);
  };
  for (const auto& [seq, flex_ms] : flex_fwd) {
    // Speed is inverse to time at the same FLOPs.
    EXPECT_NEAR(share(AttentionKernel::kFlex, seq, false), flash_fwd.at(seq) / flex_ms, 2e-3) << seq;
    EXPECT_NEAR(share(AttentionKernel::kFlex, seq, true), flash_bwd.at(seq) / flex_bwd.at(seq), 2e-3) << seq;
  }
  const double first = flex_fwd.begin()->first;
  EXPECT_DOUBLE_EQ(share(AttentionKernel::kFlex, 512, false), share(AttentionKernel::kFlex, first, false));
  EXPECT_DOUBLE_EQ(share(AttentionKernel::kFlex, 512, true), share(AttentionKernel::kFlex, first, true));
}

// torchtitan v0.2.x runs SDPA with cuDNN first: the same plan emitted for
// it is costed faster than for main's FlexAttention.
TEST(EngineAttentionKernel, TorchtitanV02IsCostedWithCudnnAndMainWithFlex) {
  const auto emitted_step_s = [](const std::string& version) {
    const std::string out =
        ::testing::TempDir() + "attn_kernel_tt_" + version + "_" + std::to_string(::getpid());
    std::filesystem::remove_all(out);
    const test::CliRun run = test::run_cli(
        "plan --model llama3.1-8b --cluster dgx-h100 --gpus 8 --gbs 16 --seq 8192 --tp 1 --pp 1 --mbs 2 "
        "--zero "
        "3 "
        "--recompute selective --emit torchtitan --engine-version " +
        version + " --out " + out + " --format json");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    std::filesystem::remove_all(out);
    return nlohmann::json::parse(run.out)["time"]["step_s"].get<double>();
  };
  EXPECT_LT(emitted_step_s("0.2"), emitted_step_s("main"));
}

}  // namespace
}  // namespace parplan
