#include "src/io/measured_figure.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "cost/parameters.h"
#include "src/io/input_error.h"

namespace parplan {

std::optional<double> parse_printed_number(const std::string& text) {
  static const std::regex kDecimal(R"(-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)");
  // A figure is a few characters; std::regex recurses per character.
  if (text.size() > 64 || !std::regex_match(text, kDecimal)) return std::nullopt;
  errno = 0;
  const double v = std::strtod(text.c_str(), nullptr);
  if (errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<int> parse_printed_int(const std::string& text) {
  const std::size_t digits = !text.empty() && text[0] == '-' ? 1 : 0;
  if (text.size() == digits || text.size() > digits + 10) return std::nullopt;
  for (std::size_t i = digits; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (v < INT_MIN || v > INT_MAX) return std::nullopt;
  return static_cast<int>(v);
}

double figure_ceiling(FigureUnit unit) {
  switch (unit) {
    case FigureUnit::kStepSeconds:
      return kMaxStepSeconds;
    case FigureUnit::kTokensPerSecondPerGpu:
      return kMaxTokensPerSecondPerGpu;
    case FigureUnit::kTflopsPerGpu:
      return kMaxTflopsPerGpu;
    case FigureUnit::kMfu:
      return 1;
  }
  return kMaxStepSeconds;
}

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
  if (text == "megatron_causal") return FlopFormula::kMegatronCausal;
  throw InputError(where +
                   " must name the FLOP formula of the figure: megatron (Megatron-LM before 2025-03), "
                   "megatron_causal (from 2025-03) or narayanan (got '" +
                   text + "')");
}

namespace {
// Megatron-LM's num_floating_point_operations as of 8873b55 onwards
// (transformer_flops in megatron/training/training.py @ 1e05700, 2025-05):
// per token 3 (forward, two backward GEMMs) x 2 (FMA) x every weight's
// rows x columns, the attention core over half the square.
double megatron_causal_flops_per_token(const ModelSpec& m, double s, double V) {
  const double h = m.hidden, a = m.heads;
  const double mtp = m.mtp_layers;
  const double layers = m.layers + mtp;
  const int moe_layers = m.is_moe() ? moe_layer_count(m) : 0;
  // MTP layers take the kind of the last layer (last_layer_is_moe).
  const bool last_is_moe = m.is_moe() && is_moe_layer(m, m.layers - 1);
  const double n_moe = moe_layers + (last_is_moe ? mtp : 0.0);
  const double n_dense = layers - n_moe;
  const double gated = m.gated_ffn ? 1.5 : 1.0;
  const double shared = m.is_moe() ? static_cast<double>(m.shared_experts) * m.expert_ffn_hidden : 0.0;
  const double routed = m.is_moe() ? static_cast<double>(m.expert_ffn_hidden) * m.top_k : 0.0;
  const double mlp = 12.0 * h * (m.ffn_hidden * n_dense + (routed + shared) * n_moe) * gated;
  double attention = 0;
  if (m.uses_mla()) {
    // ModelSpec::head_dim is the whole query/key width, Megatron's
    // qk_head_dim its part without the rotary one.
    const double rope = m.qk_rope_head_dim, qk = m.head_dim - rope, v = m.v_head_dim;
    const double q_term = m.q_lora_rank > 0 ? m.q_lora_rank * (h + a * (qk + rope) + 1) : h * a * (qk + rope);
    attention = 6.0 * layers *
                (q_term + m.kv_lora_rank * (h + a * (qk + v) + 1) + h * rope + a * v * h +
                 s * a * (qk + rope) / 2 + s * a * v / 2);
  } else {
    const double groups = m.kv_groups > 0 ? m.kv_groups : a;
    const double q_ratio = a * m.head_dim / h;
    attention = 12.0 * layers * h * h * (1 + groups / a + s / h / 2) * q_ratio;
  }
  const double mtp_projections = 6.0 * mtp * (3 * h + 2 * h * h);
  const double logits = 6.0 * h * V * (mtp + 1);
  return mlp + attention + mtp_projections + logits;
}
}  // namespace

double formula_step_flops(const ModelSpec& model, int gbs, int seq, FlopFormula formula,
                          double padded_vocab) {
  const double B = gbs, s = seq, L = model.layers, h = model.hidden;
  const double V = padded_vocab > 0 ? padded_vocab : static_cast<double>(model.vocab);
  if (formula == FlopFormula::kMegatronCausal) return B * s * megatron_causal_flops_per_token(model, s, V);
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
  const auto number = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::string(buf);
  };
  double step = f.value;
  switch (f.unit) {
    case FigureUnit::kStepSeconds:
      break;
    case FigureUnit::kTokensPerSecondPerGpu:
      step = static_cast<double>(job.gbs) * job.seq / (f.value * job.gpus);
      break;
    case FigureUnit::kTflopsPerGpu:
      step = formula_step_flops(model, job.gbs, job.seq, f.formula, f.padded_vocab) /
             (f.value * 1e12 * job.gpus);
      break;
    case FigureUnit::kMfu: {
      if (f.value > 1) throw InputError(where + ": mfu is a fraction (0.42), not a percentage");
      const double peak = f.peak_tflops > 0 ? f.peak_tflops * 1e12 : profile_peak_flops_per_s;
      step = formula_step_flops(model, job.gbs, job.seq, f.formula, f.padded_vocab) /
             (f.value * peak * job.gpus);
      break;
    }
  }
  if (!(step >= kMinStepSeconds && step <= kMaxStepSeconds))
    throw InputError(where + ": the measured figure gives a step of " + number(step) + " s, outside " +
                     number(kMinStepSeconds) + " to " + number(kMaxStepSeconds) +
                     " s (docs/calibrate.md, \"Measured figures\"); check the value and its unit");
  return step;
}

}  // namespace parplan
