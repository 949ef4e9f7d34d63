// The kernel floor: the least GPU time of a kernel queued behind others,
// measured on an H100 (calibration/h100-kernels/kernel_floor.csv), and what
// it adds where Transformer Engine casts expert inputs split by split under
// fp8 current scaling (four kernels per split and cast site).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cost/compute_time.h"
#include "cost/moe.h"
#include "src/io/cluster_loader.h"
#include "tests/cli_support.h"
#include "tests/kernel_csv.h"
#include "tests/moe_test_models.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

using moe_test::small_experts;

// The profile's floor is the median of the one-row kernels queued with the
// host ahead, per kernel, as the CSV records them.
TEST(KernelFloor, ProfileFloorIsTheMeasuredMedian) {
  std::vector<double> per_kernel_us;
  for (const test::CsvRow& row : test::read_kernel_csv("kernel_floor.csv"))
    if (row.at("rows") == "1" && row.at("mode") == "eager, host ahead")
      per_kernel_us.push_back(test::csv_number(row, "us_per_kernel"));
  ASSERT_EQ(per_kernel_us.size(), 3u);
  std::sort(per_kernel_us.begin(), per_kernel_us.end());
  const double median_s = per_kernel_us[1] * 1e-6;
  EXPECT_NEAR(load_cluster("dgx-h100").device.kernel_floor_s, median_s, 0.01e-6);
  EXPECT_NEAR(load_cluster("dgx-h800").device.kernel_floor_s, median_s, 0.01e-6);
  // Unmeasured parts price kernels by their bytes only.
  EXPECT_EQ(load_cluster("dgx-a100").device.kernel_floor_s, 0.0);
}

// Every kernel measured with the host ahead lasts at least the floor, the
// 512-row splits (one expert's rows of Qwen3-30B-A3B at ep 8) and the
// expert GEMMs included.
TEST(KernelFloor, MeasuredSplitKernelsLastAtLeastTheFloor) {
  const double floor_us = load_cluster("dgx-h100").device.kernel_floor_s * 1e6;
  for (const test::CsvRow& row : test::read_kernel_csv("kernel_floor.csv"))
    if (row.at("mode") == "eager, host ahead") {
      EXPECT_GE(test::csv_number(row, "us_per_kernel"), floor_us * 0.9) << row.at("op");
    }
}

// Four kernels per split: two tiny ones at the floor, and the amax pass
// and the cast each raised to the floor where their bytes take less.
TEST(KernelFloor, SplitCastFloorFormula) {
  DeviceSpec d = load_cluster("dgx-h100").device;
  const double floor = d.kernel_floor_s;
  const double rate = d.hbm_bytes_per_s * d.memory_bound_efficiency;
  // Tiny splits: every kernel at the floor, less the bytes already priced.
  const double tiny_elements = 16 * 64.0;
  EXPECT_NEAR(split_cast_floor_s(d, 16, 16, 64),
              16 * (4 * floor - 2.0 * tiny_elements / rate - 4.0 * tiny_elements / rate), 1e-15);
  // Huge splits: only the two tiny kernels.
  EXPECT_NEAR(split_cast_floor_s(d, 4, 65536, 8192), 4 * 2 * floor, 1e-15);
  // Monotone in the number of splits; nothing without a floor.
  EXPECT_GT(split_cast_floor_s(d, 32, 256, 2048), split_cast_floor_s(d, 16, 512, 2048));
  d.kernel_floor_s = 0;
  EXPECT_EQ(split_cast_floor_s(d, 16, 512, 2048), 0.0);
}

MoeShape fine_grained(bool fp8, bool current) {
  MoeShape s = moe_test::eight_k_tokens_ep8(fp8);
  s.fp8_current_scaling = current;
  return s;
}

// The expert block gains exactly the split casts' floor: forward the
// inputs of FC1 (h) and FC2 (f), backward the output gradients of FC1
// (2f, gated) and FC2 (h); 16 local experts of 512 rows each at ep 8.
TEST(KernelFloor, CurrentScalingExpertBlockGainsTheSplitFloors) {
  const ModelSpec m = small_experts();
  const DeviceSpec d = load_cluster("dgx-h100").device;
  DeviceSpec no_floor = d;
  no_floor.kernel_floor_s = 0;
  const double peak = d.peak_fp8_flops_per_s;
  const MoeShape s = fine_grained(true, true);
  const MoeBlockTimes with = moe_block_times(m, d, peak, s);
  const MoeBlockTimes without = moe_block_times(m, no_floor, peak, s);
  const double splits = 16, rows = 8192.0 * 8 / 16;
  EXPECT_NEAR(with.forward_s - without.forward_s,
              split_cast_floor_s(d, splits, rows, 2048) + split_cast_floor_s(d, splits, rows, 768), 1e-12);
  EXPECT_NEAR(with.backward_s - without.backward_s,
              split_cast_floor_s(d, splits, rows, 1536) + split_cast_floor_s(d, splits, rows, 2048), 1e-12);
  // At least 16 experts x 2 sites x 2 tiny kernels at the floor each way.
  EXPECT_GE(with.forward_s - without.forward_s, 64 * d.kernel_floor_s);
}

// Delayed scaling casts all splits in one fused kernel per grouped GEMM,
// bf16 casts nothing, torch._grouped_mm runs one kernel: no floor added.
TEST(KernelFloor, OnlyTheSplitBySplitCastIsFloored) {
  const ModelSpec m = small_experts();
  const DeviceSpec d = load_cluster("dgx-h100").device;
  DeviceSpec no_floor = d;
  no_floor.kernel_floor_s = 0;
  MoeShape grouped = fine_grained(true, true);
  grouped.one_grouped_kernel = true;
  for (const MoeShape& s : {fine_grained(true, false), fine_grained(false, false), grouped}) {
    const double peak = s.fp8 ? d.peak_fp8_flops_per_s : d.peak_bf16_flops_per_s;
    EXPECT_EQ(moe_block_times(m, d, peak, s).forward_s, moe_block_times(m, no_floor, peak, s).forward_s);
    EXPECT_EQ(moe_block_times(m, d, peak, s).backward_s, moe_block_times(m, no_floor, peak, s).backward_s);
  }
}

TEST(KernelFloor, ProfileKeyIsBounded) {
  const auto profile = [](const std::string& floor_us) {
    return test::write_temp(
        "kernel_floor.yaml",
        "name: x\nranks_per_node: 8\nnodes: 1\ndevice:\n  name: d\n  peak_bf16_tflops: 100\n"
        "  hbm_gib: 80\n  hbm_tb_per_s: 2\n  kernel_floor_us: " +
            floor_us + "\ntiers:\n  - {name: nvlink, ranks: 8, bandwidth_gb_per_s: 450}\n");
  };
  EXPECT_NEAR(load_cluster(profile("3.5")).device.kernel_floor_s, 3.5e-6, 1e-18);
  for (const char* bad : {"-1", "5000", "fast"}) {
    const std::string path = profile(bad);
    run_file_test::expect_error_naming([&] { load_cluster(path); }, "kernel_floor_us");
  }
}

}  // namespace
}  // namespace parplan
