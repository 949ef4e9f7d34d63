// Hardware FLOPs under selective recomputation (cost/flops.h): what each of
// Megatron-LM's --recompute-modules and torchtitan's op policy repeats, from
// the layer's GEMM shapes.

#include <gtest/gtest.h>

#include "cost/flops.h"
#include "cost/parameters.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

JobSpec job_with(int seq, RecomputeModules modules) {
  JobSpec job;
  job.seq = seq;
  job.recompute_modules = modules;
  return job;
}

RecomputeModules only(bool RecomputeModules::*module) {
  RecomputeModules m;
  m.core_attn = false;
  m.*module = true;
  return m;
}

// Element-wise modules repeat no GEMM; core_attn keeps step_flops' count.
TEST(SelectiveRecomputeFlops, NormsAndActivationsAddNothingCoreAttentionAsBefore) {
  const ModelSpec m = load_model("qwen3-235b-a22b");
  const int gbs = 16, seq = 4096;
  EXPECT_EQ(selective_recompute_flops(m, job_with(seq, only(&RecomputeModules::layernorm)), gbs), 0.0);
  EXPECT_EQ(selective_recompute_flops(m, job_with(seq, only(&RecomputeModules::moe_act)), gbs), 0.0);
  const StepFlops none = step_flops(m, gbs, seq, Recompute::kNone, 0);
  const StepFlops core = step_flops(m, gbs, seq, Recompute::kSelective, 0);
  EXPECT_DOUBLE_EQ(selective_recompute_flops(m, job_with(seq, RecomputeModules{}), gbs),
                   core.hardware_flops - none.hardware_flops);
}

// --recompute-modules moe: every MoE layer's block forward once more, the
// top-k routed experts' three GEMMs (SwiGLU) and the router's.
TEST(SelectiveRecomputeFlops, MoeModuleRepeatsTheExpertsForward) {
  const ModelSpec m = load_model("qwen3-235b-a22b");
  const int gbs = 8, seq = 4096;
  const double tokens = double(gbs) * seq;
  const double per_layer =
      2.0 * tokens * (3.0 * m.hidden * m.expert_ffn_hidden * m.top_k + double(m.hidden) * m.experts);
  EXPECT_NEAR(selective_recompute_flops(m, job_with(seq, only(&RecomputeModules::moe)), gbs),
              moe_layer_count(m) * per_layer, 1e-9 * per_layer);
}

// --recompute-modules mlp: a dense layer's MLP forward again.
TEST(SelectiveRecomputeFlops, MlpModuleRepeatsTheDenseMlpForward) {
  const ModelSpec m = load_model("llama3-70b");
  const int gbs = 4, seq = 8192;
  const double per_layer = 2.0 * double(gbs) * seq * 3.0 * m.hidden * m.ffn_hidden;
  EXPECT_NEAR(selective_recompute_flops(m, job_with(seq, only(&RecomputeModules::mlp)), gbs),
              m.layers * per_layer, 1e-9 * per_layer);
}

// --recompute-modules mla_up_proj: DeepSeek-V3's query and key/value up
// projections, (128 x 192) x 1536 and (128 x 256) x 512 per token.
TEST(SelectiveRecomputeFlops, MlaUpProjectionsRepeatTheirGemms) {
  const ModelSpec m = load_model("deepseek-v3");
  const double per_token_layer = 2.0 * (128.0 * 192 * 1536 + 128.0 * 256 * 512);
  EXPECT_NEAR(selective_recompute_flops(m, job_with(4096, only(&RecomputeModules::mla_up_proj)), 1),
              4096.0 * m.layers * per_token_layer, 1e-9 * per_token_layer);
}

// torchtitan's op policy keeps every other matmul's output (wq, wv, w1)
// and no attention recomputation: wk, wo and w3 run forward again.
TEST(SelectiveRecomputeFlops, TorchtitanOpPolicyRepeatsEveryOtherMatmul) {
  const ModelSpec m = load_model("llama3.1-8b");
  JobSpec job = job_with(8192, RecomputeModules{});
  job.selective_checkpoint = SelectiveCheckpoint::kTorchtitanOps;
  const double h = m.hidden;
  const double wk = h * m.kv_groups * m.head_dim, wo = double(m.heads) * m.head_dim * h,
               w3 = h * m.ffn_hidden;
  EXPECT_NEAR(selective_recompute_flops(m, job, 2), 2.0 * 2 * 8192 * m.layers * (wk + wo + w3), 1.0);
}

}  // namespace
}  // namespace parplan
