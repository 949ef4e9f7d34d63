// The per-layer mechanisms of Megatron's MoE layer beyond its FLOPs: the
// token permutations of the alltoall dispatcher (bytes from the formulas of
// token_dispatcher.py / moe_utils.py), one GEMM per local expert on the
// device's GEMM curve, the fp8 casts of the experts' GEMM inputs and
// gradients, the dispatch payload per dispatcher, and properties (more experts per rank is never faster;
// dense layers see none of it).
#include <gtest/gtest.h>

#include "cost/compute_time.h"
#include "cost/memory.h"
#include "cost/moe.h"
#include "cost/moe_dispatch.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "tests/moe_test_models.h"

namespace parplan {
namespace {

using moe_test::small_experts;

MoeShape eight_ranks_of_experts() { return moe_test::eight_k_tokens_ep8(false); }

// Permutation 1 and unpermutation 1 read and write each of the rank's
// tokens x top-k copies of h 16-bit elements: 2 x (2 k T h x 2 bytes). One
// expert per rank (Mixtral on ep 8) leaves nothing to sort.
TEST(MoePermutation, GatherAndScatterOfTopKCopies) {
  const ModelSpec m = load_model("mixtral-8x7b");
  MoeShape s;
  s.tokens = 4096;
  s.ep = 8;
  const double per_pass = 2.0 * m.top_k * 4096.0 * m.hidden * 2.0;
  EXPECT_DOUBLE_EQ(moe_permutation_bytes(m, s).forward, 2.0 * per_pass);
  // Sequence parallelism: each tp rank permutes its own 1/tp of the tokens.
  s.tp = 2;
  EXPECT_DOUBLE_EQ(moe_permutation_bytes(m, s).forward, per_pass);
}

// Behind the all-to-all with several local experts, permutation 2 and
// unpermutation 2 (sort_chunks_by_idxs) sort the received rows by expert and
// back: two more passes. Without ep (Megatron's allgather dispatcher) they
// do not run.
TEST(MoePermutation, SortByLocalExpertBehindTheAllToAll) {
  const ModelSpec m = small_experts();
  MoeShape s = eight_ranks_of_experts();
  const double per_pass = 2.0 * m.top_k * 8192.0 * m.hidden * 2.0;
  EXPECT_DOUBLE_EQ(moe_permutation_bytes(m, s).forward, 4.0 * per_pass);
  // The sorted rows are those the rank receives: the busiest rank's load.
  s.load_factor = 1.25;
  EXPECT_DOUBLE_EQ(moe_permutation_bytes(m, s).forward, 2.0 * per_pass + 2.0 * 1.25 * per_pass);
  s.load_factor = 1.0;
  s.ep = 1;
  EXPECT_DOUBLE_EQ(moe_permutation_bytes(m, s).forward, 2.0 * per_pass);
}

// Backward: every pass moves its bytes again, and unpermutation 1 also reads
// the forward's copies (k T h elements) for the probabilities' gradient.
TEST(MoePermutation, BackwardAlsoReadsTheCopiesForTheProbabilityGradient) {
  const ModelSpec m = small_experts();
  MoeShape s = eight_ranks_of_experts();
  const MoePermutationBytes b = moe_permutation_bytes(m, s);
  EXPECT_DOUBLE_EQ(b.backward - b.forward, m.top_k * 8192.0 * m.hidden * 2.0);
}

TEST(MoePermutation, DenseModelsHaveNone) {
  const ModelSpec dense = load_model("llama3-8b");
  MoeShape s = eight_ranks_of_experts();
  EXPECT_DOUBLE_EQ(moe_permutation_bytes(dense, s).forward, 0.0);
  EXPECT_DOUBLE_EQ(moe_permutation_bytes(dense, s).backward, 0.0);
}

// Under fp8 every expert GEMM's input and, backward, its output gradient is
// cast by its own kernel: 4 bytes per element (read 2, write the fp8 copy
// and its transpose), as fp8_cast_times prices a dense linear layer. Same
// peak on both sides, so only the casts differ.
TEST(MoeFp8, ExpertInputsAndGradientsAreCast) {
  const ModelSpec m = small_experts();  // gated: fc1 is 2 f wide
  const ClusterSpec c = load_cluster("dgx-h100");
  const double peak = c.device.peak_fp8_flops_per_s;
  MoeShape s = eight_ranks_of_experts();
  const MoeBlockTimes bf16 = moe_block_times(m, c.device, peak, s);
  s.fp8 = true;
  const MoeBlockTimes fp8 = moe_block_times(m, c.device, peak, s);
  const double rows = 8192.0 * m.top_k;
  const double h = m.hidden, f = m.expert_ffn_hidden;
  EXPECT_NEAR(fp8.forward_s - bf16.forward_s, memory_bound_s(c.device, 4.0 * rows * (h + f)), 1e-12);
  EXPECT_NEAR(fp8.backward_s - bf16.backward_s, memory_bound_s(c.device, 4.0 * rows * (2.0 * f + h)), 1e-12);
}

// One GEMM per local expert at its own shape: 16 experts of 4096 rows cost 16
// GEMMs of 4096 x n x k. At the fp8 peak the small K of the experts' fc2
// (768) keeps fp8 well below twice the bf16 speed (tile-ai/tilelang's paired
// fp16/fp8 benchmark: 49 % of fp16's efficiency at K 256, 74 % at 1024).
TEST(MoeExpertGemms, EachExpertRunsAtItsOwnShape) {
  const ModelSpec m = small_experts();
  const ClusterSpec c = load_cluster("dgx-h100");
  MoeShape s = eight_ranks_of_experts();
  const double bf16 = c.device.peak_bf16_flops_per_s;
  const double fp8 = c.device.peak_fp8_flops_per_s;
  const double rows = 8192.0 * m.top_k / 16.0;
  const double f = m.expert_ffn_hidden, h = m.hidden;
  const double expected_bf16 =
      16.0 * (gemm_time_s(c.device, bf16, rows, 2.0 * f, h) + gemm_time_s(c.device, bf16, rows, h, f));
  const double expected_fp8 =
      16.0 * (gemm_time_s(c.device, fp8, rows, 2.0 * f, h) + gemm_time_s(c.device, fp8, rows, h, f));
  EXPECT_GT(expected_fp8, 0.5 * expected_bf16 * 1.2);
  // The routed part is the expert GEMMs, the activation and the permutations.
  const auto routed = [&](double peak) { return moe_block_times(m, c.device, peak, s).routed_forward_s; };
  EXPECT_NEAR(routed(bf16) - expected_bf16, routed(fp8) - expected_fp8, 1e-12);
}

// With the same tokens a rank that holds more experts runs more, thinner
// GEMMs (and reads more weights): never faster. Over ep >= 2 (the alltoall
// dispatcher throughout); load factor fixed at 1.
TEST(MoeExpertGemms, MoreExpertsPerRankIsNeverFaster) {
  const ModelSpec m = small_experts();
  const ClusterSpec c = load_cluster("dgx-h100");
  for (const double peak : {c.device.peak_bf16_flops_per_s, c.device.peak_fp8_flops_per_s}) {
    for (const double tokens : {512.0, 4096.0, 16384.0}) {
      double previous = 0;
      for (const int ep : {128, 64, 32, 16, 8, 4, 2}) {
        MoeShape s;
        s.tokens = tokens;
        s.ep = ep;
        s.fp8 = peak == c.device.peak_fp8_flops_per_s;
        const MoeBlockTimes t = moe_block_times(m, c.device, peak, s);
        const double total = t.forward_s + t.backward_s;
        EXPECT_GE(total, previous) << "ep " << ep << " tokens " << tokens;
        previous = total;
      }
    }
  }
}

// Megatron's dispatchers send the 16-bit hidden states whatever the
// precision: the alltoall one the permuted rows (token_dispatcher.py,
// dispatch_all_to_all), DeepEP's FusedDispatch its input x as it is, and
// HybridEP sets "fp8_dispatch = False  # Currently, we do not support fp8
// dispatch" (fused_a2a.py @ d98e8a64). fp8 training moves as many bytes
// on either path.
TEST(MoeDispatchPayload, Stays16BitUnderFp8OnEveryPath) {
  const ModelSpec m = small_experts();
  const ClusterSpec c = load_cluster("dgx-h100");
  JobSpec job;
  job.seq = 4096;
  job.moe_imbalance = 1.0;
  ParallelConfig config;
  config.ep = 32;  // 4 nodes of 8
  config.dp = 32;
  const auto forward = [&](Precision precision, bool hierarchical) {
    job.precision = precision;
    config.a2a_hierarchical = hierarchical;
    return moe_layer_comm(m, c, job, config, MoeLayerCompute{}, 0).forward_s;
  };
  EXPECT_DOUBLE_EQ(forward(Precision::kFp8, false), forward(Precision::kBf16, false));
  EXPECT_DOUBLE_EQ(forward(Precision::kFp8, true), forward(Precision::kBf16, true));
  EXPECT_GT(forward(Precision::kBf16, false), 0.0);
}

// Under fp8 Transformer Engine's GroupedLinear saves the fp8 cast of each
// expert GEMM input (grouped_linear.py @ 3ea1356: prepare_for_saving of the
// quantized inputmats): per routed copy, FC1's input (h) and FC2's input
// (f_e) take 1 byte instead of 2; the activation input and the expert output
// stay 16-bit. The dense FFN the MoE layer replaces is removed at its own fp8
// width, so the layer's fp8 saving beyond the attention part's is exactly
// k (h + f_e) - f per token.
TEST(MoeActivationMemory, Fp8ExpertGemmInputsAreSavedAsTheFp8Cast) {
  const ModelSpec m = small_experts();
  ActivationShape bf16;
  bf16.seq = 4096;
  bf16.micro_batch = 1;
  ActivationShape fp8 = bf16;
  fp8.fp8 = true;
  MoeShape s;
  s.tokens = 4096;
  s.ep = 8;
  const double moe_saving = moe_layer_activation_bytes(m, bf16, s) - moe_layer_activation_bytes(m, fp8, s);
  const double dense_saving = layer_activation_bytes(m, bf16) - layer_activation_bytes(m, fp8);
  const double per_token = m.top_k * (double(m.hidden) + m.expert_ffn_hidden) - double(m.ffn_hidden);
  EXPECT_NEAR(moe_saving - dense_saving, 4096.0 * per_token, 1e-6 * moe_saving);
  EXPECT_GT(moe_saving, 0.0);
}

// torchtitan's GroupedExperts: one torch._grouped_mm per weight over all
// local experts' rows, in bf16: the same time whatever the rows' split over
// experts and at the fp8 peak, and no faster than one GEMM per expert would
// be on thin experts.
TEST(MoeExpertGemms, TorchtitanGroupedMmIsOneBf16Kernel) {
  const ModelSpec m = small_experts();
  const ClusterSpec c = load_cluster("dgx-h100");
  MoeShape s = eight_ranks_of_experts();
  s.one_grouped_kernel = true;
  const double bf16 = c.device.peak_bf16_flops_per_s;
  const MoeBlockTimes grouped = moe_block_times(m, c.device, bf16, s);
  EXPECT_DOUBLE_EQ(moe_block_times(m, c.device, c.device.peak_fp8_flops_per_s, s).routed_forward_s,
                   grouped.routed_forward_s);
  s.ep = 4;  // twice the experts per rank, the same rows (tokens x top-k)
  EXPECT_NEAR(moe_block_times(m, c.device, bf16, s).routed_forward_s, grouped.routed_forward_s,
              0.05 * grouped.routed_forward_s);
  s.ep = 8;
  s.one_grouped_kernel = false;
  EXPECT_LT(grouped.routed_forward_s, moe_block_times(m, c.device, bf16, s).routed_forward_s);
}

}  // namespace
}  // namespace parplan
