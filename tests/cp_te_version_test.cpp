// Transformer Engine v1.8's ring context parallelism (AttnFuncWithCP in
// transformer_engine/pytorch/attention.py at NVIDIA/TransformerEngine tag
// v1.8, 3ec998e9) merges with more passes than the main branch
// (cost/cp_merge_passes.h). Expected counts are worked by hand from that
// file for Megatron's sbhd layout with cuDNN fused attention, in tensor sizes
// read plus written; the run-file key `transformer_engine` selects it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cost/cp_merge_passes.h"
#include "cost/step_cost.h"
#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/input_error.h"
#include "src/io/model_loader.h"
#include "src/io/run_file_reader.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

constexpr TransformerEngineVersion kV18 = TransformerEngineVersion::kV1_8;

// cp = 2. Rank 1 (chunks 1 and 2), forward: torch.cat of K and V into the
// first send buffer (2 KV); out = empty_like(q).zero_() (1 O); step 0's
// correction out.add_(out_0 * exp(...)) (3 O); step 1 <= rank takes
// kv[:, 0].contiguous() (half K, V read and written: 1 KV) and a full
// correction (3 O). Backward: kv copied into the send buffer (2 KV); step 0
// (lower triangle: i = cp - r - 1, not the last step): kv[:, 0].contiguous()
// (1 KV), dq.copy_ (2 Q), torch.cat of the half-size dk_, dv_ (1 KV), and
// dkv[:, 0].copy_ (1 KV); step 1 (the diagonal block, full KV): dq.add_
// (3 Q), torch.cat of dk_, dv_ (2 KV), dkv.add_ (3 KV). Rank 1: forward
// 3 KV + 7 O, backward 10 KV + 5 Q. Rank 0: forward 2 KV + 5.5 O (its step 1
// corrects the second half: 1.5 O), backward 10.5 KV + 3.5 Q. With Q = 4,
// O = 3, KV = 1 rank 1 moves 54 against rank 0's 43.
TEST(CpTeVersion, V18TwoRanksByHand) {
  const double q = 4.0, o = 3.0, kv = 1.0;
  const CpMergeBytes b = te_ring_merge_bytes(2, q, o, kv, kV18);
  EXPECT_DOUBLE_EQ(b.forward, 2 * kv + 1 * o + 3 * o + 1 * kv + 3 * o);
  EXPECT_DOUBLE_EQ(b.backward, 2 * kv + (1 * kv + 2 * q + 1 * kv + 1 * kv) + (3 * q + 2 * kv + 3 * kv));
}

// cp = 4, rank 3 (the last: every forward step after the first takes half
// of the received KV and all queries). Forward: cat 2 KV, three half-KV
// copies 3 KV; zero fill 1 O, four full corrections 12 O. Backward: copy 2
// KV; steps 0-2 are lower-triangle blocks (half-KV copy 1, half dK/dV cat
// 1): step 0 dq.copy_ 2 Q, dkv[:, 0].copy_ 1 KV; steps 1, 2 dq.add_ 3 Q,
// dkv[:, 0].add_ 1.5 KV; step 3 dq.add_ 3 Q, full cat 2 KV, dkv.add_ 3 KV.
// Rank 3: forward 5 KV + 13 O, backward 17 KV + 11 Q; with Q = O = 1,
// KV = 1/4 that is 29.5, above ranks 2, 1 and 0 (26.5, 23.625,
// 20.625).
TEST(CpTeVersion, V18FourRanksLastRankByHand) {
  const double kv = 0.25;
  const CpMergeBytes b = te_ring_merge_bytes(4, 1.0, 1.0, kv, kV18);
  EXPECT_DOUBLE_EQ(b.forward, 5 * kv + 13.0);
  EXPECT_DOUBLE_EQ(b.backward, (2 + 3 * 2 + 1 + 2 * 1.5 + 2 + 3) * kv + (2.0 + 3.0 + 3.0 + 3.0));
}

// Property: v1.8 performs every pass main does (the same dQ and dK/dV
// accumulations, the same K/V packing) plus its own copies, so the slowest
// rank moves more for every ring length and tensor size; without context
// parallelism neither moves anything.
TEST(CpTeVersion, V18NeverMovesLessThanMain) {
  for (int cp : {2, 3, 4, 8, 16})
    for (double kv : {0.125, 0.5, 2.0}) {
      const CpMergeBytes main = te_ring_merge_bytes(cp, 1.0, 1.0, kv);
      const CpMergeBytes v18 = te_ring_merge_bytes(cp, 1.0, 1.0, kv, kV18);
      EXPECT_GT(v18.forward + v18.backward, main.forward + main.backward) << cp << " " << kv;
    }
  const CpMergeBytes none = te_ring_merge_bytes(1, 3.0, 5.0, 7.0, kV18);
  EXPECT_EQ(none.forward + none.backward, 0.0);
}

// Default unchanged: the merge bytes and the whole step with the default
// JobSpec are main's; v1.8 changes only context-parallel configs, and only
// for Transformer Engine's ring.
TEST(CpTeVersion, DefaultIsMainAndOnlyContextParallelismMoves) {
  for (int cp : {2, 4, 8}) {
    const CpMergeBytes a = te_ring_merge_bytes(cp, 1.0, 1.0, 0.25);
    const CpMergeBytes b = te_ring_merge_bytes(cp, 1.0, 1.0, 0.25, TransformerEngineVersion::kMain);
    EXPECT_EQ(a.forward, b.forward);
    EXPECT_EQ(a.backward, b.backward);
  }
  EXPECT_EQ(JobSpec{}.transformer_engine, TransformerEngineVersion::kMain);
  const ModelSpec model = load_model("llama3-8b");
  const ClusterSpec h100 = load_cluster("dgx-h100");
  JobSpec job;
  job.gpus = 8, job.gbs = 128, job.seq = 8192;
  job.precision = Precision::kFp8;
  job.attention_kernel = AttentionKernel::kCudnn;
  JobSpec v18 = job;
  v18.transformer_engine = kV18;
  ParallelConfig c;
  c.tp = 1, c.pp = 1, c.cp = 1, c.dp = 8, c.mbs = 1, c.gbs = 128, c.zero = 1;
  EXPECT_EQ(estimate_cost(model, h100, v18, c).time.step_s, estimate_cost(model, h100, job, c).time.step_s);
  c.cp = 2, c.dp = 4;
  ASSERT_EQ(config_problem(model, job, c), nullptr);
  EXPECT_GT(estimate_cost(model, h100, v18, c).time.step_s, estimate_cost(model, h100, job, c).time.step_s);
  // PyTorch's context_parallel has its own passes: the TE version is moot.
  job.cp_exchange = v18.cp_exchange = ContextParallelExchange::kAllGatherKv;
  EXPECT_EQ(estimate_cost(model, h100, v18, c).time.step_s, estimate_cost(model, h100, job, c).time.step_s);
}

class TeVersionKey : public ::testing::Test {
 protected:
  std::string write(const std::string& run) {
    return run_file_test::write_one_run(
        "te_version_key",
        "name: r, model: llama3-8b, gpus: 8, gbs: 128, seq: 8192, step_s: 10, "
        "engine: megatron, config: {cp: 2}" +
            run);
  }
  ClusterSpec cluster = load_cluster("dgx-h100");
};

TEST_F(TeVersionKey, ReadFromTheRunFileDefaultMain) {
  EXPECT_EQ(read_run_yaml(write(""), cluster).front().job.transformer_engine,
            TransformerEngineVersion::kMain);
  EXPECT_EQ(read_run_yaml(write(", transformer_engine: main"), cluster).front().job.transformer_engine,
            TransformerEngineVersion::kMain);
  EXPECT_EQ(read_run_yaml(write(", transformer_engine: \"1.8\""), cluster).front().job.transformer_engine,
            kV18);
  run_file_test::expect_error_naming([&] { read_run_yaml(write(", transformer_engine: \"2.0\""), cluster); },
                                     "transformer_engine");
}

}  // namespace
}  // namespace parplan
