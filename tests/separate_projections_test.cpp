// Separate input projections (torchtitan's wq, wk, wv before fused QKV
// became its default; its w1, w3 still): each matmul reads the whole input
// and the input's gradient is the sum of their input-gradient matmuls.
// What that costs over one fused matmul was measured on an H100
// (calibration/h100-kernels/projections.csv, compiled, forward + backward,
// attention and FFN inputs together); the model prices it from the GEMM
// curve's traffic floor and one memory-bound sum pass.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "cost/compute_time.h"
#include "solvers/fit_run.h"
#include "src/io/cluster_loader.h"
#include "src/io/model_loader.h"
#include "src/io/run_file_reader.h"
#include "tests/kernel_csv.h"
#include "tests/run_file_fixture.h"

namespace parplan {
namespace {

// Measured extra milliseconds of separate over fused projections.
double measured_extra_ms(const std::string& model, int tp, const std::string& mode) {
  double fused = 0, separate = 0;
  for (const test::CsvRow& row : test::read_kernel_csv("projections.csv")) {
    if (row.at("model") != model || row.at("tp") != std::to_string(tp) || row.at("mode") != mode ||
        row.at("pass") != "forward_backward")
      continue;
    (row.at("layout") == "fused" ? fused : separate) += test::csv_number(row, "median_ms");
  }
  EXPECT_GT(fused, 0) << model << " tp " << tp;
  return separate - fused;
}

struct Priced {
  double extra_ms;  // separate over fused, forward + backward of one layer
  double fused_ms;
};

Priced priced(const std::string& model_name, int tp, double tokens) {
  const ModelSpec model = load_model(model_name);
  const DeviceSpec device = load_cluster("dgx-h100").device;
  LayerShape shape;
  shape.tokens = tokens;
  shape.seq = 8192;
  shape.tp = tp;
  shape.sp = tp > 1;
  const LayerComputeTimes fused = layer_compute_times(model, device, device.peak_bf16_flops_per_s, shape);
  shape.separate_qkv = shape.separate_gate_up = true;
  const LayerComputeTimes separate = layer_compute_times(model, device, device.peak_bf16_flops_per_s, shape);
  return {1e3 * (separate.forward_s + separate.backward_s - fused.forward_s - fused.backward_s),
          1e3 * (fused.forward_s + fused.backward_s)};
}

// At tp 8 the key and value projections are 128 columns wide: bound by
// reading the input, the separate layout costs milliseconds per layer.
TEST(SeparateProjections, PricedWithinAThirdOfTheMeasuredCostAtTp8) {
  for (const auto& [model, tokens] : {std::pair<std::string, double>{"llama3-8b", 12 * 8192.0},
                                      std::pair<std::string, double>{"llama3-70b", 16 * 8192.0}}) {
    const double measured = measured_extra_ms(model, 8, "compiled");
    const Priced p = priced(model, 8, tokens);
    ASSERT_GT(measured, 0) << model;
    EXPECT_NEAR(p.extra_ms, measured, 0.35 * measured) << model;
  }
}

// At tp 1 every projection is wide and compute-bound: the layouts differ by
// the sum pass alone, within the measurement's noise.
TEST(SeparateProjections, WideProjectionsCostAlmostNothingMore) {
  const Priced p = priced("llama3-8b", 1, 2 * 8192.0);
  EXPECT_GT(p.extra_ms, 0);
  EXPECT_LT(p.extra_ms, 0.05 * p.fused_ms);
  EXPECT_LT(std::abs(measured_extra_ms("llama3-8b", 1, "compiled")), 0.05 * p.fused_ms);
}

// The layouts do the same FLOPs: the forward GEMMs' total differs only
// where a projection is memory-bound.
TEST(SeparateProjections, SameWorkWhereComputeBound) {
  const ModelSpec model = load_model("llama3-8b");
  const DeviceSpec device = load_cluster("dgx-h100").device;
  LayerShape shape;
  shape.tokens = 2 * 8192.0;
  shape.seq = 8192;
  const double fused = layer_compute_times(model, device, device.peak_bf16_flops_per_s, shape).gemm_forward_s;
  shape.separate_qkv = shape.separate_gate_up = true;
  const double separate =
      layer_compute_times(model, device, device.peak_bf16_flops_per_s, shape).gemm_forward_s;
  EXPECT_NEAR(separate, fused, 0.01 * fused);
}

// The key/value projection's GEMMs at tp 8 are held to the traffic floor:
// operands read once (1 byte each in fp8, 2 in bf16), the 16-bit output
// written once. Measured on an H100 (calibration/h100-kernels/
// skinny_gemm.csv): each of the 12 GEMMs within 25 % of the floor (priced
// 5 to 21 % faster), and fp8 halves the forward and weight-gradient GEMMs
// (1-byte reads) but not the input gradient (its 16-bit m x k output
// dominates).
TEST(SeparateProjections, SkinnyGemmsAtTheTrafficFloor) {
  const DeviceSpec device = load_cluster("dgx-h100").device;
  int rows = 0;
  for (const test::CsvRow& row : test::read_kernel_csv("skinny_gemm.csv")) {
    const double m = test::csv_number(row, "m"), k = test::csv_number(row, "k"),
                 n = test::csv_number(row, "n");
    const double peak =
        row.at("precision") == "fp8" ? device.peak_fp8_flops_per_s : device.peak_bf16_flops_per_s;
    // The CSV's m x k times k x n is gemm_time_s's m x n output over k.
    const double priced_ms = 1e3 * gemm_time_s(device, peak, m, n, k);
    EXPECT_NEAR(priced_ms, test::csv_number(row, "median_ms"), 0.25 * test::csv_number(row, "median_ms"))
        << row.at("model") << " " << row.at("precision") << " " << row.at("pass");
    ++rows;
  }
  EXPECT_EQ(rows, 12);
}

// Run files name the layout (torchtitan v0.2.x and older: separate_qkv);
// the engine's recipe gives torchtitan's separate w1, w3.
TEST(SeparateProjections, RunFileKey) {
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const auto run =
      run_file_test::run_with("separate_qkv",
                              "name: r, model: llama3-8b, gpus: 64, gbs: 96, seq: 8192, step_s: 3, "
                              "engine: torchtitan, config: {tp: 8, sp: true, zero: 3, mbs: 12}",
                              cluster);
  const FitRun fused_qkv = run("");
  const FitRun separate_qkv = run(", separate_qkv: true");
  EXPECT_TRUE(fused_qkv.job.separate_gate_up);
  EXPECT_FALSE(fused_qkv.job.separate_qkv);
  EXPECT_TRUE(separate_qkv.job.separate_qkv);
  EXPECT_GT(predict_run(separate_qkv, cluster).step_s, predict_run(fused_qkv, cluster).step_s);
  run_file_test::expect_error_naming([&] { run(", separate_qkv: maybe"); }, "separate_qkv");
}

}  // namespace
}  // namespace parplan
