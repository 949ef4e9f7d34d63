// The dropless dispatcher's host wait (cost/moe_host_sync.h): the kernel
// launches after it as counted from Megatron-LM core_v0.15.0 and Transformer
// Engine v2.9, the GPU time it exposes from its formula, which dispatches
// wait, and the run-file key that prices it (off by default).
#include "cost/moe_host_sync.h"

#include <gtest/gtest.h>

#include <string>

#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/run_file_reader.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

MoeSyncLaunchShape qwen3_fp8_cs(int local_experts) {
  MoeSyncLaunchShape s;
  s.local_experts = local_experts;
  s.ep_alltoall = true;
  s.fp8 = true;
  s.fp8_current_scaling = true;
  s.fp8_split_padding = true;
  return s;
}

// 3 all-to-alls + 4 sorts + 3 padding copies + 2 activation/unpermute, and
// per local expert two GEMMs each after a 4-kernel current-scaling cast:
// 12 + 10 E/ep. Qwen3 30B-A3B at ep 8: 128 / 8 = 16 local experts; Qwen3
// 235B-A22B at ep 32: 4.
TEST(MoeHostSync, LaunchesAfterTheWait) {
  EXPECT_EQ(moe_launches_after_host_wait(qwen3_fp8_cs(16)), 12 + 10 * 16);
  EXPECT_EQ(moe_launches_after_host_wait(qwen3_fp8_cs(4)), 12 + 10 * 4);
  MoeSyncLaunchShape bf16 = qwen3_fp8_cs(16);
  bf16.fp8 = false;
  EXPECT_EQ(moe_launches_after_host_wait(bf16), 3 + 4 + 2 + 2 * 16);
  // Delayed scaling: one fused multi-tensor cast per grouped GEMM.
  MoeSyncLaunchShape delayed = qwen3_fp8_cs(16);
  delayed.fp8_current_scaling = false;
  EXPECT_EQ(moe_launches_after_host_wait(delayed), 3 + 4 + 3 + 2 + 2 * (16 + 1));
  // One local expert: no sort by expert; ep 1: no all-to-all either.
  MoeSyncLaunchShape one = qwen3_fp8_cs(1);
  EXPECT_EQ(moe_launches_after_host_wait(one), 3 + 3 + 2 + 2 * 5);
  one.ep_alltoall = false;
  EXPECT_EQ(moe_launches_after_host_wait(one), 3 + 2 + 2 * 5);
}

// launches x host time - GPU time, floored at 0: 172 launches at 25 us
// against 3.15 ms of GPU work leave the GPU idle 4.3 - 3.15 = 1.15 ms; at
// 18 us (3.096 ms of launches) the GPU is the slower side.
TEST(MoeHostSync, ExposedTimeIsTheHostExcess) {
  EXPECT_NEAR(host_launch_exposed_s(172, 25e-6, 3.15e-3), 1.15e-3, 1e-12);
  EXPECT_DOUBLE_EQ(host_launch_exposed_s(172, 18e-6, 3.15e-3), 0.0);
  EXPECT_DOUBLE_EQ(host_launch_exposed_s(172, 0.0, 0.0), 0.0);
}

TEST(MoeHostSync, OnlyPaddingToCapacityAvoidsTheWait) {
  JobSpec job;
  EXPECT_TRUE(moe_dispatch_waits_on_host(job));
  job.capacity_factor = 1.0;
  EXPECT_TRUE(moe_dispatch_waits_on_host(job));  // dropping, splits still data dependent
  job.pad_to_capacity = true;
  EXPECT_FALSE(moe_dispatch_waits_on_host(job));
}

class HostLaunchKey : public ::testing::Test {
 protected:
  FitRun read(const std::string& run) {
    return run_file_test::read_one_run(
        "host_launch_key",
        "name: r, model: mixtral-8x7b, gpus: 16, gbs: 64, seq: 4096, step_s: 5, "
        "precision: fp8, config: {tp: 1, pp: 2, ep: 8, mbs: 1, zero: 1}, " +
            run,
        cluster);
  }
  ClusterSpec cluster = load_cluster("dgx-h100");
};

TEST_F(HostLaunchKey, ReadInMicroseconds) {
  EXPECT_DOUBLE_EQ(read("moe_imbalance: 1.0").job.moe_host_launch_s, 0.0);
  EXPECT_DOUBLE_EQ(read("moe_host_launch_us: 25").job.moe_host_launch_s, 25e-6);
  run_file_test::expect_error_naming([&] { read("moe_host_launch_us: -1"); }, "moe_host_launch_us");
}

// A host slower than any GPU work (5 ms a launch) lengthens a dropless
// step and leaves a step padded to capacity as it was.
TEST_F(HostLaunchKey, PricesOnlyDispatchesThatWait) {
  const double dropless = predict_run(read("moe_imbalance: 1.0"), cluster).step_s;
  EXPECT_GT(predict_run(read("moe_imbalance: 1.0, moe_host_launch_us: 5000"), cluster).step_s, dropless);
  const std::string padded = "moe_capacity_factor: 1.0, moe_pad_to_capacity: true";
  EXPECT_DOUBLE_EQ(predict_run(read(padded + ", moe_host_launch_us: 5000"), cluster).step_s,
                   predict_run(read(padded), cluster).step_s);
}

}  // namespace
}  // namespace parplan
