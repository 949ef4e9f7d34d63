// A compute-bound kernel's clock on a chip run at a lower board power limit
// than the one its efficiencies were measured or fitted at.
//
// An H100 SXM5 at its 700 W limit does not run its tensor-core kernels at
// the 1980 MHz maximum: the limit holds a bf16 GEMM at 1350-1380 MHz,
// FlashAttention-2 at 1740, cuDNN attention at 1515 (calibration/
// h100-kernels/power_clocks.csv), while a memory-bound copy runs at 1980 MHz
// drawing 420 W. A lower limit lowers the clock further; the profiles'
// efficiencies, measured or fitted at 700 W, then apply at that lower clock.
//
// Board power under a tensor-core load is P = base + E * T * (f / f_max)^g
// (T the kernel's FLOP rate, E the energy per FLOP at f_max; the energy per
// FLOP falls with the clock because the voltage does). With T proportional
// to f, a kernel held at the reference limit L_ref runs, under a limit L, at
//   f_L / f_ref = ((L - base) / (L_ref - base))^(1 / (1 + g)),
// the same for every kernel the reference limit holds back.
#pragma once

#include "cost/spec/cluster_spec.h"

namespace parplan {

struct PowerCurve {
  /// The limit the efficiencies apply at (W).
  double reference_limit_w = 0;
  /// Board power with no tensor-core work at the maximum clock (W).
  double base_w = 0;
  /// 1 + g: the dynamic power of a fixed amount of work per clock grows as
  /// the clock to this power.
  double clock_exponent = 1;
  /// The board's lowest settable limit (W).
  double min_limit_w = 0;
  /// The exponent fitted to each measured kernel alone, least and most: the
  /// spread a kernel's clock ratio may take under a limit.
  double clock_exponent_low = 1;
  double clock_exponent_high = 1;
};

/// One H100 SXM5 (80 GB HBM3, driver 580.159.04), three GEMM kernels (bf16
/// 128x128 and 128x256 tiles, fp8 128x128) on 16 to 132 of its SMs at the
/// 700 W limit, 43 loads in four runs (calibration/h100-kernels/
/// power_per_sm_run1..4.csv): the first kernel's unthrottled loads (16 to 42
/// SMs at 1980 MHz) lie on P = 166.8 W + 2.07 W per TFLOP/s (the other two
/// kernels' on 155.9 and 159.9 W); with that base, g = 1.82 fits all 43 loads
/// (each kernel its own E; the throttled loads at their read clock) to 4.8 %
/// rms in power. Fitted per kernel, or with the base free, g runs from 1.67
/// to 2.24 and the 500 W clock ratio from 0.834 to 0.865 (0.846 here). The
/// minimum limit is the board's (nvidia-smi -q: Min Power Limit 200 W). Below
/// about 1350 MHz (the full bf16 GEMM at 700 W) the curve is extrapolated.
inline constexpr PowerCurve kH100Sxm5PowerCurve{700.0, 166.8, 2.82, 200.0, 2.67, 3.24};

/// f_L / f_ref for a kernel the reference limit holds back; 1 at or above
/// the reference limit (the maximum clock's headroom is not modelled: parts
/// above it are not lent by this curve), and limit_w must exceed base_w.
double power_capped_clock_ratio(const PowerCurve& curve, double limit_w);

/// Half the spread of that ratio over the per-kernel exponents, over the
/// ratio: how far a compute peak derived from it may be off (0 at or above
/// the reference limit).
double power_capped_peak_uncertainty(const PowerCurve& curve, double limit_w);

/// `device` at another board power limit: every compute peak moved from
/// the clock ratio of its current limit (device.power_clock_ratio) to the
/// new limit's; the limit, the ratio and, below the reference, the peak's
/// uncertainty (at least power_capped_peak_uncertainty) set. HBM bandwidth
/// keeps its value: memory-bound kernels run unthrottled at 700 W.
DeviceSpec with_power_limit(DeviceSpec device, const PowerCurve& curve, double limit_w);

}  // namespace parplan
