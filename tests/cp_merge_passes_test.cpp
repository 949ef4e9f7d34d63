// Transformer Engine's ring context parallelism (AttnFuncWithCPAndKVP2P)
// merges per-block results with memory-bound passes beside the attention
// kernels (cost/cp_merge_passes.h). Expected counts are worked by hand from
// context_parallel.py at NVIDIA/TransformerEngine@d0067d0d, in tensor sizes
// read plus written.
#include "cost/cp_merge_passes.h"

#include <gtest/gtest.h>

#include "cost/step_cost.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"

namespace parplan {
namespace {

TEST(CpMergePasses, NoneWithoutContextParallelism) {
  const CpMergeBytes none = te_ring_merge_bytes(1, 3.0, 5.0, 7.0);
  EXPECT_EQ(none.forward, 0.0);
  EXPECT_EQ(none.backward, 0.0);
}

// cp = 2, rank 1 (chunks 1 and 2). Forward: pack K, V (2 KV); step 0's output
// into out (2 O); step 1 attends the first half of rank 0's KV with all
// queries, a full correction (3 O). Backward: copy KV into the send buffer
// (2 KV); step 0 (lower triangle, i = cp - r - 1 on the last rank): dq.copy_
// (2 Q), dk[0] / dv[0].copy_ of half-size gradients (1 KV); step 1 (the
// diagonal block): dq.add_ (3 Q), dkv.add_ (3 KV). Rank 0 moves 8.5 KV + 3.5 Q
// + 3.5 O; rank 1 8 KV + 5 Q + 5 O, the larger with these sizes.
TEST(CpMergePasses, TwoRanksByHand) {
  const double q = 4.0, o = 3.0, kv = 1.0;
  const CpMergeBytes b = te_ring_merge_bytes(2, q, o, kv);
  EXPECT_DOUBLE_EQ(b.forward, 2 * kv + 2 * o + 3 * o);
  EXPECT_DOUBLE_EQ(b.backward, 2 * kv + 2 * q + 1 * kv + 3 * q + 3 * kv);
}

// Property: the last rank takes the full-query branch at every forward step
// after the first, so the slowest rank's forward moves at least
// 2 KV + 2 O + 3 (cp - 1) O, and the total grows with cp.
TEST(CpMergePasses, GrowWithTheRingLength) {
  double previous = 0;
  for (int cp : {2, 4, 8, 16}) {
    const CpMergeBytes b = te_ring_merge_bytes(cp, 1.0, 1.0, 0.25);
    EXPECT_GE(b.forward + b.backward, previous);
    EXPECT_GE(b.forward + 1e-12, 2 * 0.25 + 2.0 + 3.0 * (cp - 1));
    previous = b.forward + b.backward;
  }
}

JobSpec llama3_8b_job() {
  JobSpec job;
  job.gpus = 8, job.gbs = 128, job.seq = 8192;
  job.precision = Precision::kFp8;
  job.attention_kernel = AttentionKernel::kCudnn;
  return job;
}

// At equal work per GPU (cp 2 x dp 4 against dp 8, the same tokens per GPU),
// neither engine's context parallelism is cheaper than none. PyTorch's
// passes (fp32 accumulators, K/V at torchtitan's query-head width) move more
// than Transformer Engine's, so its compute is the dearer
// (cp_pytorch_passes_test.cpp checks both against the merge-free ideal).
TEST(CpMergePasses, ContextParallelStepIsNeverCheaper) {
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec h100 = load_cluster("dgx-h100");
  JobSpec job = llama3_8b_job();
  ParallelConfig c;
  c.tp = 1, c.pp = 1, c.cp = 1, c.dp = 8, c.mbs = 1, c.gbs = 128, c.zero = 1;
  const CostReport plain = estimate_cost(model, h100, job, c);
  c.cp = 2, c.dp = 4;
  ASSERT_EQ(config_problem(model, job, c), nullptr);
  const CostReport ring = estimate_cost(model, h100, job, c);
  EXPECT_GE(ring.time.step_s, plain.time.step_s);
  job.cp_exchange = ContextParallelExchange::kAllGatherKv;
  const CostReport gathered = estimate_cost(model, h100, job, c);
  EXPECT_GE(gathered.time.step_s, plain.time.step_s);
  EXPECT_GT(gathered.time.compute_s, ring.time.compute_s);
}

}  // namespace
}  // namespace parplan
