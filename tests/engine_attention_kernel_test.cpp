// The attention kernel follows the engine (src/emit/engine_capabilities.cpp
// engine_attention_kernel, sources there); `--engine any` keeps the
// profile's calibrated constant.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cost/attention_kernels.h"
#include "src/emit/engine_capabilities.h"
#include "tests/cli_support.h"

namespace parplan {
namespace {

AttentionKernel kernel_of(const char* engine) {
  return engine_recipe_defaults(parse_engine_selection(engine)).attention_kernel;
}

TEST(EngineAttentionKernel, EachEngineRunsItsDefaultKernel) {
  // Transformer Engine prefers cuDNN FusedAttention on Hopper under
  // Megatron's default --attention-backend auto.
  EXPECT_EQ(kernel_of("megatron"), AttentionKernel::kCudnn);
  // torchtitan's SDPA priority list puts CUDNN_ATTENTION first.
  EXPECT_EQ(kernel_of("torchtitan"), AttentionKernel::kCudnn);
  // Megatron-DeepSpeed's --use-flash-attn-v2: the flash-attn 2 package.
  EXPECT_EQ(kernel_of("megatron-deepspeed"), AttentionKernel::kFlash2);
  // DeepSpeed leaves attention to the model; `any` does not know the engine:
  // both keep the profile's calibrated constant.
  EXPECT_EQ(kernel_of("deepspeed"), AttentionKernel::kProfile);
  EXPECT_EQ(kernel_of("any"), AttentionKernel::kProfile);
}

double step_s(const std::string& engine) {
  const test::CliRun run = test::run_cli(
      "estimate --model llama3-70b --cluster dgx-h100 --gpus 64 --gbs 512 --seq 8192 --tp 8 --pp 4 --zero 1 "
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
      "plan --model llama3-8b --cluster dgx-h100 --gpus 8 --gbs 128 --seq 8192 --engine megatron --emit "
      "megatron "
      "--out " +
      out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string launch = test::slurp(out + "/launch.sh");
  EXPECT_NE(launch.find("--attention-backend fused"), std::string::npos);
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace parplan
