// Transformer Engine's fp8 split padding around Megatron's grouped expert
// GEMMs (TEGroupedMLP: Fp8Padding before FC1, Fp8Unpadding after FC2): the
// bytes of its copies from their formula, when it runs (unaligned splits:
// dropless routing; padding to a capacity that is not a multiple of 16 rows),
// its time at the profile's memory-bound rate; the amax pass of fp8 current
// scaling before each expert cast; and the run-file keys that select them.
#include <gtest/gtest.h>

#include <string>

#include "cost/moe.h"
#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "src/io/run_file_reader.h"
#include "tests/moe_test_models.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

using moe_test::small_experts;

MoeShape padded_fp8_shape() {
  MoeShape s = moe_test::eight_k_tokens_ep8(true);
  s.fp8_split_padding = true;
  return s;
}

struct BlockDelta {
  MoeBlockTimes base, changed;
};

// The fine-grained block's times on dgx-h100 at its fp8 peak, on the padded
// fp8 shape and on that shape after `change`.
template <class Change>
BlockDelta block_delta(Change change) {
  const ModelSpec m = small_experts();
  const DeviceSpec d = load_cluster("dgx-h100").device;
  MoeShape changed = padded_fp8_shape();
  change(changed);
  return {moe_block_times(m, d, d.peak_fp8_flops_per_s, padded_fp8_shape()),
          moe_block_times(m, d, d.peak_fp8_flops_per_s, changed)};
}

double memory_bound_rate(const DeviceSpec& d) { return d.hbm_bytes_per_s * d.memory_bound_efficiency; }

// Forward: the padding copy of the permuted input and the unpadding copy of
// the expert output, each a read and a write of the k T received rows of h
// 16-bit elements: 2 x 2 x k T h x 2 bytes (the backward's two copies move
// the same bytes).
TEST(MoeFp8Padding, TwoCopiesOfEveryReceivedRow) {
  const ModelSpec m = small_experts();
  MoeShape s = padded_fp8_shape();
  const double rows = 8.0 * 8192;
  EXPECT_DOUBLE_EQ(moe_fp8_padding_bytes(m, s), 2.0 * 2.0 * rows * 2048 * 2.0);
  // Sequence parallelism: each tp rank routes 1/tp of the tokens; the
  // busiest rank receives the load factor over the mean.
  s.tp = 2;
  s.load_factor = 1.25;
  EXPECT_DOUBLE_EQ(moe_fp8_padding_bytes(m, s), 2.0 * 2.0 * rows / 2 * 1.25 * 2048 * 2.0);
}

TEST(MoeFp8Padding, OnlyFp8GroupedGemmsWithUnalignedSplitsPad) {
  const ModelSpec m = small_experts();
  MoeShape s = padded_fp8_shape();
  s.fp8 = false;
  EXPECT_EQ(moe_fp8_padding_bytes(m, s), 0.0);
  s = padded_fp8_shape();
  s.fp8_split_padding = false;
  EXPECT_EQ(moe_fp8_padding_bytes(m, s), 0.0);
  EXPECT_EQ(moe_fp8_padding_bytes(load_model("llama3-8b"), padded_fp8_shape()), 0.0);
}

// Dropless routing (and dropping without padding) leaves each expert a
// data-dependent row count: the splits are padded. Padded to capacity, each
// local expert runs capacity x etp x ep rows, capacity = ceil(T k / E x
// factor): Qwen3-30B at mbs 2 x 4096 tokens, ep 8 (the 25.09 token-drop
// preset) gets ceil(8192 x 8 / 128) = 512, 4096 rows, a multiple of 16: no
// copy. 4100 tokens give ceil(256.25) = 257 rows on one rank: padded.
TEST(MoeFp8Padding, DroplessPadsCapacityAlignedToSixteenDoesNot) {
  const ModelSpec m = small_experts();
  JobSpec job;
  job.precision = Precision::kFp8;
  job.seq = 4096;
  ParallelConfig c;
  c.mbs = 2;
  c.ep = 8;
  EXPECT_TRUE(moe_fp8_pads_splits(m, job, c));
  job.capacity_factor = 1.0;
  EXPECT_TRUE(moe_fp8_pads_splits(m, job, c));  // dropping without padding
  job.pad_to_capacity = true;
  EXPECT_FALSE(moe_fp8_pads_splits(m, job, c));
  job.seq = 4100;
  c.mbs = 1;
  c.ep = 1;
  EXPECT_TRUE(moe_fp8_pads_splits(m, job, c));
  job.precision = Precision::kBf16;
  EXPECT_FALSE(moe_fp8_pads_splits(m, job, c));
}

// Padded to capacity, every expert runs capacity rows whatever the routing:
// the load factor is the capacity factor.
TEST(MoeFp8Padding, PaddedToCapacityRunsTheCapacity) {
  const ModelSpec m = small_experts();
  JobSpec job;
  job.moe_imbalance = 1.0;
  job.capacity_factor = 1.25;
  ParallelConfig c;
  c.ep = 8;
  EXPECT_DOUBLE_EQ(moe_load_factor(m, job, c), 1.0);  // dropping: capped, not raised
  job.pad_to_capacity = true;
  EXPECT_DOUBLE_EQ(moe_load_factor(m, job, c), 1.25);
  // Below 1 both run at capacity: dropped tokens are neither sent nor run.
  job.capacity_factor = 0.75;
  EXPECT_DOUBLE_EQ(moe_load_factor(m, job, c), 0.75);
  job.pad_to_capacity = false;
  EXPECT_DOUBLE_EQ(moe_load_factor(m, job, c), 0.75);
  job.moe_imbalance = 1.5;  // a busier expert still stops at its capacity
  EXPECT_DOUBLE_EQ(moe_load_factor(m, job, c), 0.75);
}

// The copies run at the profile's memory-bound rate, forward and backward.
TEST(MoeFp8Padding, TimedAtTheMemoryBoundRateBothWays) {
  const BlockDelta t = block_delta([](MoeShape& s) { s.fp8_split_padding = false; });
  const DeviceSpec d = load_cluster("dgx-h100").device;
  const double copy_s = moe_fp8_padding_bytes(small_experts(), padded_fp8_shape()) / memory_bound_rate(d);
  EXPECT_NEAR(t.base.forward_s - t.changed.forward_s, copy_s, 1e-12);
  EXPECT_NEAR(t.base.routed_forward_s - t.changed.routed_forward_s, copy_s, 1e-12);
  EXPECT_NEAR(t.base.backward_s - t.changed.backward_s, copy_s, 1e-12);
}

// fp8 current scaling: before each routed expert GEMM's cast an amax pass
// reads its 16-bit input (forward: FC1's h and FC2's f columns) and output
// gradient (backward: FC1's 2f and FC2's h columns), 2 bytes an element;
// and the split-by-split casts' kernels, each at least the kernel floor
// (16 local experts of 4096 rows; tests/kernel_floor_test.cpp).
TEST(MoeFp8CurrentScaling, AnAmaxPassBeforeEveryExpertCast) {
  const BlockDelta t = block_delta([](MoeShape& s) { s.fp8_current_scaling = true; });
  const double rows = 8.0 * 8192;
  const DeviceSpec h100 = load_cluster("dgx-h100").device;
  const double rate = memory_bound_rate(h100);
  const auto floors = [&](double w1, double w2) {
    return split_cast_floor_s(h100, 16, rows / 16, w1) + split_cast_floor_s(h100, 16, rows / 16, w2);
  };
  EXPECT_NEAR(t.changed.forward_s - t.base.forward_s, 2.0 * rows * (2048 + 768) / rate + floors(2048, 768),
              1e-12);
  EXPECT_NEAR(t.changed.backward_s - t.base.backward_s,
              2.0 * rows * (2 * 768 + 2048) / rate + floors(2 * 768, 2048), 1e-12);
  // bf16 experts cast nothing.
  const ModelSpec m = small_experts();
  const DeviceSpec d = load_cluster("dgx-h100").device;
  MoeShape delayed = padded_fp8_shape();
  MoeShape current = delayed;
  current.fp8_current_scaling = true;
  delayed.fp8 = current.fp8 = false;
  EXPECT_DOUBLE_EQ(moe_block_times(m, d, d.peak_bf16_flops_per_s, current).forward_s,
                   moe_block_times(m, d, d.peak_bf16_flops_per_s, delayed).forward_s);
}

class TokenDropKeys : public ::testing::Test {
 protected:
  std::string write(const std::string& run) {
    return run_file_test::write_one_run(
        "token_drop_keys",
        "name: r, model: mixtral-8x7b, gpus: 16, gbs: 64, seq: 4096, step_s: 5, config: {ep: 8}, " + run);
  }
  ClusterSpec cluster = load_cluster("dgx-h100");
};

TEST_F(TokenDropKeys, CapacityAndPaddingAreRead) {
  FitRun dropless = read_run_yaml(write("moe_imbalance: 1.0"), cluster).front();
  EXPECT_EQ(dropless.job.capacity_factor, 0.0);
  EXPECT_FALSE(dropless.job.pad_to_capacity);
  FitRun padded =
      read_run_yaml(write("moe_capacity_factor: 1.0, moe_pad_to_capacity: true"), cluster).front();
  EXPECT_DOUBLE_EQ(padded.job.capacity_factor, 1.0);
  EXPECT_TRUE(padded.job.pad_to_capacity);
}

TEST_F(TokenDropKeys, Fp8RecipeIsRead) {
  EXPECT_EQ(read_run_yaml(write("precision: fp8"), cluster).front().job.fp8_scaling, Fp8Scaling::kDelayed);
  EXPECT_EQ(read_run_yaml(write("precision: fp8, fp8_recipe: current"), cluster).front().job.fp8_scaling,
            Fp8Scaling::kCurrent);
  run_file_test::expect_error_naming([&] { read_run_yaml(write("fp8_recipe: mx"), cluster); }, "fp8_recipe");
}

TEST_F(TokenDropKeys, PaddingNeedsACapacity) {
  run_file_test::expect_error_naming([&] { read_run_yaml(write("moe_pad_to_capacity: true"), cluster); },
                                     "moe_pad_to_capacity");
  run_file_test::expect_error_naming([&] { read_run_yaml(write("moe_capacity_factor: 0"), cluster); },
                                     "moe_capacity_factor");
}

// The rules job files and flags keep (src/io/moe_fp8_recipe.h): a recipe
// needs fp8, token dropping needs experts.
TEST_F(TokenDropKeys, SharedRulesWithJobFiles) {
  run_file_test::expect_error_naming([&] { read_run_yaml(write("fp8_recipe: current"), cluster); },
                                     "fp8_recipe");
  const std::string dense =
      run_file_test::write_one_run("token_drop_dense",
                                   "name: r, model: llama3-8b, gpus: 8, gbs: 64, seq: 4096, step_s: 5, "
                                   "config: {tp: 8}, moe_capacity_factor: 1.25");
  run_file_test::expect_error_naming([&] { read_run_yaml(dense, cluster); }, "moe_capacity_factor");
}

}  // namespace
}  // namespace parplan
