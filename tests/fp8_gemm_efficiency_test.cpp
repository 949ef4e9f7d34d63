// fp8 GEMMs are not twice as fast as bf16 at equal efficiency: the H100
// profile's fp8 curve reproduces a paired fp16/fp8 matmul benchmark
// (tile-ai/tilelang benchmark/matmul{,_fp8}/README.md, H800 SXM,
// M = N = 8192), and profiles without fp8 figures keep the bf16 efficiency.
#include <gtest/gtest.h>

#include "cost/compute_time.h"
#include "src/io/cluster_loader.h"

namespace parplan {
namespace {

TEST(Fp8GemmEfficiency, ReproducesThePairedBenchmark) {
  const DeviceSpec h100 = load_cluster("dgx-h100").device;
  // Published throughput in TFLOP/s at K = 256 .. 16384.
  const double k[] = {256, 512, 1024, 2048, 4096, 8192, 16384};
  const double fp16_tflops[] = {386, 520, 628, 705, 736, 758, 766};
  const double fp8_tflops[] = {376, 622, 927, 1174, 1378, 1461, 1523};
  for (int i = 0; i < 7; ++i) {
    const double published = (fp8_tflops[i] / 1978.9) / (fp16_tflops[i] / 989.4);
    const double bf16_s = gemm_time_s(h100, h100.peak_bf16_flops_per_s, 8192, 8192, k[i]);
    const double fp8_s = gemm_time_s(h100, h100.peak_fp8_flops_per_s, 8192, 8192, k[i]);
    const double modelled = (bf16_s / fp8_s) * (h100.peak_bf16_flops_per_s / h100.peak_fp8_flops_per_s);
    EXPECT_NEAR(modelled, published, 0.03 * published) << "K = " << k[i];
    // Never faster than the fp8 peak's ideal 2x.
    EXPECT_GE(fp8_s, 0.5 * bf16_s * 0.999);
  }
}

TEST(Fp8GemmEfficiency, ProfilesWithoutFp8FiguresKeepTheBf16Efficiency) {
  DeviceSpec device = load_cluster("dgx-h100").device;
  device.fp8_gemm_ratio_max = 0;
  const double bf16_s = gemm_time_s(device, device.peak_bf16_flops_per_s, 8192, 1024, 8192);
  const double fp8_s = gemm_time_s(device, device.peak_fp8_flops_per_s, 8192, 1024, 8192);
  EXPECT_NEAR(fp8_s, bf16_s * device.peak_bf16_flops_per_s / device.peak_fp8_flops_per_s, 1e-15);
}

}  // namespace
}  // namespace parplan
