// A run on other hardware than the profile it is read against (run key
// `cluster`), and an H100 at a power-limited clock (profile key
// `kernel_figures`): torchtitan's 2024-12 benchmarks ran on 500 W Grand
// Teton H100s (pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md
// @ 31a17bf, "Hardware"), SXM H100s "with lower TDP" (tests/power_cap_test.cpp
// for the peak).
#include <gtest/gtest.h>

#include <string>

#include "cost/attention_kernels.h"
#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/run_file_reader.h"
#include "src/report/error_band.h"
#include "tests/cli_support.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

std::string write_run(const std::string& fields) {
  return run_file_test::write_one_run(
      "run_cluster",
      "name: r, model: llama3-8b, gpus: 8, gbs: 16, seq: 8192, step_s: 2.5, "
      "engine: torchtitan, config: {tp: 1, pp: 1, mbs: 2, zero: 3, recompute: selective}" +
          fields);
}

// An uncalibrated profile whose peak is not a datasheet figure says by how
// much it is uncertain; one with datasheet figures says only that it is
// uncalibrated.
TEST(GrandTeton, ErrorBandStatesTheDerivedPeak) {
  EXPECT_NE(error_band_text(load_cluster("grand-teton-h100")).find("peak is not a datasheet figure, +-1.6%"),
            std::string::npos);
  ClusterSpec plain = load_cluster("grand-teton-h100");
  plain.device.peak_uncertainty = 0;
  EXPECT_EQ(error_band_text(plain).find("peak"), std::string::npos);
}

// Every SM runs at the same lower clock: a published kernel keeps its
// fraction of the part's peak, so its time grows by the peak ratio.
TEST(GrandTeton, PublishedAttentionFiguresKeepTheirFractionOfThePeak) {
  const DeviceSpec sxm = load_cluster("dgx-h100").device;
  const DeviceSpec gt = load_cluster("grand-teton-h100").device;
  for (AttentionKernel k : {AttentionKernel::kFlash2, AttentionKernel::kCudnn, AttentionKernel::kFlash3}) {
    for (double seq : {2048.0, 8192.0, 65536.0}) {
      const AttentionEfficiency a = attention_efficiency(sxm, k, seq);
      const AttentionEfficiency b = attention_efficiency(gt, k, seq);
      EXPECT_DOUBLE_EQ(a.forward, b.forward);
      EXPECT_DOUBLE_EQ(a.backward, b.backward);
    }
  }
  // Without the key, a part whose peak is not the SXM5's has no published
  // figures: the profile's own efficiency.
  DeviceSpec other = gt;
  other.h100_kernel_figures = false;
  EXPECT_DOUBLE_EQ(attention_efficiency(other, AttentionKernel::kFlash2, 8192).forward,
                   attention_efficiency(other, AttentionKernel::kProfile, 8192).forward);
}

TEST(GrandTeton, UnknownKernelFiguresValueIsRefused) {
  const std::string profile =
      test::write_temp("kernel_figures.yaml",
                       "name: x\nranks_per_node: 8\nnodes: 1\ndevice:\n  name: d\n  peak_bf16_tflops: 900\n"
                       "  hbm_gib: 80\n  hbm_tb_per_s: 3\n  kernel_figures: a100\ntiers:\n"
                       "  - {name: nvlink, ranks: 8, bandwidth_gb_per_s: 450}\n");
  run_file_test::expect_error_naming([&] { load_cluster(profile); }, "kernel_figures");
}

// A run naming its hardware is predicted on that profile, whatever profile
// the file is read against.
TEST(RunCluster, PredictsOnTheRunsOwnProfile) {
  const ClusterSpec h100 = load_cluster("dgx-h100");
  const ClusterSpec gt = load_cluster("grand-teton-h100");
  const FitRun own = read_run_yaml(write_run(", cluster: grand-teton-h100"), h100).front();
  const FitRun plain = read_run_yaml(write_run(""), h100).front();
  ASSERT_TRUE(own.own_cluster.has_value());
  EXPECT_EQ(own.own_cluster->name, "grand-teton-h100");
  EXPECT_FALSE(plain.own_cluster.has_value());
  EXPECT_DOUBLE_EQ(predict_run(own, h100).step_s, predict_run(plain, gt).step_s);
  EXPECT_DOUBLE_EQ(run_cluster(own, h100).device.hbm_bytes, gt.device.hbm_bytes);
  // A lower clock and slower HBM never make the step shorter.
  EXPECT_GT(predict_run(own, h100).step_s, predict_run(plain, h100).step_s);
}

TEST(RunCluster, UnknownProfileNamesTheField) {
  run_file_test::expect_error_naming(
      [] { read_run_yaml(write_run(", cluster: no-such-profile"), load_cluster("dgx-h100")); }, "cluster");
}

// calibrate fits one profile: a run on other hardware is refused, exit 2.
TEST(RunCluster, CalibrateRefusesARunOnOtherHardware) {
  const std::string runs = write_run(", cluster: grand-teton-h100");
  const test::CliRun r = test::run_cli("calibrate --cluster dgx-h100 --runs " + runs);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("'cluster'"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace parplan
