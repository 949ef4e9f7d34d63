// A part at a lower board power limit runs its tensor-core kernels at a
// lower clock (cost/power_cap.h): the curve's closed form and properties,
// and its constants against the measurements they were fitted to
// (calibration/h100-kernels/power_per_sm_run1..4.csv: three GEMM kernels on
// 16 to 132 SMs of one H100 SXM5 at its 700 W limit).
#include "cost/power_cap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "src/io/cluster_loader.h"
#include "tests/cli_support.h"
#include "tests/kernel_csv.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

const PowerCurve& h100 = kH100Sxm5PowerCurve;

TEST(PowerCap, ReferenceLimitAndAboveKeepTheClock) {
  EXPECT_DOUBLE_EQ(power_capped_clock_ratio(h100, 700), 1.0);
  EXPECT_DOUBLE_EQ(power_capped_clock_ratio(h100, 900), 1.0);
}

// P - base = dynamic power, which grows as the clock to the exponent.
TEST(PowerCap, ClosedFormAt500W) {
  EXPECT_NEAR(power_capped_clock_ratio(h100, 500), std::pow((500 - 166.8) / (700 - 166.8), 1 / 2.82), 1e-12);
  EXPECT_NEAR(power_capped_clock_ratio(h100, 500), 0.846, 0.001);
}

TEST(PowerCap, LowerLimitNeverRaisesTheClock) {
  double previous = 0;
  for (double w = h100.min_limit_w; w <= 700; w += 10) {
    const double r = power_capped_clock_ratio(h100, w);
    EXPECT_GT(r, previous) << w;
    EXPECT_LE(r, 1.0) << w;
    previous = r;
  }
}

struct Load {
  std::string kernel;
  double tflops, mhz, watts;
};

std::vector<Load> measured_loads() {
  std::vector<Load> loads;
  for (const char* file :
       {"power_per_sm_run1.csv", "power_per_sm_run2.csv", "power_per_sm_run3.csv", "power_per_sm_run4.csv"})
    for (const test::CsvRow& r : test::read_kernel_csv(file))
      if (r.at("kernel").rfind("triton", 0) == 0 && !r.at("median_sm_mhz").empty())
        loads.push_back({r.at("kernel"), test::csv_number(r, "tflops"), test::csv_number(r, "median_sm_mhz"),
                         test::csv_number(r, "median_power_w")});
  return loads;
}

// rms relative power error of P = base + E_k T (f / 1980)^(exponent - 1),
// E_k each kernel's least-squares value for the given exponent.
double rms_power_error(const std::vector<Load>& loads, double base_w, double exponent) {
  std::map<std::string, std::pair<double, double>> sums;  // kernel -> numerator, denominator
  const auto x = [&](const Load& l) { return l.tflops * std::pow(l.mhz / 1980, exponent - 1); };
  for (const Load& l : loads) {
    sums[l.kernel].first += x(l) * (l.watts - base_w) / (l.watts * l.watts);
    sums[l.kernel].second += x(l) * x(l) / (l.watts * l.watts);
  }
  double sq = 0;
  for (const Load& l : loads) {
    const double e = sums[l.kernel].first / sums[l.kernel].second;
    const double r = (base_w + e * x(l) - l.watts) / l.watts;
    sq += r * r;
  }
  return std::sqrt(sq / loads.size());
}

// The base is the first kernel's (runs 1 and 2, the most unthrottled loads)
// intercept at the maximum clock.
TEST(PowerCap, BaseIsTheUnthrottledLoadsIntercept) {
  double n = 0, st = 0, sp = 0, stt = 0, stp = 0;
  for (const Load& l : measured_loads()) {
    if (l.mhz < 1980 || l.kernel != "triton persistent tl.dot 128x128x64, 4 stages") continue;
    n += 1;
    st += l.tflops;
    sp += l.watts;
    stt += l.tflops * l.tflops;
    stp += l.tflops * l.watts;
  }
  ASSERT_GE(n, 5);
  const double slope = (n * stp - st * sp) / (n * stt - st * st);
  EXPECT_NEAR((sp - slope * st) / n, h100.base_w, 0.1);
}

TEST(PowerCap, ExponentIsTheMeasurementsBestFit) {
  const std::vector<Load> loads = measured_loads();
  ASSERT_EQ(loads.size(), 43u);
  double best = 0, best_rms = 1e9;
  for (double g = 1.0; g <= 5.0; g += 0.01) {
    const double rms = rms_power_error(loads, h100.base_w, g);
    if (rms < best_rms) best_rms = rms, best = g;
  }
  EXPECT_NEAR(best, h100.clock_exponent, 0.01);
  EXPECT_LT(best_rms, 0.06);
}

// The profile of an H100 SXM5 at 500 W (torchtitan's Grand Teton) scales
// the SXM5's datasheet peaks by the curve's clock ratio.
TEST(PowerCap, ProfileScalesTheDatasheetPeaks) {
  const DeviceSpec gt = load_cluster("grand-teton-h100").device;
  const double r = power_capped_clock_ratio(h100, 500);
  EXPECT_DOUBLE_EQ(gt.power_limit_w, 500);
  EXPECT_DOUBLE_EQ(gt.power_clock_ratio, r);
  EXPECT_NEAR(gt.peak_bf16_flops_per_s, 989.4e12 * r, 1e6);
  EXPECT_NEAR(gt.peak_fp8_flops_per_s, 1978.9e12 * r, 1e6);
  const DeviceSpec sxm = load_cluster("dgx-h100").device;
  EXPECT_DOUBLE_EQ(sxm.power_clock_ratio, 1.0);
  EXPECT_DOUBLE_EQ(gt.hbm_bytes_per_s, 2.4e12);
}

// Llama 3 8B on 8 GPUs, FSDP: `cluster_and_flags` completes the command.
test::CliRun estimate_8b(const std::string& cluster_and_flags) {
  return test::run_cli(
      "estimate --model llama3-8b --gpus 8 --gbs 16 --seq 8192 --tp 1 --pp 1 --mbs 2 --zero 3 " +
      cluster_and_flags);
}

// The table says where a power-limited part's compute peak comes from.
TEST(PowerCap, EstimateNamesTheLimit) {
  const test::CliRun r = estimate_8b("--cluster grand-teton-h100");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("500 W limit: compute at 0.846 of the datasheet peak"), std::string::npos) << r.out;
  EXPECT_EQ(estimate_8b("--cluster dgx-h100").out.find("W limit"), std::string::npos);
}

// Half the spread of the 500 W ratio over the per-kernel exponents.
TEST(PowerCap, UncertaintyIsTheSpreadOverTheKernelExponents) {
  const double r = power_capped_clock_ratio(h100, 500);
  const double low = std::pow((500 - 166.8) / (700 - 166.8), 1 / 2.67);
  const double high = std::pow((500 - 166.8) / (700 - 166.8), 1 / 3.24);
  EXPECT_NEAR(power_capped_peak_uncertainty(h100, 500), (high - low) / 2 / r, 1e-12);
  EXPECT_DOUBLE_EQ(power_capped_peak_uncertainty(h100, 700), 0.0);
  EXPECT_NEAR(load_cluster("grand-teton-h100").device.peak_uncertainty, (high - low) / 2 / r, 1e-12);
}

// dgx-h100 moved to 500 W has grand-teton-h100's compute peaks (the same
// chip and curve), and back to 700 W its own.
TEST(PowerCap, ALimitMovesThePeaksBothWays) {
  const DeviceSpec sxm = load_cluster("dgx-h100").device;
  const DeviceSpec gt = load_cluster("grand-teton-h100").device;
  const DeviceSpec at500 = with_power_limit(sxm, h100, 500);
  EXPECT_NEAR(at500.peak_bf16_flops_per_s, gt.peak_bf16_flops_per_s, 1e3);
  EXPECT_NEAR(at500.peak_fp8_flops_per_s, gt.peak_fp8_flops_per_s, 1e3);
  const DeviceSpec back = with_power_limit(gt, h100, 700);
  EXPECT_NEAR(back.peak_bf16_flops_per_s, sxm.peak_bf16_flops_per_s, 1e3);
  EXPECT_DOUBLE_EQ(back.hbm_bytes_per_s, gt.hbm_bytes_per_s);
}

double estimate_step_s(const std::string& extra) {
  const test::CliRun r = estimate_8b("--cluster dgx-h100 --format json " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto at = r.out.find("\"step_s\":");
  EXPECT_NE(at, std::string::npos) << r.out;
  return at == std::string::npos ? 0 : std::stod(r.out.substr(at + 9));
}

// A lower limit never gives a shorter step: on each engine's attention
// kernel, and across 1 % below the datasheet peak, where the published H100
// kernel figures must keep applying to the re-clocked part.
TEST(PowerCap, LowerLimitNeverShortensTheStep) {
  for (const std::string engine : {"", "--engine torchtitan "}) {
    double previous = estimate_step_s(engine);
    for (int w : {700, 686, 685, 660, 500, 300}) {
      const double step = estimate_step_s(engine + "--power-limit " + std::to_string(w));
      EXPECT_GE(step, previous * (1 - 1e-9)) << engine << w << " W";
      previous = step;
    }
  }
}

// MFU is against the datasheet peak: at a lower limit the same model FLOP
// rate is the same MFU.
TEST(PowerCap, MfuIsAgainstTheDatasheetPeak) {
  const test::CliRun r = estimate_8b("--cluster dgx-h100 --format json --power-limit 500");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto number_after = [&](const std::string& key) {
    const auto at = r.out.find("\"" + key + "\":");
    EXPECT_NE(at, std::string::npos) << key;
    return at == std::string::npos ? 0.0 : std::stod(r.out.substr(at + key.size() + 3));
  };
  EXPECT_NEAR(number_after("mfu"), number_after("model_tflops_per_gpu") / 989.4, 1e-4);
}

// A calibrated profile moved to another limit says its band grows.
TEST(PowerCap, CalibratedBandNamesTheReclocking) {
  const test::CliRun r = estimate_8b("--cluster dgx-h100 --power-limit 500");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("calibration runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compute re-clocked to 500 W, +-1.6% more"), std::string::npos) << r.out;
}

TEST(PowerCap, PowerLimitFlagIsChecked) {
  for (const std::string& bad : {std::string("--cluster dgx-a100 --power-limit 300"),
                                 std::string("--cluster dgx-h100 --power-limit 900"),
                                 std::string("--cluster dgx-h100 --power-limit 150")}) {
    const test::CliRun r = estimate_8b(bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--power-limit"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << bad;
  }
}

// sweep takes the flag too, with the same checks.
TEST(PowerCap, SweepTakesThePowerLimit) {
  const std::string sweep = "sweep --models llama3-8b --gpus 8 --gbs 64 --seq 8192 --format json ";
  const test::CliRun ok = test::run_cli(sweep + "--cluster dgx-h100 --power-limit 500");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  const test::CliRun bad = test::run_cli(sweep + "--cluster dgx-a100 --power-limit 500");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--power-limit"), std::string::npos) << bad.err;
}

std::string profile_with(const std::string& device_keys) {
  return test::write_temp(
      "power_cap.yaml",
      "name: x\nranks_per_node: 8\nnodes: 1\ndevice:\n  name: d\n  peak_bf16_tflops: 989.4\n"
      "  hbm_gib: 80\n  hbm_tb_per_s: 3\n" +
          device_keys + "tiers:\n  - {name: nvlink, ranks: 8, bandwidth_gb_per_s: 450}\n");
}

TEST(PowerCap, ProfileKeysAreChecked) {
  EXPECT_NEAR(load_cluster(profile_with("  power_curve: h100-sxm5\n  power_limit_w: 700\n"))
                  .device.peak_bf16_flops_per_s,
              989.4e12, 1e6);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"  power_curve: a100\n  power_limit_w: 400\n", "power_curve"},
      {"  power_curve: h100-sxm5\n", "power_limit_w"},
      {"  power_limit_w: 500\n", "power_limit_w"},
      {"  power_curve: h100-sxm5\n  power_limit_w: 900\n", "power_limit_w"},
      {"  power_curve: h100-sxm5\n  power_limit_w: 150\n", "power_limit_w"},
  };
  for (const auto& entry : bad) {
    const std::string profile = profile_with(entry.first);
    run_file_test::expect_error_naming([&] { load_cluster(profile); }, entry.second);
  }
}

}  // namespace
}  // namespace parplan
