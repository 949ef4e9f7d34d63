// engine_rule_violations: each engine's own argument checks, restated for a
// Plan. Every rule names the engine source it comes from (as read on the
// engines' main branches), or says it is parplan's own limit for that engine.
#include <sstream>

#include "src/emit/emit.h"
#include "src/emit/emit_internal.h"

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

// Rules every engine shares: the mesh must tile the world and the batch must
// split into whole micro-batches.
void common_rules(const Plan& p, Rules& r) {
  const ParallelConfig& c = p.config;
  const ModelSpec& m = p.model;
  const int world = world_size(p);
  r.check(c.tp < 1 || c.pp < 1 || c.cp < 1 || c.dp < 1 || c.vp < 1 || c.ep < 1 || c.etp < 1,
          "every parallel size (tp, pp, cp, dp, vp, ep, etp) must be at least 1.");
  if (c.tp < 1 || c.pp < 1 || c.cp < 1 || c.dp < 1 || c.mbs < 1) return;
  // Megatron validate_args: world_size % (tp * pp * cp) == 0, dp = world / (tp * pp * cp).
  r.check(world % (c.tp * c.pp * c.cp) != 0,
          "world size (" + s(world) + ") must be divisible by tp*pp*cp (" + s(c.tp * c.pp * c.cp) +
              ") (Megatron validate_args, DeepSpeed topology, torchtitan ParallelDims).");
  r.check(c.world() != world, "tp*cp*pp*dp (" + s(c.world()) + ") must equal the job's " + s(world) +
                                  " ranks; dp is world / (tp*pp*cp).");
  // megatron/core/num_microbatches_calculator.py ConstantNumMicroBatchesCalculator;
  // DeepSpeed runtime/config.py _batch_assertion; torchtitan train.py.
  r.check(c.gbs % (c.mbs * c.dp) != 0,
          "global batch size (" + s(c.gbs) +
              ") must be divisible by micro batch size times data parallel size (" + s(c.mbs) + "*" +
              s(c.dp) + ") (Megatron num_microbatches_calculator).");
  // megatron/core/transformer/transformer_config.py __post_init__.
  r.check(m.heads <= 0 || m.heads % c.tp != 0, "num-attention-heads (" + s(m.heads) +
                                                   ") must be a multiple of tensor-model-parallel-size (" +
                                                   s(c.tp) + ") (Megatron TransformerConfig.__post_init__).");
  // transformer_config.py on main also accepts tp % groups == 0 (KV heads
  // replicated), Megatron-Core releases and Megatron-DeepSpeed (core.utils.divide)
  // do not; parplan keeps to the rule every version accepts.
  r.check(kv_groups(m) % c.tp != 0, "num-query-groups (" + s(kv_groups(m)) +
                                        ") must be a multiple of tensor-model-parallel-size (" + s(c.tp) +
                                        ") (Megatron TransformerConfig.__post_init__).");
  // Megatron-DeepSpeed validate_args: num_attention_heads % num_key_value_heads == 0.
  r.check(m.heads > 0 && m.heads % kv_groups(m) != 0, "num-attention-heads (" + s(m.heads) +
                                                          ") must be a multiple of the KV groups (" +
                                                          s(kv_groups(m)) + ").");
  // validate_args: kv_channels defaults to hidden_size // num_attention_heads, asserting divisibility.
  r.check(m.head_dim <= 0 && m.heads > 0 && m.hidden % m.heads != 0,
          "hidden size (" + s(m.hidden) + ") must be divisible by the heads (" + s(m.heads) +
              ") when the model gives no head_dim (Megatron validate_args, kv_channels).");
  r.check(m.layers <= 0 || m.hidden <= 0 || p.job.seq <= 0,
          "the model needs layers and hidden size and the job a sequence length.");
}

// Megatron's pipeline split: validate_args (even split) and
// TransformerConfig.__post_init__ "Uneven PP" (first/last stage layers).
void megatron_layer_rules(const Plan& p, Rules& r) {
  ParallelConfig split = p.config;
  if (!emit_detail::megatron_split(p.config, split)) {
    std::string layers;
    for (int i = 0; i < p.config.pp; ++i) layers += (i ? "/" : "") + s(p.config.stage_split[i]);
    r.check(true, "the plan splits the layers " + layers +
                      " over the stages; Megatron takes only first and last stage counts "
                      "(--decoder-first/last-pipeline-num-layers) with equal middle stages.");
    return;
  }
  const ParallelConfig& c = split;
  const int layers = p.model.layers;
  if (c.pp < 1 || c.vp < 1 || layers <= 0) return;
  const bool uneven = c.first_stage_layers > 0 || c.last_stage_layers > 0;
  if (!uneven) {
    r.check(layers % c.pp != 0, "num-layers (" + s(layers) +
                                    ") must be divisible by pipeline-model-parallel-size (" + s(c.pp) +
                                    ") (Megatron validate_args).");
    r.check(layers % c.pp == 0 && (layers / c.pp) % c.vp != 0,
            "layers per pipeline stage (" + s(layers / c.pp) + ") must be divisible by the virtual stages (" +
                s(c.vp) + ") (Megatron validate_args, num-layers-per-virtual-pipeline-stage).");
    return;
  }
  int remaining = layers;
  int stages = c.pp;
  if (c.first_stage_layers > 0) {
    r.check(c.vp > 1 && c.first_stage_layers % c.vp != 0,
            "decoder-first-pipeline-num-layers (" + s(c.first_stage_layers) +
                ") must be divisible by the virtual stages (" + s(c.vp) + ") (Megatron TransformerConfig).");
    remaining -= c.first_stage_layers;
    --stages;
  }
  if (c.last_stage_layers > 0) {
    r.check(c.vp > 1 && c.last_stage_layers % c.vp != 0,
            "decoder-last-pipeline-num-layers (" + s(c.last_stage_layers) +
                ") must be divisible by the virtual stages (" + s(c.vp) + ") (Megatron TransformerConfig).");
    remaining -= c.last_stage_layers;
    --stages;
  }
  if (remaining < 0 || stages < 0 || (remaining > 0) != (stages > 0)) {
    r.check(true,
            "first/last stage layers leave " + s(remaining) + " middle layers for " + s(stages) +
                " middle pipeline stages; both must be zero or both positive (Megatron TransformerConfig, "
                "uneven PP).");
    return;
  }
  if (stages == 0) return;
  r.check(remaining % stages != 0, "the " + s(remaining) + " middle layers must be divisible by the " +
                                       s(stages) +
                                       " middle pipeline stages (Megatron TransformerConfig, uneven PP).");
  r.check(remaining % stages == 0 && c.vp > 1 && (remaining / stages) % c.vp != 0,
          "layers per middle pipeline rank (" + s(remaining / stages) +
              ") must be divisible by the virtual stages (" + s(c.vp) +
              ") (Megatron TransformerConfig, uneven PP).");
}

// TransformerConfig.__post_init__ MoE checks (megatron/core/transformer/transformer_config.py).
void megatron_moe_rules(const Plan& p, Rules& r) {
  const ParallelConfig& c = p.config;
  const ModelSpec& m = p.model;
  // "overlap_moe_expert_parallel_comm is only supported with expert model
  // parallelism"; "virtual_pipeline_model_parallel_size must be specified
  // when pipeline_model_parallel_size > 1"; "disable full recomputation";
  // "MTP supports at most one layer".
  if (c.ep_overlap) {
    r.check(c.ep <= 1,
            "--overlap-moe-expert-parallel-comm needs expert-model-parallel-size > 1 (Megatron "
            "TransformerConfig).");
    r.check(c.pp > 1 && c.vp <= 1,
            "--overlap-moe-expert-parallel-comm with pipeline parallelism needs virtual "
            "stages (Megatron TransformerConfig).");
    r.check(c.recompute == Recompute::kFull,
            "--overlap-moe-expert-parallel-comm needs no full recomputation (Megatron TransformerConfig).");
    r.check(m.mtp_layers > 1,
            "--overlap-moe-expert-parallel-comm supports at most one MTP layer (Megatron "
            "TransformerConfig).");
  }
  // Group-limited routing: num_moe_experts % moe_router_num_groups == 0 and
  // moe_router_group_topk <= moe_router_num_groups.
  if (m.is_moe() && m.route_groups > 0 && m.route_group_topk > 0) {
    r.check(m.experts % m.route_groups != 0, "num-experts (" + s(m.experts) +
                                                 ") must be divisible by moe-router-num-groups (" +
                                                 s(m.route_groups) + ") (Megatron TransformerConfig).");
    r.check(m.route_group_topk > m.route_groups,
            "moe-router-group-topk must not exceed moe-router-num-groups (Megatron TransformerConfig).");
  }
  // validate_args: "Group query attention is mutually exclusive with multi latent attention."
  r.check(m.uses_mla() && kv_groups(m) != m.heads,
          "multi-latent-attention cannot run with group-query-attention (Megatron validate_args).");
}

void megatron_rules(const Plan& p, Rules& r) {
  const ParallelConfig& c = p.config;
  const ModelSpec& m = p.model;
  megatron_layer_rules(p, r);
  // validate_args: with the interleaved schedule and overlap_p2p_comm (on by
  // default) pp must be > 1; without the overlap, pp must be > 2.
  r.check(c.vp > 1 && c.pp <= 1, "interleaving (vp " + s(c.vp) +
                                     ") needs pipeline-model-parallel-size > 1 (Megatron validate_args).");
  r.check(c.vp > 1 && !c.overlap_p2p && c.pp <= 2,
          "interleaving without --overlap-p2p-communication needs pipeline-model-parallel-size > 2 "
          "(Megatron validate_args).");
  // pipeline_parallel/schedules.py forward_backward_pipelining_with_interleaving:
  // microbatch_group_size_per_vp_stage defaults to pp (ModelParallelConfig) and
  // must lie in [pp, M]; the last group must be 0 or >= pp, i.e. M % pp == 0.
  if (c.vp > 1 && c.pp > 1 && c.mbs > 0 && c.dp > 0 && c.gbs % (c.mbs * c.dp) == 0) {
    const int micro = c.micro_batches();
    r.check(micro % c.pp != 0 || micro < c.pp,
            "with interleaving the micro-batches per step (" + s(micro) +
                ") must be a positive multiple of pipeline-model-parallel-size (" + s(c.pp) +
                ") (Megatron schedules.forward_backward_pipelining_with_interleaving).");
  }
  // model_parallel_config.py: "Cannot use sequence parallelism without tensor
  // parallelism" (validate_args silently turns it off first).
  r.check(c.sp && c.tp <= 1,
          "sequence-parallel needs tensor-model-parallel-size > 1 (Megatron ModelParallelConfig).");
  // validate_args: seq_length % (2 * context_parallel_size) == 0.
  r.check(c.cp > 1 && p.job.seq % (2 * c.cp) != 0, "seq-length (" + s(p.job.seq) +
                                                       ") must be a multiple of 2*context-parallel-size (" +
                                                       s(2 * c.cp) + ") (Megatron validate_args).");
  // validate_args: max_position_embeddings >= seq_length (learned positions are a table of that size).
  r.check(m.position == PositionKind::kLearned && m.max_positions > 0 && m.max_positions < p.job.seq,
          "max-position-embeddings (" + s(m.max_positions) + ") must be at least seq-length (" +
              s(p.job.seq) + ") for learned positions (Megatron validate_args).");
  // validate_args, expert parallelism checks.
  r.check(c.ep > 1 && !m.is_moe(),
          "expert-model-parallel-size > 1 needs num-experts (Megatron validate_args).");
  r.check(c.ep > 1 && m.is_moe() && m.experts % c.ep != 0,
          "num-experts (" + s(m.experts) + ") must be a multiple of expert-model-parallel-size (" + s(c.ep) +
              ") (Megatron validate_args).");
  r.check(c.ep > 1 && p.job.precision == Precision::kFp16,
          "expert parallelism is not supported with fp16 (Megatron validate_args).");
  // model_parallel_config.py: EP and TP together need sequence parallelism
  // (an error in Megatron-Core releases, a warning on main).
  r.check(m.is_moe() && c.ep > 1 && c.tp > 1 && !c.sp,
          "expert and tensor parallelism together need sequence-parallel (Megatron ModelParallelConfig).");
  // parallel_state.initialize_model_parallel: the expert grid etp*ep*pp tiles the world.
  if (m.is_moe() && c.etp >= 1 && c.ep >= 1 && c.pp >= 1) {
    const int grid = c.etp * c.ep * c.pp;
    r.check(world_size(p) % grid != 0,
            "world size (" + s(world_size(p)) +
                ") must be divisible by expert-tensor*expert-model*pipeline sizes (" + s(grid) +
                ") (Megatron parallel_state.initialize_model_parallel).");
  }
  megatron_moe_rules(p, r);
  // Megatron has no ZeRO-2/3 of its own; parplan maps them to Megatron-FSDP
  // (--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads[_params]),
  // which Megatron's docs only show without pipeline parallelism
  // (docs/discussions/megatron-fsdp-user-guide).
  r.check(c.zero >= 2 && c.pp > 1,
          "ZeRO-" + s(c.zero) +
              " maps to Megatron-FSDP, which parplan emits only with "
              "pipeline-model-parallel-size 1; use zero 1 (distributed optimizer) or pp 1.");
  r.check(c.zero < 0 || c.zero > 3, "zero must be 0..3.");
  r.check(
      c.zeropp() || c.hierarchical_partition,
      "ZeRO++ (hpZ/qwZ/qgZ) and hierarchical partitioning are DeepSpeed features; Megatron-LM has no flags "
      "for them.");
  // Megatron maps full recompute of N layers per stage to --recompute-method
  // block --recompute-num-layers N/vp (N is counted per model chunk).
  r.check(
      c.recompute == Recompute::kFull && c.recompute_layers > 0 && c.vp > 1 && c.recompute_layers % c.vp != 0,
      "full recompute of " + s(c.recompute_layers) +
          " layers per stage must be divisible by the virtual stages (" + s(c.vp) +
          "): Megatron counts recompute-num-layers per model chunk.");
}

// Megatron-DeepSpeed runs Megatron's GPT model with DeepSpeed's engine.
void megatron_deepspeed_model_rules(const Plan& p, Rules& r) {
  const ParallelConfig& c = p.config;
  const ModelSpec& m = p.model;
  if (c.pp >= 1 && m.layers > 0) {
    // The DeepSpeed PipelineModule splits the layers; parplan assumes an even split.
    r.check(m.layers % c.pp != 0, "num-layers (" + s(m.layers) +
                                      ") must be divisible by pipeline-model-parallel-size (" + s(c.pp) +
                                      ") for the even split parplan assumes.");
  }
  r.check(c.sp && c.tp <= 1,
          "sequence-parallel needs tensor-model-parallel-size > 1 (Megatron-DeepSpeed validate_args turns it "
          "off).");
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
  // deepspeed/runtime/pipe/engine.py PipelineEngine.__init__:
  // "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism".
  r.check(c.pp > 1 && c.zero >= 2, "ZeRO-" + s(c.zero) +
                                       " cannot run under DeepSpeed's pipeline engine (pp " + s(c.pp) +
                                       "); use zero <= 1 or pp 1 (DeepSpeed runtime/pipe/engine.py).");
  r.check(c.zero < 0 || c.zero > 3, "zero_optimization.stage must be 0..3 (DeepSpeed ZeroStageEnum).");
  // docs/_tutorials/zeropp.md: ZeRO++ extends ZeRO stage 3.
  r.check((c.hpz_ranks > 1 || c.qwz || c.qgz || c.hierarchical_partition) && c.zero != 3,
          "ZeRO++ (zero_hpz_partition_size, zero_quantized_weights, "
          "zero_quantized_gradients) extends ZeRO-3; the plan has zero " +
              s(c.zero) + " (DeepSpeed ZeRO++ tutorial).");
  // The hpZ secondary partition groups hpz ranks inside the data-parallel group.
  const int hpz = emit_detail::deepspeed_hpz_ranks(p);
  r.check(hpz > 1 && c.dp % hpz != 0,
          "zero_hpz_partition_size (" + s(hpz) + ") must divide the data-parallel size (" + s(c.dp) + ").");
  r.check(c.hierarchical_partition && hpz <= 1,
          "hierarchical partitioning is ZeRO++ hpZ in DeepSpeed: it needs hpz_ranks > 1 (a weight partition "
          "of more than one data-parallel rank per package or node).");
  r.check(p.job.precision == Precision::kFp8,
          "parplan writes fp8 only for Megatron-LM (Transformer Engine).");
  r.check(m.uses_mla(),
          "multi-latent attention has no Megatron-DeepSpeed or DeepSpeed model; use --emit megatron.");
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
  }
  r.check(c.cp > 1, "context parallelism (cp " + s(c.cp) +
                        ") has no DeepSpeed equivalent parplan can write (Ulysses is a different split).");
  r.check(c.vp > 1, "DeepSpeed's pipeline engine has no interleaved schedule (vp " + s(c.vp) + ").");
  r.check(c.first_stage_layers > 0 || c.last_stage_layers > 0 || c.custom_split(),
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

void torchtitan_rules(const Plan& p, Rules& r) {
  const ParallelConfig& c = p.config;
  const ModelSpec& m = p.model;
  // torchtitan builds models from registered flavors (torchtitan/models/llama3).
  r.check(
      emit_detail::torchtitan_llama3_flavor(m).empty(),
      "torchtitan builds models from registered flavors; this shape matches none of llama3 8B, 70B, 405B.");
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
  const int shard = emit_detail::deepspeed_hpz_ranks(p);
  r.check(shard > 1 && c.dp % shard != 0,
          "the HSDP shard group (" + s(shard) + ") must divide the data-parallel size (" + s(c.dp) + ").");
  // torchtitan's tensor-parallel plan always shards the sequence (SP).
  r.check(c.tp > 1 && !c.sp,
          "torchtitan always applies sequence parallelism with tensor parallelism; set sp.");
  // pipeline_parallel.py: without pipeline_parallel_layers_per_stage a
  // single-stage schedule has 1 stage per rank, a looped one 2.
  r.check(c.vp > 2,
          "parplan writes torchtitan pipelines with 1 or 2 stages per rank (1F1B, Interleaved1F1B), not " +
              s(c.vp) + ".");
  r.check(c.vp > 1 && c.pp <= 1, "interleaving (vp " + s(c.vp) + ") needs pipeline_parallel_degree > 1.");
  r.check(c.first_stage_layers > 0 || c.last_stage_layers > 0 || c.custom_split(),
          "torchtitan splits the layers itself; first/last stage layer counts cannot be passed.");
  // parallel_dims.py seq_len_divisor: tp * 2 * cp with context parallelism.
  if (c.tp >= 1 && c.cp >= 1 && p.job.seq > 0) {
    const int divisor = c.cp > 1 ? c.tp * 2 * c.cp : c.tp;
    r.check(p.job.seq % divisor != 0, "seq_len (" + s(p.job.seq) + ") must be divisible by " + s(divisor) +
                                          " (torchtitan ParallelDims.seq_len_divisor).");
  }
  r.check(p.job.precision != Precision::kBf16,
          "torchtitan's mixed_precision_param is bfloat16 or float32; parplan writes bf16 only.");
  r.check(c.recompute == Recompute::kFull && c.recompute_layers > 0 && c.pp > 0 && m.layers > 0 &&
              c.recompute_layers < m.layers / c.pp,
          "activation_checkpoint.mode full checkpoints every layer; a partial count has no torchtitan key.");
  // components/optimizer.py: Adam and AdamW only.
  r.check(p.job.optimizer == Optimizer::kSgd, "torchtitan's optimizers are Adam and AdamW; use adam.");
  // parallel_dims.py _validate, expert parallelism.
  if (c.ep > 1) {
    const int hsdp = emit_detail::deepspeed_hpz_ranks(p);
    const int dp_shard = c.zero >= 2 ? (hsdp > 1 ? hsdp : c.dp) : 1;
    r.check(c.etp != c.tp && c.etp != 1,
            "expert_tensor_parallel_degree must equal tp or 1 (torchtitan ParallelDims).");
    if (c.etp == c.tp) {
      r.check(c.ep % c.cp != 0 || (dp_shard * c.cp) % c.ep != 0,
              "expert_parallel_degree (" + s(c.ep) + ") must be a multiple of cp and divide dp_shard*cp (" +
                  s(dp_shard * c.cp) + ") (torchtitan ParallelDims).");
    } else if (c.etp == 1) {
      r.check(c.ep % (c.cp * c.tp) != 0 || (dp_shard * c.cp * c.tp) % c.ep != 0,
              "expert_parallel_degree (" + s(c.ep) +
                  ") must be a multiple of cp*tp and divide dp_shard*cp*tp (" + s(dp_shard * c.cp * c.tp) +
                  ") (torchtitan ParallelDims).");
    }
  }
}

}  // namespace

std::vector<std::string> engine_rule_violations(const Plan& plan, Engine engine) {
  Rules rules(engine_name(engine));
  common_rules(plan, rules);
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
  return rules.take();
}

}  // namespace parplan
