// Sequence parallelism on the sequence dim of [b, s, h] hidden states
// (torchtitan before pytorch/torchtitan#4121): PyTorch's functional
// all_gather_tensor concatenates the gathered chunks along that dim after
// the gather, reduce_scatter_tensor before the scatter, one read and one
// write of the whole activation each (cost/sequence_dim_copies.h). Byte
// counts from the layer's shapes: Llama 3 70B, h 8192, FFN 28672, tp 8.
#include "cost/sequence_dim_copies.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cost/compute_time.h"
#include "cost/step_internal.h"
#include "src/emit/emit.h"
#include "src/io/cluster_loader.h"
#include "src/io/data_paths.h"
#include "src/io/model_loader.h"
#include "src/io/torchtitan_log_reader.h"
#include "tests/tune_support.h"

namespace parplan {
namespace sequence_dim_copies_test {

constexpr double kHidden = 8192, kFfn = 28672, kTokens = 2.0 * 8192;
constexpr int kTp = 8;

DeviceSpec h100() { return load_cluster("dgx-h100").device; }
double copy_seconds(double bytes) { return memory_bound_s(h100(), 2.0 * bytes); }

SequenceDimCopyShape shape(bool micro_pipelined, bool fused_backward) {
  SequenceDimCopyShape s;
  s.tp = kTp;
  s.gather_bytes = 2.0 * kTokens * kHidden;
  s.scatter_bytes = 2.0 * kTokens * kHidden;
  s.micro_pipelined = micro_pipelined;
  s.attention_backward_fused = fused_backward;
  s.ffn_backward_fused = fused_backward;
  return s;
}

TEST(SequenceDimCopies, EveryCollectiveCopiesTheWholeActivation) {
  // Eager: two gathers and two scatters each way, each a read and a write
  // of b x s x h in 16 bits.
  const SequenceDimCopySeconds eager = sequence_dim_copy_s(h100(), shape(false, false));
  const double one = copy_seconds(2.0 * kTokens * kHidden);
  EXPECT_NEAR(eager.forward_s, 4.0 * one, 1e-15);
  EXPECT_NEAR(eager.backward_s, 4.0 * one, 1e-15);
  EXPECT_NEAR(eager.forward_gathers_s, 2.0 * one, 1e-15);
  // Compiled with separate projections, the backward's scatters take the
  // sum of the input gradients, written in place by the add.
  const SequenceDimCopySeconds compiled = sequence_dim_copy_s(h100(), shape(false, true));
  EXPECT_NEAR(compiled.forward_s, 4.0 * one, 1e-15);
  EXPECT_NEAR(compiled.backward_s, 2.0 * one, 1e-15);
}

TEST(SequenceDimCopies, AsyncTpCopiesItsGatheredOperandsOnce) {
  // The fused collectives' operands come restrided from their producers;
  // each fused gather's sequence-major result is copied once for the weight
  // gradient, and the backward's two plain reduce-scatters copy unless
  // fused into the add.
  const double one = copy_seconds(2.0 * kTokens * kHidden);
  const SequenceDimCopySeconds fused = sequence_dim_copy_s(h100(), shape(true, true));
  EXPECT_EQ(fused.forward_s, 0.0);
  EXPECT_EQ(fused.forward_gathers_s, 0.0);
  EXPECT_NEAR(fused.backward_s, 2.0 * one, 1e-15);
  const SequenceDimCopySeconds eager = sequence_dim_copy_s(h100(), shape(true, false));
  EXPECT_NEAR(eager.backward_s, 4.0 * one, 1e-15);
  // A third of vanilla TP's here (six copies), and none without tp.
  const SequenceDimCopySeconds vanilla = sequence_dim_copy_s(h100(), shape(false, true));
  EXPECT_NEAR(fused.forward_s + fused.backward_s, (vanilla.forward_s + vanilla.backward_s) / 3.0, 1e-15);
  SequenceDimCopyShape alone = shape(false, false);
  alone.tp = 1;
  EXPECT_EQ(sequence_dim_copy_s(h100(), alone).forward_s, 0.0);
  EXPECT_EQ(sequence_dim_copy_s(h100(), alone).backward_s, 0.0);
}

detail::LayerComm tp_comm(bool copies, bool async_tp, Precision precision = Precision::kBf16) {
  const ModelSpec model = load_model("llama3-70b");
  const ClusterSpec cluster = load_cluster("dgx-h100");
  JobSpec job = test::recipe_job("torchtitan", 8, 2, 8192);
  job.precision = precision;
  job.separate_qkv = true;
  job.sp_sequence_dim_copies = copies;
  job.tp_comm_overlap = async_tp;
  ParallelConfig c;
  c.tp = kTp;
  c.sp = true;
  c.zero = 3;
  c.mbs = 2;
  c.gbs = 2;
  return detail::per_layer_costs(model, cluster, job, c).comm;
}

TEST(SequenceDimCopies, TorchtitanBeforeTheBatchFoldPaysThem) {
  // torchtitan main folds batch and sequence; v0.2.x and the TOML-era logs
  // do not.
  JobSpec main_job = test::recipe_job("torchtitan", 8, 2, 8192);
  EXPECT_FALSE(main_job.sp_sequence_dim_copies);
  cost_as_torchtitan_version(TorchtitanVersion::kV02, main_job);
  EXPECT_TRUE(main_job.sp_sequence_dim_copies);
  // The layer's tp time grows by exactly the copies: compiled (the
  // recipe's fused element-wise kernels), separate QKV and gate/up.
  const detail::LayerComm with = tp_comm(true, false), without = tp_comm(false, false);
  const double one = copy_seconds(2.0 * kTokens * kHidden);
  EXPECT_NEAR(with.tp_forward_s - without.tp_forward_s, 4.0 * one, 1e-12);
  EXPECT_NEAR(with.tp_backward_s - without.tp_backward_s, 2.0 * one, 1e-12);
  EXPECT_NEAR(with.tp_forward_gathers_s - without.tp_forward_gathers_s, 2.0 * one, 1e-12);
  // Async TP copies its two gathered operands in the backward; fp8
  // gathers copy half the bytes.
  const detail::LayerComm async_with = tp_comm(true, true), async_without = tp_comm(false, true);
  EXPECT_DOUBLE_EQ(async_with.tp_forward_s, async_without.tp_forward_s);
  EXPECT_NEAR(async_with.tp_backward_s - async_without.tp_backward_s, 2.0 * one, 1e-12);
  const detail::LayerComm fp8_with = tp_comm(true, false, Precision::kFp8),
                          fp8_without = tp_comm(false, false, Precision::kFp8);
  EXPECT_NEAR(fp8_with.tp_forward_s - fp8_without.tp_forward_s,
              2.0 * copy_seconds(kTokens * kHidden) + 2.0 * one, 1e-12);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SequenceDimCopies, ATomlEraLogReadsAsUnfolded) {
  const FitRun run = parse_torchtitan_log(
      slurp((data_dir() / "tests/calibrate_fixtures/torchtitan-llama3-8b-16gpu.log").string()),
      slurp((data_dir() / "tests/calibrate_fixtures/torchtitan-llama3-8b-16gpu.toml").string()), "",
      "run.log", load_cluster("dgx-h100"));
  EXPECT_TRUE(run.job.sp_sequence_dim_copies);
}

}  // namespace sequence_dim_copies_test
}  // namespace parplan
