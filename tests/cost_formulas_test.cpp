// The cost model against published formulas (shared/reference/formulas.md).
#include <gtest/gtest.h>

#include "cost/flops.h"
#include "cost/memory.h"
#include "cost/parameters.h"

namespace parplan {
namespace {

ModelSpec gpt(int heads, int hidden, int layers) {
  ModelSpec m;
  m.name = "gpt";
  m.layers = layers;
  m.hidden = hidden;
  m.ffn_hidden = 4 * hidden;
  m.heads = heads;
  m.kv_groups = heads;
  m.head_dim = hidden / heads;
  m.vocab = 51200;
  m.max_positions = 2048;
  return m;
}

// Narayanan 2021 Table 1: (params in billions, heads, hidden, layers).
struct Row {
  double billions;
  int heads, hidden, layers;
};
constexpr Row kTable1[] = {{1.7, 24, 2304, 24},      {3.6, 32, 3072, 30},     {7.5, 32, 4096, 36},
                           {18.4, 48, 6144, 40},     {39.1, 64, 8192, 48},    {76.1, 80, 10240, 60},
                           {145.6, 96, 12288, 80},   {310.1, 128, 16384, 96}, {529.6, 128, 20480, 105},
                           {1008.0, 160, 25600, 128}};

TEST(CostFormulas, ParameterCountsReproduceNarayananTable1) {
  for (const Row& row : kTable1) {
    const ModelSpec m = gpt(row.heads, row.hidden, row.layers);
    const double billions = total_params(m, 2048) / 1e9;
    // The table rounds to 0.1 B (1T row: to 1 B).
    EXPECT_NEAR(billions, row.billions, row.billions > 1000 ? 0.5 : 0.05) << row.hidden;
  }
}

TEST(CostFormulas, ParameterCountEqualsEquationTwo) {
  for (const Row& row : kTable1) {
    const ModelSpec m = gpt(row.heads, row.hidden, row.layers);
    const double l = row.layers, h = row.hidden, v = 51200, s = 2048;
    const double eq2 = 12 * l * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * l * h));
    // parplan also counts the final layer norm (2h) that eq. 2 leaves out.
    EXPECT_NEAR(total_params(m, 2048), eq2 + 2 * h, 1.0);
  }
}

TEST(CostFormulas, ModelFlopsMatchKorthikanti) {
  const ModelSpec m = gpt(96, 12288, 96);
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  const double model = 72 * B * l * s * h * h * (1 + s / (6 * h) + V / (12 * h * l));
  const double selective = 72 * B * l * s * h * h * (1 + s / (3 * h) + V / (12 * h * l));
  const double full = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  EXPECT_NEAR(step_flops(m, 1536, 2048, Recompute::kNone, 0).model_flops / model, 1.0, 1e-9);
  EXPECT_NEAR(step_flops(m, 1536, 2048, Recompute::kSelective, 0).hardware_flops / selective, 1.0, 1e-9);
  EXPECT_NEAR(step_flops(m, 1536, 2048, Recompute::kFull, 1.0).hardware_flops / full, 1.0, 1e-9);
}

TEST(CostFormulas, ZeroModelStatesReproduceZeroPaper) {
  // Rajbhandari et al. 2020, Figure 1: 7.5B parameters, N_d = 64, K = 12.
  const double psi = 7.5e9;
  EXPECT_NEAR(model_state_bytes(psi, 0, 64, 12).total() / 1e9, 120.0, 0.05);
  EXPECT_NEAR(model_state_bytes(psi, 1, 64, 12).total() / 1e9, 31.4, 0.05);
  EXPECT_NEAR(model_state_bytes(psi, 2, 64, 12).total() / 1e9, 16.6, 0.05);
  EXPECT_NEAR(model_state_bytes(psi, 3, 64, 12).total() / 1e9, 1.88, 0.005);
}

TEST(CostFormulas, ActivationsPerLayerReproduceKorthikantiTable2) {
  const ModelSpec m = gpt(96, 12288, 96);  // GPT-3 175B shape
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  ActivationShape shape;
  shape.seq = s;
  shape.micro_batch = b;
  shape.flash_attention = false;
  shape.tp = 1;
  EXPECT_NEAR(layer_activation_bytes(m, shape), s * b * h * (34 + 5 * a * s / h), 1.0);
  shape.tp = 8;
  EXPECT_NEAR(layer_activation_bytes(m, shape), s * b * h * (10 + 24 / t + 5 * a * s / (h * t)), 1.0);
  shape.sp = true;
  EXPECT_NEAR(layer_activation_bytes(m, shape), s * b * h * (34 / t + 5 * a * s / (h * t)), 1.0);
  shape.sp = false;
  shape.recompute = Recompute::kSelective;
  EXPECT_NEAR(layer_activation_bytes(m, shape), s * b * h * (10 + 24 / t), 1.0);
  shape.sp = true;
  EXPECT_NEAR(layer_activation_bytes(m, shape), s * b * h * 34 / t, 1.0);
  shape.sp = false;
  shape.recompute = Recompute::kFull;
  EXPECT_NEAR(layer_activation_bytes(m, shape), 2 * s * b * h, 1.0);
  // A fused attention kernel does not store the 5 a s / h term.
  shape.recompute = Recompute::kNone;
  shape.flash_attention = true;
  EXPECT_NEAR(layer_activation_bytes(m, shape), s * b * h * (10 + 24 / t), 1.0);
}

// Query/key RMSNorm (Qwen3) saves its inputs for its backward: the 16-bit
// query and key heads, 2 (a d + g d) bytes per token, split over tp.
TEST(CostFormulas, QueryKeyNormKeepsItsInputs) {
  ModelSpec m = gpt(32, 2048, 48);  // 32 heads
  m.head_dim = 128;
  m.kv_groups = 4;
  ActivationShape shape;
  shape.seq = 4096;
  shape.micro_batch = 1;
  shape.tp = 2;
  shape.sp = true;
  const double without = layer_activation_bytes(m, shape);
  m.qk_norm = true;
  EXPECT_NEAR(layer_activation_bytes(m, shape) - without, 4096.0 * 2.0 * (32 * 128 + 4 * 128) / 2.0, 1.0);
  shape.recompute = Recompute::kFull;  // only the layer input kept
  const double full = layer_activation_bytes(m, shape);
  m.qk_norm = false;
  EXPECT_EQ(layer_activation_bytes(m, shape), full);
}

}  // namespace
}  // namespace parplan
