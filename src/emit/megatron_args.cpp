// The pretrain_gpt.py command lines of Megatron-LM (main) and Megatron-DeepSpeed.
// Flag names as megatron/training/arguments.py (Megatron-LM) and
// megatron/arguments.py (deepspeedai/Megatron-DeepSpeed) spell them.
#include <cstdio>
#include <sstream>

#include "cost/memory.h"
#include "cost/tp_comm_overlap.h"
#include "src/emit/emit_internal.h"
#include "src/emit/engine_capabilities.h"
#include "src/io/job_loader.h"
#include "src/io/pipeline_layout_text.h"

namespace parplan::emit_detail {
namespace {

class Args {
 public:
  void flag(const std::string& name) { tokens_.push_back(name); }
  void opt(const std::string& name, long long value) { opt(name, str(value)); }
  void opt(const std::string& name, const std::string& value) {
    tokens_.push_back(name);
    tokens_.push_back(value);
  }
  void append(const std::vector<std::string>& tokens) {
    tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  }
  std::vector<std::string> take() { return std::move(tokens_); }

 private:
  std::vector<std::string> tokens_;
};

int kv_groups(const ModelSpec& m) { return m.kv_groups > 0 ? m.kv_groups : m.heads; }

// The attention head width when it is not hidden / heads (--kv-channels).
int explicit_head_dim(const ModelSpec& m) {
  if (m.head_dim <= 0 || m.heads <= 0) return 0;
  return m.head_dim * m.heads == m.hidden ? 0 : m.head_dim;
}

// Learned position tables must cover the sequence (a rule); RoPE has no table,
// and Megatron still asserts max_position_embeddings >= seq_length.
int max_positions(const Plan& p) {
  if (p.model.position == PositionKind::kRope) return std::max(p.model.max_positions, p.job.seq);
  return p.model.max_positions > 0 ? p.model.max_positions : p.job.seq;
}

// --moe-layer-freq: an int N (every N-th layer) or a Python list pattern, which
// arguments.py moe_freq_type evaluates (digits, commas, brackets, + and * only).
// A loss weight as the engines' argparse reads it (float): 0.02, 1e-04.
std::string loss_weight(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string moe_layer_pattern(const ModelSpec& m) {
  const int freq = std::max(1, m.moe_layer_freq);
  if (m.first_dense_layers <= 0) return str(freq);
  std::ostringstream out;
  out << "[";
  for (int layer = 0; layer < m.layers; ++layer) {
    const bool moe = layer >= m.first_dense_layers && (layer - m.first_dense_layers) % freq == 0;
    out << (layer ? "," : "") << (moe ? 1 : 0);
  }
  out << "]";
  return out.str();
}

}  // namespace

bool megatron_uses_fsdp(const Plan& plan) { return plan.config.zero >= 2; }

std::vector<std::string> megatron_overlap_args(const Plan& plan) {
  const ParallelConfig& c = plan.config;
  std::vector<std::string> out;
  if (!c.overlap_grad_reduce) return out;
  out.emplace_back("--overlap-grad-reduce");
  // The cost model hides the sharded optimizer's parameter all-gather behind
  // the next forward (data_parallel_cost.cpp) whenever gradients overlap;
  // Megatron does that with --overlap-param-gather, which validate_args
  // allows only with the distributed optimizer and --overlap-grad-reduce
  // (arguments.py:594-598 at core_r0.13.0); --use-distributed-optimizer is
  // written for every zero >= 1.
  if (c.zero >= 1) out.emplace_back("--overlap-param-gather");
  return out;
}

bool megatron_needs_single_connection(const Plan& plan) {
  // validate_args asserts CUDA_DEVICE_MAX_CONNECTIONS == "1" when tp > 1 or
  // cp > 1 (before Blackwell), except under Megatron-FSDP, which wants it unset.
  const ParallelConfig& c = plan.config;
  return (c.tp > 1 || c.cp > 1) && !megatron_uses_fsdp(plan);
}

namespace {
// MoE dispatch, routing and balancing (TransformerConfig fields, generated
// into arguments.py by ArgumentGroupFactory; --moe-router-load-balancing-type
// and --moe-aux-loss-coeff in _add_moe_args).
void megatron_moe_args(const Plan& plan, Args& a) {
  const ModelSpec& m = plan.model;
  const ParallelConfig& c = plan.config;
  // One kernel over the local experts (what cost/moe.h models).
  a.flag("--moe-grouped-gemm");
  const bool drops = plan.job.capacity_factor > 0;
  // Token dropping runs on the alltoall dispatcher even without expert
  // parallelism: its drop-and-pad path is the one costed (fixed splits, no
  // host wait; token_dispatcher.py:399-448 at core_r0.13.0, where the
  // default allgather dispatcher has none), and Megatron-Bridge's
  // apply_moe_token_drop asserts alltoall
  // (src/megatron/bridge/training/utils/moe_token_drop.py).
  if (c.ep > 1 || c.etp > 1 || drops) {
    // arguments.py: "We recommend using 'alltoall' when applying expert
    // parallelism"; the hierarchical all-to-all is the flex dispatcher on
    // DeepEP (--moe-enable-deepep, arguments.py:2794 at core_r0.13.0; later
    // releases spell it --moe-flex-dispatcher-backend deepep).
    a.opt("--moe-token-dispatcher-type", c.a2a_hierarchical ? "flex" : "alltoall");
    if (c.a2a_hierarchical) a.flag("--moe-enable-deepep");
  }
  // No EP all-to-all overlap: --overlap-moe-expert-parallel-comm arrives in
  // core_v0.14.0, and the capability table refuses such plans for this target.
  if (m.aux_loss_free) {
    // DeepSeek-V3 (report sec. 2.1.2 and 4.2): sigmoid scores, a per-expert
    // bias instead of the auxiliary loss, a sequence-wise balance loss with
    // alpha = 0.0001.
    a.opt("--moe-router-score-function", "sigmoid");
    a.flag("--moe-router-enable-expert-bias");
    a.opt("--moe-router-load-balancing-type", "seq_aux_loss");
    a.opt("--moe-aux-loss-coeff", m.aux_loss_coeff > 0 ? loss_weight(m.aux_loss_coeff) : "1e-4");
  } else {
    // The model's own weight, else arguments.py --moe-aux-loss-coeff help:
    // "a starting value of 1e-2 is recommended".
    a.opt("--moe-router-load-balancing-type", "aux_loss");
    a.opt("--moe-aux-loss-coeff", m.aux_loss_coeff > 0 ? loss_weight(m.aux_loss_coeff) : "1e-2");
  }
  if (m.route_groups > 0 && m.route_group_topk > 0) {
    a.opt("--moe-router-num-groups", m.route_groups);
    a.opt("--moe-router-group-topk", m.route_group_topk);
  }
  if (m.routed_scaling_factor > 0) {
    // Megatron's default (None) leaves the routed output unscaled
    // (transformer_config.py:434, arguments.py:2762 at core_r0.13.0).
    char scale[32];
    std::snprintf(scale, sizeof scale, "%g", m.routed_scaling_factor);
    a.opt("--moe-router-topk-scaling-factor", std::string(scale));
  }
  if (m.mtp_layers > 0) a.opt("--mtp-num-layers", m.mtp_layers);
  if (drops) {
    // arguments.py:2801-2804 at core_r0.13.0. The drop policy keeps its
    // default (probs): the cost model prices how many tokens an expert
    // keeps, not which. The router's load balancing is aux_loss or
    // seq_aux_loss above, as TransformerConfig requires with a capacity
    // factor (transformer_config.py:743-749).
    char factor[32];
    std::snprintf(factor, sizeof factor, "%g", plan.job.capacity_factor);
    a.opt("--moe-expert-capacity-factor", factor);
    if (plan.job.pad_to_capacity) a.flag("--moe-pad-expert-input-to-capacity");
  }
}
}  // namespace

std::vector<std::string> megatron_args(const Plan& plan) {
  const ModelSpec& m = plan.model;
  const ParallelConfig& c = plan.config;
  Args a;
  // Model shape.
  a.opt("--num-layers", m.layers);
  a.opt("--hidden-size", m.hidden);
  a.opt("--ffn-hidden-size", m.ffn_hidden > 0 ? m.ffn_hidden : 4 * m.hidden);
  a.opt("--num-attention-heads", m.heads);
  if (kv_groups(m) != m.heads) {
    a.flag("--group-query-attention");
    a.opt("--num-query-groups", kv_groups(m));
  }
  if (const int d = explicit_head_dim(m); d > 0 && !m.uses_mla()) a.opt("--kv-channels", d);
  a.opt("--seq-length", plan.job.seq);
  a.opt("--max-position-embeddings", max_positions(plan));
  a.opt("--position-embedding-type", m.position == PositionKind::kRope ? "rope" : "learned_absolute");
  a.opt("--normalization", m.norm == NormKind::kRmsNorm ? "RMSNorm" : "LayerNorm");
  if (!m.linear_bias) a.flag("--disable-bias-linear");
  a.append(megatron_model_args(m));
  if (m.is_moe()) {
    a.opt("--num-experts", m.experts);
    a.opt("--moe-router-topk", std::max(1, m.top_k));
    if (m.expert_ffn_hidden > 0) a.opt("--moe-ffn-hidden-size", m.expert_ffn_hidden);
    if (m.shared_experts > 0) {
      const int width = m.expert_ffn_hidden > 0 ? m.expert_ffn_hidden : m.ffn_hidden;
      a.opt("--moe-shared-expert-intermediate-size", static_cast<long long>(m.shared_experts) * width);
    }
    if (m.moe_layer_freq > 1 || m.first_dense_layers > 0) a.opt("--moe-layer-freq", moe_layer_pattern(m));
    megatron_moe_args(plan, a);
  }
  if (m.uses_mla()) {
    // TransformerConfig / MLATransformerConfig fields (arguments.py _add_mla_args):
    // --qk-head-dim is the non-rotary part of a query/key head.
    a.flag("--multi-latent-attention");
    if (m.q_lora_rank > 0) a.opt("--q-lora-rank", m.q_lora_rank);
    a.opt("--kv-lora-rank", m.kv_lora_rank);
    a.opt("--qk-head-dim", m.head_dim - m.qk_rope_head_dim);
    a.opt("--qk-pos-emb-head-dim", m.qk_rope_head_dim);
    a.opt("--v-head-dim", m.v_head_dim);
  }
  // Parallelism.
  a.opt("--tensor-model-parallel-size", c.tp);
  a.opt("--pipeline-model-parallel-size", c.pp);
  a.opt("--context-parallel-size", c.cp);
  ParallelConfig split = c;
  if (c.pipeline_layout) {
    // The layout gives vp (its stages over pp) and every stage's layers:
    // arguments.py refuses the vp and first/last-stage flags beside it.
    a.opt("--pipeline-model-parallel-layout", pipeline_layout_text(plan.job.pipeline_layout, m.mtp_layers));
    split = ParallelConfig{};
  } else {
    megatron_split(c, split);
  }
  const bool uneven = split.first_stage_layers > 0 || split.last_stage_layers > 0;
  if (c.vp > 1 && !c.pipeline_layout) {
    // validate_args: uneven splits must give the virtual degree instead of the
    // layers per virtual stage.
    if (uneven) {
      a.opt("--num-virtual-stages-per-pipeline-rank", c.vp);
    } else {
      a.opt("--num-layers-per-virtual-pipeline-stage", m.layers / (c.pp * c.vp));
    }
  }
  if (split.first_stage_layers > 0) a.opt("--decoder-first-pipeline-num-layers", split.first_stage_layers);
  if (split.last_stage_layers > 0) a.opt("--decoder-last-pipeline-num-layers", split.last_stage_layers);
  if (c.sp) a.flag("--sequence-parallel");
  if (m.is_moe()) {
    a.opt("--expert-model-parallel-size", c.ep);
    a.opt("--expert-tensor-parallel-size", c.etp);
  }
  if (c.zero >= 1) a.flag("--use-distributed-optimizer");
  // 2-byte master remainders (the plan was costed with them).
  if (plan.job.precision_aware_optimizer) a.flag("--use-precision-aware-optimizer");
  // Costed as overlapped only with tp > 1 and sp (validate_args asserts sp,
  // arguments.py:855-856 at core_r0.13.0).
  if (tp_comm_overlapped(plan.job, c)) a.flag("--tp-comm-overlap");
  if (megatron_uses_fsdp(plan)) {
    // Megatron FSDP as core_r0.13.0 spells it (arguments.py:2356-2361,
    // validate_args :646-660): --use-custom-fsdp beside the distributed
    // optimizer, optim_grads = ZeRO-2, optim_grads_params = ZeRO-3, without
    // gradient-accumulation fusion; checkpoints stay torch_dist. (Later
    // releases rename it --use-megatron-fsdp with --ckpt-format fsdp_dtensor.)
    a.flag("--use-custom-fsdp");
    a.opt("--data-parallel-sharding-strategy", c.zero == 2 ? "optim_grads" : "optim_grads_params");
    a.flag("--no-gradient-accumulation-fusion");
  }
  a.append(megatron_overlap_args(plan));
  // overlap_p2p_comm is Megatron's default with interleaving; a plan modelled
  // without it says so.
  if (c.vp > 1 && !c.overlap_p2p) a.flag("--no-overlap-p2p-communication");
  // Batch.
  a.opt("--micro-batch-size", c.mbs);
  a.opt("--global-batch-size", c.gbs);
  // Recomputation. TransformerConfig: full needs a method and a layer count;
  // selective takes neither.
  if (c.recompute == Recompute::kSelective) {
    a.opt("--recompute-granularity", "selective");
    // Megatron's default list is core_attn (transformer_config.py l. 813-814
    // at core_r0.13.0); any other list is written out, an empty one too.
    if (!(plan.job.recompute_modules == RecomputeModules{})) {
      a.flag("--recompute-modules");
      std::istringstream names(recompute_modules_text(plan.job.recompute_modules));
      for (std::string name; names >> name;) a.flag(name);
    }
  } else if (c.recompute == Recompute::kFull) {
    a.opt("--recompute-granularity", "full");
    // The cost model's recompute_layers counts per model chunk, as the block
    // method does: TransformerBlock (one per chunk) recomputes its first
    // recompute_num_layers layers (transformer_block.py:439-456 at core_r0.13.0).
    if (c.recompute_layers > 0) {
      a.opt("--recompute-method", "block");
      a.opt("--recompute-num-layers", c.recompute_layers);
    } else {
      a.opt("--recompute-method", "uniform");
      a.opt("--recompute-num-layers", 1);
    }
  }
  // Precision and attention.
  switch (plan.job.precision) {
    case Precision::kFp16:
      a.flag("--fp16");
      break;
    case Precision::kFp8:
      a.flag("--bf16");
      a.opt("--fp8-format", "hybrid");
      // The scaling the plan was costed with: arguments.py:1184-1187 at
      // core_r0.13.0 (choices tensorwise, delayed, mxfp8, blockwise);
      // tensorwise is Transformer Engine's per-tensor current scaling.
      a.opt("--fp8-recipe", plan.job.fp8_scaling == Fp8Scaling::kCurrent ? "tensorwise" : "delayed");
      break;
    case Precision::kBf16:
      a.flag("--bf16");
      break;
  }
  // The gradient dtype the plan was costed with (gradient_bytes_per_param:
  // buffer bytes and data-parallel traffic). Megatron keeps fp32 main grads
  // under --bf16 (fp8 trains under --bf16 too) unless --grad-reduce-in-bf16,
  // and 16-bit ones under --fp16 unless --accumulate-allreduce-grads-in-fp32
  // (arguments.py:683-689, 2204, 2225 at core_r0.13.0).
  const double grad_bytes =
      gradient_bytes_per_param(plan.job.precision, c.zero, plan.job.grad_reduce_for(c.zero));
  if (plan.job.precision == Precision::kFp16) {
    if (grad_bytes > 2.0) a.flag("--accumulate-allreduce-grads-in-fp32");
  } else if (grad_bytes <= 2.0) {
    a.flag("--grad-reduce-in-bf16");
  }
  // Context parallelism needs flash or fused attention (engine_rules.cpp
  // refuses unfused with cp > 1).
  a.opt("--attention-backend", megatron_attention_backend(plan.job, c));
  // A plan costed with Transformer Engine's in-place cross-entropy (2 bytes
  // per logit) runs it (arguments.py:1897-1902 at core_r0.13.0). Megatron-LM
  // main refuses the te variant since 168cb15d70 ("stability issues").
  if (plan.job.cross_entropy == CrossEntropy::kTeInPlace) {
    a.flag("--cross-entropy-loss-fusion");
    a.opt("--cross-entropy-fusion-impl", "te");
  }
  a.append(optimizer_args(plan));
  return a.take();
}

std::vector<std::string> megatron_deepspeed_args(const Plan& plan) {
  const ModelSpec& m = plan.model;
  const ParallelConfig& c = plan.config;
  Args a;
  a.opt("--num-layers", m.layers);
  a.opt("--hidden-size", m.hidden);
  a.opt("--ffn-hidden-size", m.ffn_hidden > 0 ? m.ffn_hidden : 4 * m.hidden);
  a.opt("--num-attention-heads", m.heads);
  if (kv_groups(m) != m.heads) a.opt("--num-key-value-heads", kv_groups(m));
  if (const int d = explicit_head_dim(m); d > 0 && !m.uses_mla()) a.opt("--kv-channels", d);
  a.opt("--seq-length", plan.job.seq);
  a.opt("--max-position-embeddings", max_positions(plan));
  if (m.position == PositionKind::kRope) a.flag("--use-rotary-position-embeddings");
  a.opt("--normalization", m.norm == NormKind::kRmsNorm ? "rmsnorm" : "layernorm");
  if (!m.linear_bias) a.flag("--disable-bias-linear");
  a.append(megatron_deepspeed_model_args(m));
  if (m.is_moe()) {
    // DeepSpeed-MoE as Megatron-DeepSpeed's megatron/arguments.py spells it
    // (the MoE lives in the model code, not in ds_config.json).
    a.opt("--num-experts", m.experts);
    a.opt("--topk", m.top_k);
    a.opt("--moe-expert-parallel-size", c.ep);
    // The experts' own optimizer groups: without them DeepSpeed's ZeRO and
    // bf16 optimizers assert "the model has moe layers, but None of the param
    // groups are marked as MoE" (DeepSpeed v0.17.0 runtime/zero/
    // stage_1_and_2.py:647-649, runtime/bf16_optimizer.py:113-115); the flag
    // is store_true, off by default (Megatron-DeepSpeed megatron/arguments.py:
    // 921, megatron/optimizer/__init__.py:79-81 @ 4efb479).
    a.flag("--create-moe-param-group");
    if (c.etp > 1) a.flag("--enable-expert-tensor-parallelism");
    // Always written: Megatron-DeepSpeed's --expert-interval defaults to 2
    // (megatron/arguments.py:614 @ 4efb479), which would leave every other
    // layer a dense MLP (megatron/model/transformer.py:1650-1660).
    a.opt("--expert-interval", std::max(1, m.moe_layer_freq));
    a.opt("--moe-loss-coeff", m.aux_loss_coeff > 0 ? loss_weight(m.aux_loss_coeff) : "0.01");
    if (plan.job.capacity_factor > 0) {
      // DeepSpeed-MoE always pads: its gating dispatches an experts x
      // capacity tensor (DeepSpeed v0.17.0 deepspeed/moe/sharded_moe.py:
      // 161-170,609), so only padded plans reach here (the capability
      // table refuses the others).
      char factor[32];
      std::snprintf(factor, sizeof factor, "%g", plan.job.capacity_factor);
      a.opt("--moe-train-capacity-factor", factor);
    } else {
      a.flag("--disable-moe-token-dropping");
    }
  }
  a.opt("--tensor-model-parallel-size", c.tp);
  a.opt("--pipeline-model-parallel-size", c.pp);
  // pp 1: run the plain GPT model under DeepSpeed's engine, not the pipeline
  // engine (which forbids ZeRO-2/3); validate_args requires pp == 1 with it.
  if (c.pp == 1) a.flag("--no-pipeline-parallel");
  if (c.sp) a.flag("--sequence-parallel");
  a.opt("--micro-batch-size", c.mbs);
  a.opt("--global-batch-size", c.gbs);
  if (c.recompute == Recompute::kSelective) {
    a.opt("--recompute-granularity", "selective");
  } else if (c.recompute == Recompute::kFull) {
    // The DeepSpeed path still reads the old activation-checkpointing flags
    // (the HACK note in Megatron-DeepSpeed validate_args).
    a.flag("--checkpoint-activations");
    a.opt("--checkpoint-num-layers", 1);
    a.flag("--deepspeed-activation-checkpointing");
    // Overrides ds_config's key: configure(partition_activations=...) in
    // megatron/initialize.py:186-189; the plan was costed with it.
    if (partitions_checkpoints(plan.job, c)) a.flag("--partition-activations");
  }
  a.flag(plan.job.precision == Precision::kFp16 ? "--fp16" : "--bf16");
  if (c.flash_attention) a.flag("--use-flash-attn-v2");
  a.append(optimizer_args(plan));
  a.opt("--zero-stage", c.zero);
  a.flag("--deepspeed");
  return a.take();
}

}  // namespace parplan::emit_detail
