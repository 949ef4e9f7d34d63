// The FLOP counts behind published TFLOP/s figures (src/io/measured_figure.*):
// each source prints a step time or a token rate beside its TFLOP/s, and the
// formula it names must turn the one into the other.

#include <gtest/gtest.h>

#include "src/io/input_error.h"
#include "src/io/measured_figure.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

// Megatron-MoE-ModelZoo's Qwen3-235B-A22B H100 table (best_practice/qwen3/
// readme.md @ 38ce2ed): 256 GPUs, gbs 2048, seq 4096, "Step time (sec)" and
// "Per GPU TF" per row, from Megatron-LM's num_floating_point_operations of
// the run's commit (main 1e05700, 2025-05: the causal count). The figures
// are rounded to 0.1 s and 1 TF/GPU: at most 0.6 % between the two.
TEST(MegatronCausalFlops, ModelZooQwen3StepTimesGiveTheirTflops) {
  const ModelSpec m = load_model("qwen3-235b-a22b");
  const double flops = formula_step_flops(m, 2048, 4096, FlopFormula::kMegatronCausal);
  const struct {
    double step_s, tflops_per_gpu;
  } rows[] = {{19.7, 245}, {17.6, 276}, {24.2, 200}, {29.0, 167}};
  for (const auto& row : rows) {
    const double tflops = flops / (row.step_s * 256) / 1e12;
    EXPECT_NEAR(tflops / row.tflops_per_gpu, 1.0, 0.006) << row.step_s << " s";
  }
  // The full square (Megatron-LM before 8873b55) would give 12 % more.
  const double full = formula_step_flops(m, 2048, 4096, FlopFormula::kMegatron);
  EXPECT_GT(full / (19.7 * 256) / 1e12, 245 * 1.1);
}

// Megatron-Bridge's performance summary (docs/performance-summary-archive.md
// @ 4ab94df) prints tokens/s/GPU and model TFLOP/s/GPU per row; their ratio
// is the FLOPs per token at seq 4096. DeepSeek-V3 exercises every term the
// 2025 function added: MLA's projections, 3 dense layers beside 58 MoE
// layers with a shared expert, and the MTP layer with its own logits.
TEST(MegatronCausalFlops, BridgeDeepSeekV3RowsGiveTheirFlopsPerToken) {
  ModelSpec with_mtp = load_model("deepseek-v3");
  ASSERT_EQ(with_mtp.mtp_layers, 1);
  ModelSpec without_mtp = with_mtp;
  without_mtp.mtp_layers = 0;
  const auto per_token = [](const ModelSpec& m) {
    return formula_step_flops(m, 1, 4096, FlopFormula::kMegatronCausal) / 4096;
  };
  // "DeepSeekV3 (w/o MTP)" rows: tokens/s/GPU, TFLOP/s/GPU.
  for (const auto& [tokens, tflops] : {std::pair{3848.0, 961.0}, {3139.0, 782.0}, {4357.0, 1088.0}})
    EXPECT_NEAR(per_token(without_mtp) / (tflops * 1e12 / tokens), 1.0, 0.004) << tokens;
  // "DeepSeekV3 (w/ MTP)" and the H100 dropless row (1297 tokens/s, 338).
  for (const auto& [tokens, tflops] : {std::pair{2139.0, 557.0}, {1297.0, 338.0}})
    EXPECT_NEAR(per_token(with_mtp) / (tflops * 1e12 / tokens), 1.0, 0.004) << tokens;
}

// Only the attention core changes between the two Megatron counts: by
// 12 L h^2 (q/h) s/(2h) per token, whatever the rest of the model.
TEST(MegatronCausalFlops, DiffersFromTheFullSquareByHalfTheCore) {
  const ModelSpec m = load_model("llama3-70b");
  const int seq = 8192;
  const double full = formula_step_flops(m, 1, seq, FlopFormula::kMegatron) / seq;
  const double causal = formula_step_flops(m, 1, seq, FlopFormula::kMegatronCausal) / seq;
  const double h = m.hidden;
  const double q_ratio = double(m.heads) * m.head_dim / h;
  EXPECT_NEAR(full - causal, 12.0 * m.layers * h * h * q_ratio * seq / (2 * h), 1e-9 * full);
}

TEST(MegatronCausalFlops, ParsesByNameAndRefusesOthers) {
  EXPECT_EQ(parse_flop_formula("megatron_causal", "f"), FlopFormula::kMegatronCausal);
  EXPECT_EQ(parse_flop_formula("megatron", "f"), FlopFormula::kMegatron);
  EXPECT_THROW(parse_flop_formula("causal", "f"), InputError);
}

}  // namespace
}  // namespace parplan
