// A run's measured figure (step seconds, tokens/s per GPU, TFLOP/s per GPU
// under a named FLOP formula, or MFU) turned into step seconds.
#pragma once

#include <optional>
#include <string>

#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"

namespace parplan {

/// The plausible range of a measured figure (docs/calibrate.md, "Measured
/// figures"): outside it the figure is a typo or a unit mix-up (ms for s,
/// tokens/s of the cluster for one GPU), and a fit to it would move the
/// profile's constants to absurd values.
inline constexpr double kMinStepSeconds = 1e-4;
inline constexpr double kMaxStepSeconds = 1e7;
inline constexpr double kMaxTokensPerSecondPerGpu = 1e9;
inline constexpr double kMaxTflopsPerGpu = 1e5;

/// A number as Python prints one into a log ("1500.4", "1e-05", "-2"): the
/// whole text, finite, in decimal (no hex, inf, nan, spaces or suffix);
/// nullopt otherwise.
std::optional<double> parse_printed_number(const std::string& text);
/// A whole number as Python prints an int ("4096", "-1"): digits only,
/// within int; nullopt otherwise ("4e3", "4096.9", "0x1000", "4096abc").
std::optional<int> parse_printed_int(const std::string& text);

enum class FigureUnit { kStepSeconds, kTokensPerSecondPerGpu, kTflopsPerGpu, kMfu };
/// The FLOP count behind a TFLOP/s or MFU figure.
/// kMegatron: Megatron-LM's num_floating_point_operations (training.py,
///   r0.8): 12 B s L h^2 ((1 + g/a + s/h) q/h + f/h * k * gated + V/(2 L h)),
///   forward + backward, no recomputation, attention counted over the full
///   s x s square. kNarayanan: Narayanan et al. 2021 eq. 3,
///   96 B s L h^2 (1 + s/(6h) + V/(16 L h)), which counts the full
///   recomputation's extra forward pass.
/// kMegatronCausal: the same function since Megatron-LM 8873b55 (2025-03-06,
///   "Fixes in number of floating-point operation estimates for MoE and
///   attention layer"; the 25.04 tags on): the causal half of the square,
///   s/(2h); the dense, routed and shared-expert MLPs of each layer; MLA's
///   own projections; multi-token-prediction layers and their logits.
enum class FlopFormula { kMegatron, kNarayanan, kMegatronCausal };

/// The largest plausible `value` of a figure in `unit` (one GPU's).
double figure_ceiling(FigureUnit unit);

FigureUnit parse_figure_unit(const std::string& text, const std::string& where);
FlopFormula parse_flop_formula(const std::string& text, const std::string& where);

/// FLOPs of one step of `gbs` sequences by `formula`; `padded_vocab` 0 =
/// the model's vocabulary.
double formula_step_flops(const ModelSpec& model, int gbs, int seq, FlopFormula formula,
                          double padded_vocab = 0);

struct MeasuredFigure {
  FigureUnit unit = FigureUnit::kStepSeconds;
  double value = 0;
  FlopFormula formula = FlopFormula::kMegatron;
  double padded_vocab = 0;
  /// Peak TFLOP/s per GPU the MFU is quoted against (0 = the profile's).
  double peak_tflops = 0;
};

/// Step seconds of the run; throws InputError (naming `where`) on a
/// non-positive value or a step outside [kMinStepSeconds, kMaxStepSeconds].
double step_seconds(const MeasuredFigure& figure, const ModelSpec& model, const JobSpec& job,
                    double profile_peak_flops_per_s, const std::string& where);

}  // namespace parplan
