#include "src/io/measured_figure.h"

#include "src/io/input_error.h"

namespace parplan {

FigureUnit parse_figure_unit(const std::string& text, const std::string& where) {
  if (text == "step_s") return FigureUnit::kStepSeconds;
  if (text == "tokens_per_s_per_gpu") return FigureUnit::kTokensPerSecondPerGpu;
  if (text == "tflops_per_gpu") return FigureUnit::kTflopsPerGpu;
  if (text == "mfu") return FigureUnit::kMfu;
  throw InputError(where + " must be step_s, tokens_per_s_per_gpu, tflops_per_gpu or mfu (got '" + text +
                   "')");
}

FlopFormula parse_flop_formula(const std::string& text, const std::string& where) {
  if (text == "megatron") return FlopFormula::kMegatron;
  if (text == "narayanan") return FlopFormula::kNarayanan;
  throw InputError(where + " must name the FLOP formula of the figure: megatron or narayanan (got '" + text +
                   "')");
}

double formula_step_flops(const ModelSpec& model, int gbs, int seq, FlopFormula formula,
                          double padded_vocab) {
  const double B = gbs, s = seq, L = model.layers, h = model.hidden;
  const double V = padded_vocab > 0 ? padded_vocab : static_cast<double>(model.vocab);
  if (formula == FlopFormula::kNarayanan)
    return 96.0 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
  const double a = model.heads;
  const double groups = model.kv_groups > 0 ? model.kv_groups : model.heads;
  const double q_ratio = a * model.head_dim / h;
  const double ffn = model.is_moe() ? model.expert_ffn_hidden : model.ffn_hidden;
  const double routed = model.is_moe() ? model.top_k : 1.0;
  const double gated = model.gated_ffn ? 1.5 : 1.0;
  return 12.0 * B * s * L * h * h *
         ((1 + groups / a + s / h) * q_ratio + ffn / h * routed * gated + V / (2 * L * h));
}

double step_seconds(const MeasuredFigure& f, const ModelSpec& model, const JobSpec& job,
                    double profile_peak_flops_per_s, const std::string& where) {
  if (!(f.value > 0)) throw InputError(where + ": the measured value must be a positive number");
  switch (f.unit) {
    case FigureUnit::kStepSeconds:
      return f.value;
    case FigureUnit::kTokensPerSecondPerGpu:
      return static_cast<double>(job.gbs) * job.seq / (f.value * job.gpus);
    case FigureUnit::kTflopsPerGpu:
      return formula_step_flops(model, job.gbs, job.seq, f.formula, f.padded_vocab) /
             (f.value * 1e12 * job.gpus);
    case FigureUnit::kMfu: {
      if (f.value > 1) throw InputError(where + ": mfu is a fraction (0.42), not a percentage");
      const double peak = f.peak_tflops > 0 ? f.peak_tflops * 1e12 : profile_peak_flops_per_s;
      return formula_step_flops(model, job.gbs, job.seq, f.formula, f.padded_vocab) /
             (f.value * peak * job.gpus);
    }
  }
  return f.value;
}

}  // namespace parplan
