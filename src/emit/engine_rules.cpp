// engine_rule_violations: each engine's own argument checks, restated for a
// Plan. Every rule names the engine source it comes from (as read on the
// engines' main branches), or says it is parplan's own limit for that engine.
#include <cstdio>
#include <sstream>

#include "cost/config_rules.h"
#include "src/emit/emit.h"
#include "src/emit/emit_internal.h"
#include "src/emit/engine_capabilities.h"

namespace parplan {
namespace {

using emit_detail::world_size;

class Rules {
 public:
  explicit Rules(const char* engine) : engine_(engine) {}
  /// Records `what` when `violated`.
  void check(bool violated, const std::string& what) {
    if (violated) out_.push_back(std::string(engine_) + ": " + what);
  }
  std::vector<std::string> take() { return std::move(out_); }

 private:
  const char* engine_;
  std::vector<std::string> out_;
};

std::string s(long long v) { return emit_detail::str(v); }

int kv_groups(const ModelSpec& m) { return m.kv_groups > 0 ? m.kv_groups : m.heads; }

// The model rules every engine shares are the one validator's
// (cost/config_rules.h: mesh, batch, layout, sharding, experts, recompute),
// worded by describe() with the numbers; the engine functions below add only
// what is engine-specific.
void model_rules(const Plan& p, Engine engine, Rules& r) {
  const ModelSpec& m = p.model;
  if (m.layers <= 0 || m.hidden <= 0 || m.heads <= 0 || p.job.seq <= 0) {
    r.check(true, "the model needs layers, hidden size and heads and the job a sequence length.");
    return;
  }
  JobSpec job = p.job;
  job.gpus = world_size(p);
  // ZeRO-2/3 beside a pipeline is an engine capability (max_zero_with_pp in
  // the capability tables), not a model rule.
  const ConfigViolation v = validate_config(m, job, p.config);
  const int max_zero_with_pp = engine_capabilities(engine).max_zero_with_pp;
  r.check(p.config.pp > 1 && p.config.zero > max_zero_with_pp,
          "ZeRO-" + std::to_string(p.config.zero) + " cannot run with pipeline parallelism (pp " +
              std::to_string(p.config.pp) + "); this engine shards at most stage " +
              std::to_string(max_zero_with_pp) + " beside a pipeline.");
  if (v) r.check(true, describe(v) + ".");
}

// What of the model this engine's files cannot carry (after the engine's own
// rules, so that a shape no flavor matches is named first). The problems
// name the engine as the emitter's message does; the rules add that prefix.
void architecture_rules(const ModelSpec& m, Engine engine, Rules& r) {
  const std::string prefix = std::string(engine_name(engine)) + ": ";
  for (const std::string& problem : emit_detail::engine_architecture_problems(m, engine))
    r.check(true, problem.rfind(prefix, 0) == 0 ? problem.substr(prefix.size()) : problem);
}

// Megatron's pipeline split takes first/last stage counts with equal middle
// stages (TransformerConfig num_layers_in_first/last_pipeline_stage); the
// validator checks that the split itself is whole.
void megatron_layer_rules(const Plan& p, Rules& r) {
  if (p.config.pipeline_layout) {
    // pipeline_parallel_layer_layout.py:110-111 (core_r0.13.0).
    r.check(p.model.mtp_layers > 0,
            "Megatron-LM core_r0.13.0 places no MTP layer in a custom pipeline layout "
            "(NotImplementedError); later releases read its m, or drop the layout.");
    return;
  }
  ParallelConfig split = p.config;
  if (emit_detail::megatron_split(p.config, split)) return;
  std::string layers;
  for (int i = 0; i < p.config.pp; ++i) layers += (i ? "/" : "") + s(p.config.stage_split[i]);
  r.check(true, "the plan splits the layers " + layers +
                    " over the stages; Megatron takes only first and last stage counts "
                    "(--decoder-first/last-pipeline-num-layers) with equal middle stages.");
}

// TransformerConfig.__post_init__ MoE checks the validator does not make
// (megatron/core/transformer/transformer_config.py).
void megatron_moe_rules(const Plan& p, Rules& r) {
  const ModelSpec& m = p.model;
  // Group-limited routing: moe_router_group_topk <= moe_router_num_groups.
  r.check(m.is_moe() && m.route_groups > 0 && m.route_group_topk > m.route_groups,
          "moe-router-group-topk must not exceed moe-router-num-groups (Megatron TransformerConfig).");
  // validate_args: "Group query attention is mutually exclusive with multi latent attention."
  r.check(m.uses_mla() && kv_groups(m) != m.heads,
          "multi-latent-attention cannot run with group-query-attention (Megatron validate_args).");
  // transformer_config.py:723-727 and 751-755 at core_r0.13.0.
  r.check(m.is_moe() && p.job.pad_to_capacity && p.config.a2a_hierarchical,
          "--moe-pad-expert-input-to-capacity cannot run with the flex token dispatcher (the hierarchical "
          "all-to-all; Megatron TransformerConfig).");
  r.check(
      m.is_moe() && p.job.pad_to_capacity && p.job.capacity_factor <= 0,
      "--moe-pad-expert-input-to-capacity needs --moe-expert-capacity-factor (Megatron TransformerConfig).");
  // The experts run as one grouped GEMM (--moe-grouped-gemm, what
  // cost/moe.h times), which validate_args allows only under --bf16
  // (arguments.py:804-805 at core_r0.13.0; fp8 trains under --bf16).
  r.check(m.is_moe() && p.job.precision == Precision::kFp16,
          "MoE experts run as a grouped GEMM (--moe-grouped-gemm), which Megatron-LM allows only in bf16 "
          "(validate_args); train in bf16 or fp8.");
  // MoELayer.forward raises in training when the attention's tp group is
  // larger than 1 without sequence parallelism (moe_layer.py:240-244 at
  // core_r0.13.0), whatever ep is.
  r.check(m.is_moe() && p.config.tp > 1 && !p.config.sp,
          "an MoE model with tensor parallelism (tp " + s(p.config.tp) +
              ") trains only with sequence parallelism in Megatron-LM (MoELayer); set sp.");
  // validate_args: "Multi-Token Prediction (MTP) is not supported with
  // Context Parallelism" (arguments.py:1073-1075 at core_r0.13.0; lifted in
  // core_v0.14.0).
  r.check(m.mtp_layers > 0 && p.config.cp > 1,
          "multi-token prediction (--mtp-num-layers) cannot run with context parallelism (cp " +
              s(p.config.cp) + ") in Megatron-LM core_r0.13.0 (validate_args); use cp 1.");
}

// Sources: NVIDIA/Megatron-LM core_r0.13.0 (73a28a1078a8), line numbers at that commit.
void megatron_rules(const Plan& p, Rules& r) {
  const ParallelConfig& c = p.config;
  const ModelSpec& m = p.model;
  megatron_layer_rules(p, r);
  // transformer_config.py:844-846 (core_r0.13.0).
  r.check(c.recompute == Recompute::kSelective && p.job.precision == Precision::kFp8 &&
              (p.job.recompute_modules.moe_act || p.job.recompute_modules.layernorm),
          "moe_act and layernorm recompute cannot work with fp8 (Megatron TransformerConfig); drop them from "
          "--recompute-modules or train in bf16.");
  // transformer_config.py:830-833 (core_r0.13.0).
  r.check(c.recompute == Recompute::kSelective && p.job.recompute_modules.mla_up_proj && !m.uses_mla(),
          "mla_up_proj recompute needs multi-latent attention (Megatron TransformerConfig); drop it from "
          "--recompute-modules for this model.");
  // validate_args: without overlap_p2p_comm the interleaved schedule needs pp > 2.
  r.check(c.vp > 1 && !c.overlap_p2p && c.pp <= 2,
          "interleaving without --overlap-p2p-communication needs pipeline-model-parallel-size > 2 "
          "(Megatron validate_args).");
  // arguments.py:771-773 asserts hidden_size % num_attention_heads == 0 for the default kv_channels.
  r.check(m.head_dim <= 0 && m.hidden % m.heads != 0,
          "hidden size (" + s(m.hidden) + ") must be divisible by the heads (" + s(m.heads) +
              ") when the model gives no head_dim (Megatron validate_args, kv_channels).");
  // arguments.py:788-790: max_position_embeddings >= seq_length (learned positions are a table).
  r.check(m.position == PositionKind::kLearned && m.max_positions > 0 && m.max_positions < p.job.seq,
          "max-position-embeddings (" + s(m.max_positions) + ") must be at least seq-length (" +
              s(p.job.seq) + ") for learned positions (Megatron validate_args).");
  // Context parallelism runs only in Transformer Engine's attention: the
  // local DotProductAttention asserts context_parallel_size == 1
  // (megatron/core/transformer/dot_product_attention.py:52-54) and TE turns
  // its unfused backend off under CP (transformer_engine/pytorch/attention/
  // dot_product_attention/utils.py:549 at TransformerEngine v2.5).
  r.check(c.cp > 1 && !c.flash_attention,
          "context parallelism (cp " + s(c.cp) +
              ") needs --attention-backend flash or fused: Megatron's local attention asserts cp == 1 and "
              "Transformer Engine disables unfused attention under context parallelism.");
  megatron_moe_rules(p, r);
  r.check(
      c.zeropp() || c.hierarchical_partition,
      "ZeRO++ (hpZ/qwZ/qgZ) and hierarchical partitioning are DeepSpeed features; Megatron-LM has no flags "
      "for them.");
}

// Megatron-DeepSpeed runs Megatron's GPT model with DeepSpeed's engine.
void megatron_deepspeed_model_rules(const Plan& p, Rules& r) {
  const ParallelConfig& c = p.config;
  const ModelSpec& m = p.model;
  r.check(
      m.routed_scaling_factor > 0,
      "the routed experts' output scale (routed_scaling_factor) has no Megatron-DeepSpeed flag; use --emit "
      "megatron.");
  if (c.pp >= 1 && m.layers > 0) {
    // The DeepSpeed PipelineModule splits the layers by type; layers that do
    // not divide over pp run as its balanced split, which the plan must cost.
    r.check(m.layers % c.pp != 0 && !is_megatron_deepspeed_split(m, c),
            "num-layers (" + s(m.layers) + ") over pipeline-model-parallel-size (" + s(c.pp) +
                ") runs as DeepSpeed's type:transformer partition, which the plan's split is not.");
  }
  r.check(m.position == PositionKind::kLearned && m.max_positions > 0 && m.max_positions < p.job.seq,
          "max-position-embeddings (" + s(m.max_positions) + ") must be at least seq-length (" +
              s(p.job.seq) + ") (Megatron-DeepSpeed validate_args).");
  // --checkpoint-activations checkpoints every layer (in chunks of
  // --checkpoint-num-layers); a partial count per stage has no flag.
  r.check(
      c.recompute == Recompute::kFull && c.recompute_layers > 0 && c.pp > 0 && m.layers > 0 &&
          c.recompute_layers < m.layers / c.pp,
      "full recompute of only " + s(c.recompute_layers) +
          " layers per stage has no Megatron-DeepSpeed flag (--checkpoint-activations covers every layer).");
}

void deepspeed_rules(const Plan& p, Engine engine, Rules& r) {
  const ParallelConfig& c = p.config;
  const ModelSpec& m = p.model;
  // ZeRO-2/3 with pipelines (deepspeed/runtime/pipe/engine.py PipelineEngine.__init__)
  // and ZeRO++ without stage 3 (docs/_tutorials/zeropp.md) are the validator's.
  // The hpZ secondary partition groups hpz ranks inside the data-parallel group.
  const int hpz = emit_detail::deepspeed_hpz_ranks(p);
  r.check(hpz > 1 && c.dp % hpz != 0,
          "zero_hpz_partition_size (" + s(hpz) + ") must divide the data-parallel size (" + s(c.dp) + ").");
  r.check(c.hierarchical_partition && hpz <= 1,
          "hierarchical partitioning is ZeRO++ hpZ in DeepSpeed: it needs hpz_ranks > 1 (a weight partition "
          "of more than one data-parallel rank per package or node).");
  // DeepSpeed builds hpZ's groups from contiguous global ranks
  // (utils/groups.py:679-683, _create_zero_param_parallel_group) and qgZ's
  // all-to-all over the world by node (runtime/comm/coalesced_collectives.py:
  // 35-40, groups.py:490-504), not inside the data-parallel group: with
  // Megatron's tensor-parallel ranks contiguous they would gather and reduce
  // across tensor-parallel shards (DeepSpeed v0.17.0).
  r.check(engine == Engine::kMegatronDeepSpeed && c.tp > 1 && (hpz > 1 || c.qgz),
          "DeepSpeed forms ZeRO++'s hpZ and qgZ groups from global ranks, not within the data-parallel "
          "group, so with tensor parallelism (tp " +
              s(c.tp) + ") they would mix tensor-parallel shards; use tp 1 or leave out ZeRO++.");
  r.check(p.job.precision == Precision::kFp8,
          "parplan writes fp8 only for Megatron-LM (Transformer Engine).");
  if (engine == Engine::kDeepSpeed) {
    r.check(m.is_moe() || c.ep > 1,
            "a plain DeepSpeed script has no MoE layers; use --emit megatron-deepspeed (DeepSpeed-MoE) or "
            "megatron.");
  } else if (m.is_moe()) {
    // Megatron-DeepSpeed's GPT MoE (megatron/model/transformer.py with
    // deepspeed.moe.layer.MoE): every expert_interval-th layer, no shared
    // experts, no leading dense layers.
    r.check(m.shared_experts > 0 || m.first_dense_layers > 0,
            "Megatron-DeepSpeed's MoE layers have no shared experts and no leading dense layers; use --emit "
            "megatron.");
    // deepspeed/utils/groups.py _create_expert_and_data_parallel: the data
    // parallel world must be divisible by the expert parallel size.
    r.check(c.ep > 1 && c.dp % c.ep != 0, "moe-expert-parallel-size (" + s(c.ep) +
                                              ") must divide the data-parallel size (" + s(c.dp) +
                                              ") (DeepSpeed utils/groups.py).");
    r.check(m.experts % c.ep != 0, "num-experts (" + s(m.experts) +
                                       ") must be divisible by moe-expert-parallel-size (" + s(c.ep) +
                                       ") (DeepSpeed moe/layer.py).");
    r.check(c.etp != 1 && c.etp != c.tp,
            "expert tensor parallelism is all or nothing in Megatron-DeepSpeed "
            "(--enable-expert-tensor-parallelism "
            "uses tp); etp must be 1 or tp.");
    r.check(c.a2a_hierarchical || c.ep_overlap,
            "DeepSpeed-MoE has neither the hierarchical (DeepEP) all-to-all nor the overlapped one the plan "
            "costs.");
    // DeepSpeed's engine refuses its own MoE layers under ZeRO-3
    // (deepspeed/runtime/engine.py _configure_zero_optimizer at
    // deepspeedai/DeepSpeed@edaa722, l. 1889-1893: "Native DeepSpeed MoE is
    // not supported with ZeRO Stage 3"; older releases assert "MoE not
    // supported with Stage 3"). ZeRO++ (hpZ, qwZ, qgZ) is stage 3 too.
    r.check(c.zero >= 3,
            "DeepSpeed-MoE does not run under ZeRO-3 (DeepSpeed engine.py: \"MoE not supported "
            "with Stage 3\"); use zero 1 or 2, or --emit megatron.");
  }
  r.check(c.cp > 1, "context parallelism (cp " + s(c.cp) +
                        ") has no DeepSpeed equivalent parplan can write (Ulysses is a different split).");
  r.check(c.vp > 1, "DeepSpeed's pipeline engine has no interleaved schedule (vp " + s(c.vp) + ").");
  r.check(
      c.first_stage_layers > 0 || c.last_stage_layers > 0 ||
          (c.custom_split() && !(engine == Engine::kMegatronDeepSpeed && is_megatron_deepspeed_split(m, c))),
      "DeepSpeed's PipelineModule takes no first/last stage layer counts; use an even split.");
  if (engine == Engine::kDeepSpeed) {
    // A plain DeepSpeed script has no Megatron tensor parallelism.
    r.check(c.tp > 1, "tensor parallelism (tp " + s(c.tp) +
                          ") needs Megatron layers; use --emit megatron-deepspeed or tp 1.");
    r.check(c.sp,
            "sequence parallelism rides on Megatron tensor parallelism; use --emit megatron-deepspeed.");
    // runtime/config.py DEEPSPEED_OPTIMIZERS (SGD is not one; ZeRO rejects untested optimizers).
    r.check(p.job.optimizer == Optimizer::kSgd, "DeepSpeed's optimizer section has no SGD; use adam.");
  } else {
    megatron_deepspeed_model_rules(p, r);
  }
}

// torchtitan builds models from registered flavors (torchtitan/models/llama3, qwen3).
void torchtitan_flavor_rule(const ModelSpec& m, Rules& r) {
  r.check(emit_detail::torchtitan_flavor(m) == nullptr,
          "torchtitan builds models from registered flavors; this shape and vocabulary match none of llama3 "
          "8B, 70B, "
          "405B or qwen3 0.6B, 1.7B, 4B, 8B, 14B, 32B, 30B-A3B, 235B-A22B.");
}

void torchtitan_rules(const Plan& p, Rules& r) {
  const ParallelConfig& c = p.config;
  const ModelSpec& m = p.model;
  torchtitan_flavor_rule(m, r);
  // torchtitan applies FSDP2 (fully_shard): parameters are always sharded with
  // the gradients; there is no optimizer-only sharding.
  r.check(c.zero == 1,
          "ZeRO-1 has no torchtitan equivalent (FSDP2 shards parameters too); use zero 0, 2 or 3.");
  // torchtitan parallelize: "DDP has not supported > 1D parallelism".
  r.check(c.zero == 0 && c.dp > 1 && c.tp * c.pp * c.cp > 1,
          "zero 0 maps to DDP, which torchtitan only runs as 1-D data parallelism; use zero 2 or 3.");
  r.check(c.qwz || c.qgz, "quantized ZeRO++ collectives (qwZ/qgZ) have no torchtitan equivalent.");
  r.check((c.hierarchical_partition || c.hpz_ranks > 1) && c.zero != 3,
          "hierarchical partitioning maps to HSDP in torchtitan, which needs zero 3.");
  // The shard group is data_parallel_shard_degree x cp ranks.
  const int shard = emit_detail::deepspeed_hpz_ranks(p);
  r.check(shard > 1 && (shard % c.cp != 0 || c.dp % (shard / c.cp) != 0),
          "the HSDP shard group (" + s(shard) + " ranks) must be data_parallel_shard_degree x cp (cp " +
              s(c.cp) + ") with data_parallel_shard_degree dividing dp (" + s(c.dp) + ").");
  // torchtitan's tensor-parallel plan always shards the sequence (SP).
  r.check(c.tp > 1 && !c.sp,
          "torchtitan always applies sequence parallelism with tensor parallelism; set sp.");
  // pipeline_parallel.py: without pipeline_parallel_layers_per_stage a
  // single-stage schedule has 1 stage per rank, a looped one 2.
  r.check(c.vp > 2,
          "parplan writes torchtitan pipelines with 1 or 2 stages per rank (1F1B, Interleaved1F1B), not " +
              s(c.vp) + ".");
  r.check(c.vp > 1 && c.pp <= 1, "interleaving (vp " + s(c.vp) + ") needs pipeline_parallel_degree > 1.");
  // torchtitan's split comes from pipeline_parallel_first/last_stage_less_layers.
  emit_detail::TorchtitanLessLayers less;
  r.check(!emit_detail::torchtitan_less_layers(c, m.layers, less),
          "torchtitan splits the layers evenly less pipeline_parallel_first/last_stage_less_layers on the "
          "first/last stage; this split (equal middle stages, no larger first/last stage, no interleaving) "
          "has no such form.");
  // parallel_dims.py seq_len_divisor: tp * 2 * cp with context parallelism.
  if (c.tp >= 1 && c.cp >= 1 && p.job.seq > 0) {
    const int divisor = c.cp > 1 ? c.tp * 2 * c.cp : c.tp;
    r.check(p.job.seq % divisor != 0, "seq_len (" + s(p.job.seq) + ") must be divisible by " + s(divisor) +
                                          " (torchtitan ParallelDims.seq_len_divisor).");
  }
  // fp8 runs Float8 linears over bf16 mixed precision (the converter).
  r.check(
      p.job.precision == Precision::kFp16,
      "torchtitan's mixed_precision_param is bfloat16 or float32; parplan writes bf16 (and fp8 over bf16) "
      "only.");
  r.check(c.recompute == Recompute::kFull && c.recompute_layers > 0 &&
              c.recompute_layers * c.vp < m.layers / c.pp,
          "activation_checkpoint.mode full checkpoints every layer; a partial count has no torchtitan key.");
  // torch.distributed.tensor.experimental.context_parallel replaces only the
  // flash and memory-efficient SDPA kernels; the math (unfused) path is not
  // context-parallel.
  r.check(c.cp > 1 && !c.flash_attention,
          "context parallelism (cp " + s(c.cp) + ") needs fused (flash) attention in torchtitan.");
  // v0.2.x: FSDP (dp_shard x cp > 1) or autocast (DDP, one device) gives
  // mixed precision; under tp or pp without FSDP, maybe_enable_amp turns it
  // off and training.dtype (float32) rules.
  if (p.job.mixed_precision_needs_fsdp && (c.tp > 1 || c.pp > 1)) {
    const int dp_shard = c.zero >= 2 ? emit_detail::torchtitan_mesh(p).shard : 1;
    r.check(dp_shard * c.cp <= 1,
            "torchtitan v0.2.x trains in fp32 under tp or pp without FSDP or cp (maybe_enable_amp), not in "
            "the bf16 the plan is costed with; use zero 2 or 3 over dp > 1, or cp > 1.");
  }
  // components/optimizer.py: Adam and AdamW only.
  r.check(p.job.optimizer == Optimizer::kSgd, "torchtitan's optimizers are Adam and AdamW; use adam.");
  // Expert parallelism as main builds it (the only torchtitan parplan writes
  // MoE flavors for): EP borrows its ranks from FSDP, cp and tp, and the
  // routed experts shard over ep only (torchtitan/config/configs.py:282-290,
  // torchtitan/distributed/parallel_dims.py:187-192 at b5bcd76c).
  if (c.ep > 1) {
    const int dp_shard = c.zero >= 2 ? emit_detail::torchtitan_mesh(p).shard : 1;
    r.check(c.etp != 1, "torchtitan shards routed experts over expert_parallel_degree only; use etp 1 (etp " +
                            s(c.etp) + ").");
    r.check((dp_shard * c.cp * c.tp) % c.ep != 0,
            "expert_parallel_degree (" + s(c.ep) + ") must divide dp_shard * cp * tp (" +
                s(dp_shard * c.cp * c.tp) + ") (torchtitan ParallelDims).");
  }
}

}  // namespace

std::vector<std::string> engine_rule_violations(const Plan& plan, Engine engine) {
  Rules rules(engine_name(engine));
  model_rules(plan, engine, rules);
  // Transformer Engine's in-place cross-entropy is a Megatron-LM switch
  // (--cross-entropy-fusion-impl te, arguments.py:1900-1902 at core_r0.13.0);
  // the other engines' losses have none, so a plan costed with it would not run as costed.
  rules.check(engine != Engine::kMegatron && plan.job.cross_entropy == CrossEntropy::kTeInPlace,
              "Transformer Engine's cross-entropy (--cross-entropy te) is a Megatron-LM option; use fused or "
              "eager.");
  // A compiled loss is torchtitan's compile.components "loss", and only with
  // torch.compile on (torchtitan/components/loss.py, _maybe_compile).
  rules.check(
      plan.job.cross_entropy == CrossEntropy::kCompiled &&
          (engine != Engine::kTorchtitan || !plan.job.fused_elementwise),
      "a compiled cross-entropy (--cross-entropy compiled) is torchtitan's with torch.compile on; use "
      "eager.");
  // torchtitan raises on Async TP without the compiled model
  // (torchtitan/config/configs.py:307-313 @ b5bcd76c).
  rules.check(
      engine == Engine::kTorchtitan && plan.job.tp_comm_overlap && !plan.job.fused_elementwise,
      "Async TP (--tp-comm-overlap) runs only under torch.compile in torchtitan; add --torch-compile on.");
  // Token dropping as the plan was costed (padded or not), or not at all:
  // the capability tables cite each engine's source.
  if (const char* problem = token_drop_problem(engine_capabilities(engine), plan.model, plan.job)) {
    char factor[32];
    std::snprintf(factor, sizeof factor, "%g", plan.job.capacity_factor);
    rules.check(true, std::string(problem) + " (capacity factor " + factor +
                          (plan.job.pad_to_capacity ? ", padded" : "") + ").");
  }
  switch (engine) {
    case Engine::kMegatron:
      megatron_rules(plan, rules);
      break;
    case Engine::kDeepSpeed:
    case Engine::kMegatronDeepSpeed:
      deepspeed_rules(plan, engine, rules);
      break;
    case Engine::kTorchtitan:
      torchtitan_rules(plan, rules);
      break;
  }
  architecture_rules(plan.model, engine, rules);
  return rules.take();
}

std::vector<std::string> engine_model_problems(const ModelSpec& model, Engine engine) {
  Rules rules(engine_name(engine));
  if (engine == Engine::kTorchtitan) torchtitan_flavor_rule(model, rules);
  architecture_rules(model, engine, rules);
  return rules.take();
}

}  // namespace parplan
