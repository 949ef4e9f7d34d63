// The architecture and optimizer arguments of pretrain_gpt.py (Megatron-LM and
// Megatron-DeepSpeed), and what of a model no launch file parplan writes can
// express. Flag names and defaults as read in NVIDIA/Megatron-LM core_r0.13.0
// (73a28a1078a8, megatron/training/arguments.py) and deepspeedai/Megatron-DeepSpeed
// main (4efb479d5317, megatron/arguments.py); line numbers are at those commits.
#include <cmath>
#include <cstdio>
#include <limits>

#include "src/emit/emit_internal.h"

namespace parplan::emit_detail {
namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

void opt(std::vector<std::string>& out, const char* flag, const std::string& value) {
  out.emplace_back(flag);
  out.push_back(value);
}

bool swiglu(const ModelSpec& m) { return m.gated_ffn && m.activation == Activation::kSilu; }

// Both engines' defaults for what is not passed: dropout 0.1 (Megatron
// arguments.py:1665-1667, Megatron-DeepSpeed :768-770), rotary base 10000
// (:1400; :635), norm epsilon 1e-5 (:1433; :652), GeLU (erf) FFN. Every
// value is passed, so the files read as the model is.
void shared_model_args(const ModelSpec& m, std::vector<std::string>& out) {
  if (swiglu(m)) out.emplace_back("--swiglu");  // :1448; :670
  // GPT-2's gelu_new is the tanh approximation (--openai-gelu, :1442; :664).
  if (!m.gated_ffn && m.activation == Activation::kGeluTanh) out.emplace_back("--openai-gelu");
  if (!m.tied_embeddings) out.emplace_back("--untie-embeddings-and-output-weights");  // :1456; :680
  opt(out, "--attention-dropout", number(m.dropout));
  opt(out, "--hidden-dropout", number(m.dropout));
}

}  // namespace

std::vector<std::string> megatron_model_args(const ModelSpec& m) {
  std::vector<std::string> out;
  if (m.position == PositionKind::kRope) {
    opt(out, "--rotary-base", str(std::llround(m.rope_theta)));                            // :1400, type=int
    if (m.rotary_fraction < 1.0) opt(out, "--rotary-percent", number(m.rotary_fraction));  // :1402
    if (m.rope_scaling_factor > 0) {
      out.emplace_back("--use-rope-scaling");  // :1408
      opt(out, "--rope-scaling-factor", number(m.rope_scaling_factor));
    }
  }
  opt(out, "--norm-epsilon", number(m.norm_epsilon));  // :1433
  // --add-qkv-bias (:1909) adds Q/K/V biases to a model without linear biases.
  if (m.qkv_bias && !m.linear_bias) out.emplace_back("--add-qkv-bias");
  if (m.qk_norm) out.emplace_back("--qk-layernorm");  // :2690
  shared_model_args(m, out);
  return out;
}

std::vector<std::string> megatron_deepspeed_model_args(const ModelSpec& m) {
  std::vector<std::string> out;
  if (m.position == PositionKind::kRope) {
    // :635 --rotary-position-embeddings-theta (dest rope_theta, type=int).
    opt(out, "--rotary-position-embeddings-theta", str(std::llround(m.rope_theta)));
    if (m.rotary_fraction < 1.0) opt(out, "--rotary-percent", number(m.rotary_fraction));  // :638
  }
  opt(out, "--layernorm-epsilon", number(m.norm_epsilon));  // :652
  shared_model_args(m, out);
  return out;
}

std::vector<std::string> optimizer_args(const Plan& plan) {
  std::vector<std::string> out;
  opt(out, "--optimizer", plan.job.optimizer == Optimizer::kSgd ? "sgd" : "adam");
  opt(out, "--weight-decay", number(kWeightDecay));  // default 0.01 (:1669; :772)
  if (plan.job.optimizer != Optimizer::kSgd) {
    // Defaults 0.9 / 0.999 / 1e-8 (:1680-1686; :783-789): beta2 is set so
    // that it agrees with ds_config.json.
    opt(out, "--adam-beta1", number(kAdamBeta1));
    opt(out, "--adam-beta2", number(kAdamBeta2));
    opt(out, "--adam-eps", number(kAdamEps));
  }
  return out;
}

std::vector<std::string> engine_architecture_problems(const ModelSpec& m, Engine engine) {
  std::vector<std::string> out;
  const std::string name = engine_name(engine);
  auto no_flag = [&](bool bad, const std::string& what) {
    if (bad) out.push_back(name + ": the model has " + what + ", which " + name + " has no flag for.");
  };
  // No model of DeepSpeed's has MLA: refused before any plan is searched.
  if ((engine == Engine::kMegatronDeepSpeed || engine == Engine::kDeepSpeed) && m.uses_mla())
    out.push_back(
        name + ": multi-latent attention has no Megatron-DeepSpeed or DeepSpeed model; use --emit megatron.");
  if (engine == Engine::kMegatronDeepSpeed) {
    no_flag(m.qkv_bias && !m.linear_bias, "biases on the Q/K/V projections only");
    no_flag(m.qk_norm, "query/key normalisation");
    no_flag(m.rope_scaling_factor > 0, "Llama 3.1 RoPE scaling");
  } else if (engine == Engine::kTorchtitan) {
    // The registered flavor of the model's shape fixes the rest
    // (src/emit/torchtitan_models.cpp); no flavor is an engine rule.
    if (const emit_detail::TorchtitanFlavor* f = emit_detail::torchtitan_flavor(m))
      for (const std::string& what : emit_detail::torchtitan_flavor_differences(m, *f)) no_flag(true, what);
  }
  return out;
}

std::vector<std::string> architecture_problems(const ModelSpec& m, Engine engine) {
  std::vector<std::string> out;
  const std::string name = engine_name(engine);
  auto no_flag = [&](bool bad, const std::string& what) {
    if (bad) out.push_back(name + ": the model has " + what + ", which " + name + " has no flag for.");
  };
  if (!m.unmodelled.empty()) {
    out.push_back(name + ": the model has " + m.unmodelled +
                  ", which parplan does not model; a launch file would silently change the model "
                  "(describe it in a model YAML without them to plan an approximation).");
  }
  // Only SwiGLU among gated FFNs (--quick-geglu is not Gemma's tanh GeGLU).
  no_flag(m.gated_ffn && m.activation != Activation::kSilu, "a GeGLU FFN");
  no_flag(!m.gated_ffn && m.activation == Activation::kSilu, "a non-gated SiLU FFN");
  no_flag(m.position == PositionKind::kRope && std::abs(m.rope_theta - std::round(m.rope_theta)) > 1e-9,
          "a non-integer RoPE base (" + number(m.rope_theta) + "; the rotary base flag is an int)");
  // The window is checked by the caller, which knows the sequence
  // (emit_launch_files: a window covering it is full causal attention).
  const std::string unwritable = unwritable_features(m, std::numeric_limits<int>::max());
  no_flag(!unwritable.empty(), unwritable);
  for (std::string& problem : engine_architecture_problems(m, engine)) out.push_back(std::move(problem));
  return out;
}

}  // namespace parplan::emit_detail

namespace parplan {

std::string unwritable_features(const ModelSpec& model, int seq) {
  if (model.sliding_window <= 0 || model.sliding_window >= seq) return "";
  std::string what = "sliding-window attention (" + std::to_string(model.sliding_window) + " tokens";
  if (model.full_attention_layers > 0)
    what += " on " + std::to_string(model.layers - model.full_attention_layers) + " of " +
            std::to_string(model.layers) + " layers";
  return what + ")";
}

}  // namespace parplan
