// PyTorch's experimental context_parallel as torchtitan runs it
// (torch/distributed/tensor/experimental/_attention.py at
// pytorch/pytorch@0123248a): per-block results merged in fp32, K/V at the
// width torchtitan's SDPA takes (repeat_kv), one all-gather of K/V hidden
// behind the first block, and a ring of fp32 dK/dV all-to-alls in backward
// (cost/cp_merge_passes.h, cost/pipeline_schedule.cpp). Expected counts are
// worked by hand from the source's operations, in 16-bit tensor sizes read
// plus written (an fp32 read or write counts 2).
#include <gtest/gtest.h>

#include "cost/cp_merge_passes.h"
#include "cost/overlap.h"
#include "cost/step_internal.h"
#include "llama3_8b_h100_case.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

TEST(PyTorchCpPasses, NoneWithoutContextParallelism) {
  for (bool fused : {false, true}) {
    const CpMergeBytes none = pytorch_ring_merge_bytes(1, 3.0, 5.0, 7.0, fused);
    EXPECT_EQ(none.forward, 0.0);
    EXPECT_EQ(none.backward, 0.0);
  }
}

// cp = 2, eager, rank 1 (chunks 1 and 2; step 1 attends rank 0's first KV
// half with all queries, so nothing is partial in its forward).
// Forward: key/value.contiguous() (2 KV), one torch.cat for the send buffer
// (2 KV); block 0's out.to(float32) (1 + 2 O); block 1: cast (3 O),
// out - block_out (6 O), sigmoid(...) * (4 O), out - (6 O); the result cast
// to bf16 (3 O): 4 KV + 25 O.
// Backward: zeros_like for dQ, dK, dV in fp32 (2 Q + 2 KV); contiguous
// (2 KV); one cat of K/V (2 KV); step 0: grad_key/value += (5 KV), the fp32
// send buffer cat (4 KV), grad_query += (5 Q); step 1 (i <= rank: half the
// KV): the half added into the received dK/dV (2.5 KV), _partial_update's
// cat (4 KV), the send-buffer cat (4 KV), grad_query += (5 Q); dQ cast down
// (3 Q), the received dK/dV cast down (3 KV): 28.5 KV + 15 Q.
// Rank 0 (step 1 partial) moves 4 KV + 19.5 O and 27 KV + 16.5 Q, less with
// these sizes.
TEST(PyTorchCpPasses, EagerTwoRanksByHand) {
  const double q = 4.0, o = 3.0, kv = 1.0;
  const CpMergeBytes b = pytorch_ring_merge_bytes(2, q, o, kv, false);
  EXPECT_DOUBLE_EQ(b.forward, 2 * kv + 2 * kv + 3 * o + (3 + 6 + 4 + 6) * o + 3 * o);
  EXPECT_DOUBLE_EQ(b.backward, 2 * q + 2 * kv + 2 * kv + 2 * kv + (5 + 4) * kv + 5 * q + (2.5 + 4 + 4) * kv +
                                   5 * q + 3 * q + 3 * kv);
}

// The same compiled (torch.compile): the dead send-buffer cats dropped,
// contiguous() folded into the layout the repeat_kv kernel writes, the
// zeros and casts inlined. Rank 1: forward one cat (2 KV) and one merge
// kernel reading block 0's bf16 output (1) and block 1's (1), writing the
// bf16 result (1): 2 KV + 3 O. Backward: one cat (2 KV); step 0: dK/dV read
// (1) into the fp32 send buffer (2), dQ the same (3 Q); step 1: the received
// fp32 dK/dV (2) plus the half-size gradient (1) into the send buffer (2) on
// one half, the other half copied (2 + 2), dQ read (2) plus the block's (1)
// written as bf16 (1); the received dK/dV cast down (3 KV):
// 2 + 3 + 4.5 + 3 = 12.5 KV and 3 + 4 = 7 Q.
TEST(PyTorchCpPasses, CompiledTwoRanksByHand) {
  const double q = 4.0, o = 3.0, kv = 1.0;
  const CpMergeBytes b = pytorch_ring_merge_bytes(2, q, o, kv, true);
  EXPECT_DOUBLE_EQ(b.forward, 2 * kv + 3 * o);
  EXPECT_DOUBLE_EQ(b.backward, 2 * kv + 3 * kv + 3 * q + (0.5 * 5 + 0.5 * 4) * kv + 4 * q + 3 * kv);
}

// Properties: compiling never adds traffic, and both grow with the ring.
TEST(PyTorchCpPasses, CompiledNeverMovesMoreAndBothGrowWithTheRing) {
  double previous_eager = 0, previous_fused = 0;
  for (int cp : {2, 4, 8, 16}) {
    const CpMergeBytes eager = pytorch_ring_merge_bytes(cp, 1.0, 1.0, 2.0, false);
    const CpMergeBytes fused = pytorch_ring_merge_bytes(cp, 1.0, 1.0, 2.0, true);
    EXPECT_LE(fused.forward, eager.forward);
    EXPECT_LE(fused.backward, eager.backward);
    EXPECT_GT(eager.forward + eager.backward, previous_eager);
    EXPECT_GT(fused.forward + fused.backward, previous_fused);
    previous_eager = eager.forward + eager.backward;
    previous_fused = fused.forward + fused.backward;
  }
}

// torchtitan's Llama repeats the 8 KV heads of Llama 3 8B to its 32 query
// heads before SDPA: K + V are 2 x 32 x 128 elements per token, four times
// the grouped width; split over tp.
TEST(PyTorchCpPasses, KeysAndValuesAtTheQueryHeadWidth) {
  const ModelSpec model = load_model("llama3-8b");
  ASSERT_EQ(model.heads, 32);
  ASSERT_EQ(model.kv_groups, 8);
  EXPECT_DOUBLE_EQ(torchtitan_sdpa_kv_elements_per_token(model, 1), 2.0 * 32 * 128);
  EXPECT_DOUBLE_EQ(torchtitan_sdpa_kv_elements_per_token(model, 4), 2.0 * 32 * 128 / 4);
}

struct CpCase : test::Llama3_8bOnH100 {
  explicit CpCase(int cp) {
    job.gpus = 8, job.gbs = 1, job.seq = 32768 * cp;
    job.precision = Precision::kFp8;
    job.attention_kernel = AttentionKernel::kFlash2;
    config.tp = 1, config.pp = 1, config.cp = cp, config.dp = 8 / cp, config.mbs = 1, config.zero = 3;
  }
};

// Both engines run the same per-block kernels; their layers differ only by
// their merge passes at the profile's HBM bandwidth. So Megatron's ring is
// priced as the merge-free ideal plus Transformer Engine's passes
// (te_ring_merge_bytes, worked by hand in cp_merge_passes_test.cpp), and a
// torchtitan layer under CP is never faster than that ideal.
TEST(PyTorchCpPasses, EnginesShareTheMergeFreeIdeal) {
  for (int cp : {2, 4, 8}) {
    for (bool fused : {false, true}) {
      CpCase s(cp);
      s.job.fused_elementwise = fused;
      const DeviceSpec& d = s.cluster.device;
      const double bw = d.hbm_bytes_per_s * d.memory_bound_efficiency;
      const double m = 32768, q = 2.0 * m * 4096;  // 16-bit Q = O per layer
      const CpMergeBytes te = te_ring_merge_bytes(cp, q, q, 2.0 * m * 2 * 8 * 128);
      const CpMergeBytes pt = pytorch_ring_merge_bytes(cp, q, q, 2.0 * m * 2 * 32 * 128, fused);
      const detail::PerLayerCosts ring = detail::per_layer_costs(s.model, s.cluster, s.job, s.config);
      s.job.cp_exchange = ContextParallelExchange::kAllGatherKv;
      const detail::PerLayerCosts titan = detail::per_layer_costs(s.model, s.cluster, s.job, s.config);
      const double ideal_forward = ring.dense.forward_s - te.forward / bw;
      const double ideal_backward = ring.dense.backward_s - te.backward / bw;
      EXPECT_NEAR(titan.dense.forward_s - pt.forward / bw, ideal_forward, 1e-12 * ideal_forward);
      EXPECT_NEAR(titan.dense.backward_s - pt.backward / bw, ideal_backward, 1e-12 * ideal_backward);
      EXPECT_GT(titan.dense.forward_s, ideal_forward);
      EXPECT_GT(titan.dense.backward_s, ideal_backward);
      EXPECT_GE(titan.comm.cp_forward_s, 0.0);
      EXPECT_GE(titan.comm.cp_backward_s, 0.0);
    }
  }
}

// The exchange, from the source's operations: forward, one all-gather of
// every rank's K/V (query-head width, bf16) beside the first block, 1/cp of
// the attention; backward, the same gather beside the first backward block,
// then cp fp32 dK/dV hops to the next rank, each beside the next block but
// the last, which nothing hides. That is eager PyTorch; compiled, every
// collective is waited on as soon as it is issued (cost/pytorch_cp_exchange.h).
TEST(PyTorchCpPasses, AllGatherThenAnFp32GradientRing) {
  CpCase s(4);
  s.job.cp_exchange = ContextParallelExchange::kAllGatherKv;
  s.job.fused_elementwise = false;
  const detail::PerLayerCosts costs = detail::per_layer_costs(s.model, s.cluster, s.job, s.config);
  const double kv_bytes = 2.0 * 32768 * 2 * 32 * 128;
  const double gather_s = all_gather_s(s.cluster, group_span_at(s.cluster, 4, 1, 0), 4 * kv_bytes);
  const double hop_s = point_to_point_between_s(s.cluster, 0, 1, 2.0 * kv_bytes);
  const double slowdown = s.cluster.device.overlap_compute_slowdown;
  const double fwd_block = costs.dense.attention_forward_s / 4,
               bwd_block = costs.dense.attention_backward_s / 4;
  EXPECT_DOUBLE_EQ(costs.comm.cp_forward_s, exposed_after_overlap_s(gather_s, fwd_block, slowdown));
  EXPECT_DOUBLE_EQ(costs.comm.cp_backward_s, exposed_after_overlap_s(gather_s, bwd_block, slowdown) +
                                                 3 * exposed_after_overlap_s(hop_s, bwd_block, slowdown) +
                                                 hop_s);
  // The last hop alone is exposed in full.
  EXPECT_GE(costs.comm.cp_backward_s, hop_s);
  s.job.fused_elementwise = true;
  const detail::PerLayerCosts compiled = detail::per_layer_costs(s.model, s.cluster, s.job, s.config);
  EXPECT_DOUBLE_EQ(compiled.comm.cp_forward_s, gather_s);
  EXPECT_DOUBLE_EQ(compiled.comm.cp_backward_s, gather_s + 4 * hop_s);
}

}  // namespace
}  // namespace parplan
