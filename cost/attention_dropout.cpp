#include "cost/attention_dropout.h"

#include <algorithm>
#include <cmath>

#include "cost/attention_kernels.h"

namespace parplan {

namespace {

// calibration/h100-kernels/attention_dropout.csv (2026-11-27, H100 SXM5 at
// 700 W, PyTorch 2.11, cuDNN 9.19): milliseconds with dropout 0.1 over
// without, at 2048, 4096, 8192 and 16384 tokens.
constexpr double kLog2First = 11.0;
constexpr double kFlash2Forward[4] = {1.1902 / 0.9863, 2.1172 / 1.6916, 4.0441 / 3.3068, 8.9722 / 6.4815};
constexpr double kFlash2Backward[4] = {3.5649 / 3.1376, 6.0260 / 5.4275, 10.5882 / 9.5357, 19.0208 / 17.5391};
constexpr double kCudnnForward[4] = {1.0694 / 0.5458, 2.0040 / 0.9478, 3.8763 / 1.8552, 7.5040 / 3.5206};
constexpr double kCudnnBackward[4] = {2.0396 / 1.7020, 3.4479 / 2.9026, 6.2216 / 5.8323, 11.6036 / 10.7122};

double interpolate(const double (&table)[4], double seq) {
  const double x = std::clamp(std::log2(std::max(seq, 1.0)) - kLog2First, 0.0, 3.0);
  const int i = std::min(2, static_cast<int>(x));
  return table[i] + (table[i + 1] - table[i]) * (x - i);
}

}  // namespace

AttentionTimeFactor attention_dropout_time_factor(const DeviceSpec& device, AttentionKernel kernel,
                                                  double seq, double dropout) {
  if (dropout <= 0 || !h100_attention_figures_apply(device)) return {};
  switch (kernel) {
    case AttentionKernel::kFlash2:
    case AttentionKernel::kProfile:
      return {interpolate(kFlash2Forward, seq), interpolate(kFlash2Backward, seq)};
    case AttentionKernel::kCudnn:
      return {interpolate(kCudnnForward, seq), interpolate(kCudnnBackward, seq)};
    default:
      return {};
  }
}

}  // namespace parplan
