// The models torchtitan main builds: its registered flavors, matched by
// shape. Dimensions, RoPE bases and weight tying as the model registries
// spell them at pytorch/torchtitan b5bcd76c: torchtitan/models/llama3/
// __init__.py (dim, n_layers, n_heads, n_kv_heads and the FFN width its
// ffn_dim_multiplier/multiple_of give) and torchtitan/models/qwen3/
// __init__.py (_0_6b ... _32b, _30b_a3b, _235b_a22b; head_dim 128, Q/K RMS
// norms, softmax routing over 128 experts, top 8, no shared expert). The
// recipes are the config_registry.py functions of the same flavors; a
// flavor without one starts from its family's nearest recipe and names its
// own Hugging Face assets.
#include <cmath>
#include <sstream>
#include <string>

#include "src/emit/emit_internal.h"
#include "src/io/data_paths.h"
#include "src/io/model_loader.h"

namespace parplan::emit_detail {
namespace {

constexpr TorchtitanFlavor kFlavors[] = {
    // family, flavor, recipe, assets, layers, hidden, heads, kv, head_dim, ffn, experts, top_k,
    // expert_ffn, tied, rope_theta, qk_norm, rope_scaling (the llama3 flavors' ComplexRoPE
    // scaling="llama" at its default factor 8: models/llama3/__init__.py and
    // models/common/rope.py at b5bcd76c)
    {"llama3", "8B", "llama3_8b", "./assets/hf/Llama-3.1-8B", 32, 4096, 32, 8, 128, 14336, 0, 0, 0, false,
     500000, false, 8.0},
    {"llama3", "70B", "llama3_70b", "./assets/hf/Llama-3.1-70B", 80, 8192, 64, 8, 128, 28672, 0, 0, 0, false,
     500000, false, 8.0},
    {"llama3", "405B", "llama3_405b", "./assets/hf/Llama-3.1-405B", 126, 16384, 128, 8, 128, 53248, 0, 0, 0,
     false, 500000, false, 8.0},
    {"qwen3", "0.6B", "qwen3_0_6b", "./assets/hf/Qwen3-0.6B", 28, 1024, 16, 8, 128, 3072, 0, 0, 0, true, 1e6,
     true},
    {"qwen3", "1.7B", "qwen3_1_7b", "./assets/hf/Qwen3-1.7B", 28, 2048, 16, 8, 128, 6144, 0, 0, 0, true, 1e6,
     true},
    {"qwen3", "4B", "qwen3_1_7b", "./assets/hf/Qwen3-4B", 36, 2560, 32, 8, 128, 9728, 0, 0, 0, true, 1e6,
     true},
    {"qwen3", "8B", "qwen3_14b", "./assets/hf/Qwen3-8B", 36, 4096, 32, 8, 128, 12288, 0, 0, 0, false, 1e6,
     true},
    {"qwen3", "14B", "qwen3_14b", "./assets/hf/Qwen3-14B", 40, 5120, 40, 8, 128, 17408, 0, 0, 0, false, 1e6,
     true},
    {"qwen3", "32B", "qwen3_32b", "./assets/hf/Qwen3-32B", 64, 5120, 64, 8, 128, 25600, 0, 0, 0, false, 1e6,
     true},
    {"qwen3", "30B-A3B", "qwen3_30b_a3b", "./assets/hf/Qwen3-30B-A3B", 48, 2048, 32, 4, 128, 0, 128, 8, 768,
     false, 1e6, true},
    {"qwen3", "235B-A22B", "qwen3_30b_a3b", "./assets/hf/Qwen3-235B-A22B", 94, 4096, 64, 4, 128, 0, 128, 8,
     1536, false, 5e6, true},
};

// The vocabulary every flavor of a family fixes (vocab_size in
// torchtitan/models/llama3/__init__.py and qwen3/__init__.py at b5bcd76c;
// v0.2.2's TransformerModelArgs.vocab_size, not read from the tokenizer):
// another vocabulary is another embedding and output head.
long long family_vocab(const TorchtitanFlavor& f) {
  return std::string(f.family) == "qwen3" ? 151936 : 128256;
}

bool same_shape(const ModelSpec& m, const TorchtitanFlavor& f) {
  if (m.vocab != family_vocab(f)) return false;
  const int kv = m.kv_groups > 0 ? m.kv_groups : m.heads;
  const bool block = m.gated_ffn && m.norm == NormKind::kRmsNorm && m.position == PositionKind::kRope &&
                     !m.linear_bias && !m.uses_mla();
  const int head_dim = m.head_dim > 0 ? m.head_dim : (m.heads > 0 ? m.hidden / m.heads : 0);
  if (!block || m.layers != f.layers || m.hidden != f.hidden || m.heads != f.heads || kv != f.kv_heads ||
      head_dim != f.head_dim)
    return false;
  if (f.experts == 0) return !m.is_moe() && m.ffn_hidden == f.ffn;
  // Every layer an MoE layer of routed experts only.
  return m.is_moe() && m.experts == f.experts && m.top_k == f.top_k && m.expert_ffn_hidden == f.expert_ffn &&
         m.shared_experts == 0 && m.first_dense_layers == 0 && m.moe_layer_freq <= 1;
}
}  // namespace

const TorchtitanFlavor* torchtitan_flavor(const ModelSpec& model) {
  for (const TorchtitanFlavor& f : kFlavors)
    if (same_shape(model, f)) return &f;
  return nullptr;
}

std::string torchtitan_llama3_flavor(const ModelSpec& model) {
  const TorchtitanFlavor* f = torchtitan_flavor(model);
  return f != nullptr && std::string(f->family) == "llama3" ? f->name : "";
}

std::vector<std::string> torchtitan_flavor_differences(const ModelSpec& m, const TorchtitanFlavor& f) {
  std::vector<std::string> out;
  const std::string flavor = std::string(f.family) + " " + f.name;
  if (std::abs(m.rope_theta - f.rope_theta) > 1e-6 * f.rope_theta)
    out.push_back("RoPE base " + std::to_string(static_cast<long long>(m.rope_theta)) + " (torchtitan's " +
                  flavor + " uses " + std::to_string(static_cast<long long>(f.rope_theta)) + ")");
  if (std::abs(m.rope_scaling_factor - f.rope_scaling) > 1e-9) {
    const auto factor = [](double x) { return (std::ostringstream() << x).str(); };
    out.push_back((m.rope_scaling_factor > 0 ? "RoPE scaling factor " + factor(m.rope_scaling_factor)
                                             : std::string("no RoPE scaling")) +
                  " (torchtitan's " + flavor +
                  (f.rope_scaling > 0 ? " applies Llama 3.1's factor " + factor(f.rope_scaling) + ")"
                                      : " applies none)"));
  }
  if (m.qk_norm != f.qk_norm)
    out.push_back(std::string(m.qk_norm ? "" : "no ") + "query/key normalisation (torchtitan's " + flavor +
                  (f.qk_norm ? " has it)" : " has none)"));
  if (m.tied_embeddings != f.tied)
    out.push_back(std::string(m.tied_embeddings ? "tied" : "untied") + " embeddings (torchtitan's " + flavor +
                  (f.tied ? " ties them)" : " unties them)"));
  if (m.qkv_bias) out.push_back("Q/K/V biases (torchtitan's " + flavor + " has none)");
  if (m.routed_scaling_factor > 0)
    out.push_back("a routed-expert output scale (torchtitan's " + flavor + " has none)");
  if (m.dropout > 0) out.push_back("dropout (torchtitan's " + flavor + " has none)");
  return out;
}

}  // namespace parplan::emit_detail

namespace parplan {

std::pair<std::string, std::string> torchtitan_family_flavor(const ModelSpec& model) {
  const emit_detail::TorchtitanFlavor* f = emit_detail::torchtitan_flavor(model);
  if (f == nullptr) return {};
  return {f->family, f->name};
}

std::string torchtitan_catalog_model(const std::string& family, const std::string& flavor) {
  for (const std::string& name : catalog_names("models")) {
    try {
      const ModelSpec model = load_model(name);
      const emit_detail::TorchtitanFlavor* f = emit_detail::torchtitan_flavor(model);
      // The flavor's own RoPE base and weight tying too: a catalog model
      // that only shares the shape is another model.
      if (f != nullptr && family == f->family && flavor == f->name &&
          emit_detail::torchtitan_flavor_differences(model, *f).empty())
        return name;
    } catch (const std::exception&) {
      // A catalog file that does not load is no match.
    }
  }
  return "";
}

}  // namespace parplan
