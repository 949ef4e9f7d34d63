// A run's measured figure (step seconds, tokens/s per GPU, TFLOP/s per GPU
// under a named FLOP formula, or MFU) turned into step seconds.
#pragma once

#include <string>

#include "cost/spec/job_spec.h"
#include "cost/spec/model_spec.h"

namespace parplan {

enum class FigureUnit { kStepSeconds, kTokensPerSecondPerGpu, kTflopsPerGpu, kMfu };
/// The FLOP count behind a TFLOP/s or MFU figure.
/// kMegatron: Megatron-LM's num_floating_point_operations (training.py,
///   r0.8): 12 B s L h^2 ((1 + g/a + s/h) q/h + f/h * k * gated + V/(2 L h)),
///   forward + backward, no recomputation, attention counted over the full
///   s x s square. kNarayanan: Narayanan et al. 2021 eq. 3,
///   96 B s L h^2 (1 + s/(6h) + V/(16 L h)), which counts the full
///   recomputation's extra forward pass.
enum class FlopFormula { kMegatron, kNarayanan };

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
/// non-positive value.
double step_seconds(const MeasuredFigure& figure, const ModelSpec& model, const JobSpec& job,
                    double profile_peak_flops_per_s, const std::string& where);

}  // namespace parplan
