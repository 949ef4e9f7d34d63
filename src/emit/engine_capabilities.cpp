// The engines' capability tables. Sources were read on the revisions named in
// each table; a "parplan" source is a limit of the launch files parplan
// writes for that engine, not of the engine.
#include "src/emit/engine_capabilities.h"

#include "src/io/input_error.h"

namespace parplan {
namespace {

// NVIDIA/Megatron-LM, core_r0.13.0.
constexpr CapabilitySource kMegatronSources[] = {
    {"tp, sp", "any tp; sp optional",
     "megatron/core/model_parallel_config.py tensor_model_parallel_size, sequence_parallel"},
    {"cp", "yes; seq % (2 cp) == 0", "megatron/training/arguments.py validate_args (context_parallel_size)"},
    {"pp, vp", "yes; interleaved",
     "megatron/core/model_parallel_config.py pipeline_model_parallel_size, "
     "virtual_pipeline_model_parallel_size"},
    {"ep, etp", "any divisors",
     "megatron/core/model_parallel_config.py expert_model_parallel_size, expert_tensor_parallel_size"},
    {"hierarchical all-to-all", "--moe-token-dispatcher-type flex",
     "megatron/core/transformer/moe/token_dispatcher.py MoEFlexTokenDispatcher"},
    {"a2a overlap", "--overlap-moe-expert-parallel-comm",
     "megatron/core/transformer/transformer_config.py __post_init__"},
    {"zero 1", "--use-distributed-optimizer",
     "megatron/core/optimizer/distrib_optimizer.py DistributedOptimizer"},
    {"zero 2/3", "Megatron-FSDP, pp 1 only (parplan)",
     "megatron/core/distributed/fsdp (data_parallel_sharding_strategy optim_grads[_params])"},
    {"ZeRO++, hierarchical partition", "none", "no flag in megatron/training/arguments.py"},
    {"recompute", "selective; full uniform/block with a layer count",
     "megatron/training/arguments.py _add_training_args "
     "--recompute-granularity/--recompute-method/--recompute-num-layers"},
    {"uneven first/last stages", "yes",
     "megatron/core/transformer/transformer_config.py num_layers_in_first/last_pipeline_stage"},
    {"overlap", "--overlap-grad-reduce, --overlap-param-gather, --tp-comm-overlap",
     "megatron/training/arguments.py _add_distributed_args, _add_training_args"},
    {"fp8", "--fp8-format, --fp8-recipe (Transformer Engine)",
     "megatron/training/arguments.py _add_transformer_engine_args"},
    {"gradient reduction dtype", "fp32 main grads (default) or --grad-reduce-in-bf16",
     "megatron/core/distributed/distributed_data_parallel_config.py grad_reduce_in_fp32"},
};

// deepspeedai/DeepSpeed, v0.17.
constexpr CapabilitySource kDeepSpeedSources[] = {
    {"tp, sp, cp, vp", "none in a plain DeepSpeed script (parplan)",
     "parplan writes no AutoTP/Ulysses model"},
    {"pp", "PipelineModule, even split", "deepspeed/runtime/pipe/module.py PipelineModule partition_method"},
    {"zero 0-3", "zero_optimization.stage", "deepspeed/runtime/zero/config.py DeepSpeedZeroConfig.stage"},
    {"zero with pp", "stage <= 1",
     "deepspeed/runtime/pipe/engine.py PipelineEngine.__init__ (ZeRO-2/3 incompatible)"},
    {"hpZ, qwZ, qgZ", "zero_hpz_partition_size, zero_quantized_weights, zero_quantized_gradients",
     "deepspeed/runtime/zero/config.py DeepSpeedZeroConfig"},
    {"hierarchical partition", "none released", "no 3-level placement in deepspeed/runtime/zero"},
    {"recompute", "full, every layer",
     "deepspeed/runtime/activation_checkpointing/checkpointing.py checkpoint"},
    {"overlap", "zero_optimization.overlap_comm", "deepspeed/runtime/zero/config.py overlap_comm"},
    {"gradient reduction dtype", "communication_data_type fp32/bf16/fp16",
     "deepspeed/runtime/config.py get_communication_data_type"},
    {"optimizers", "Adam, AdamW, LAMB, ... (no SGD)", "deepspeed/runtime/config.py DEEPSPEED_OPTIMIZERS"},
};

// deepspeedai/Megatron-DeepSpeed, main.
constexpr CapabilitySource kMegatronDeepSpeedSources[] = {
    {"tp, sp", "yes", "megatron/arguments.py --tensor-model-parallel-size, --sequence-parallel"},
    {"cp, vp", "none (Ulysses is a different split)", "megatron/arguments.py --ds-sequence-parallel-size"},
    {"pp", "DeepSpeed PipelineModule, even split", "megatron/model/gpt_model.py GPTModelPipe"},
    {"ep, etp", "--moe-expert-parallel-size; etp 1 or tp (--enable-expert-tensor-parallelism)",
     "megatron/arguments.py _add_moe_args"},
    {"zero, ZeRO++", "as DeepSpeed (zero <= 1 with pp)",
     "deepspeed/runtime/pipe/engine.py PipelineEngine.__init__"},
    {"recompute", "selective; full on every layer (--checkpoint-activations)",
     "megatron/arguments.py --recompute-granularity, --checkpoint-activations"},
    {"gradient reduction dtype", "communication_data_type",
     "deepspeed/runtime/config.py get_communication_data_type"},
};

// pytorch/torchtitan, v0.2.0.
constexpr CapabilitySource kTorchtitanSources[] = {
    {"tp, sp", "tp with sequence parallelism always",
     "torchtitan/models/llama3/infra/parallelize.py apply_tp (SequenceParallel)"},
    {"cp", "context_parallel_degree; seq % (2 tp cp) == 0",
     "torchtitan/distributed/parallel_dims.py seq_len_divisor"},
    {"pp, vp", "pipeline_parallel_degree; 1F1B / Interleaved1F1B (<= 2 stages per rank, parplan)",
     "torchtitan/distributed/pipeline_parallel.py"},
    {"ep, etp", "expert_parallel_degree; etp 1 or tp", "torchtitan/distributed/parallel_dims.py _validate"},
    {"zero 0", "DDP, 1-D data parallelism only",
     "torchtitan/models/llama3/infra/parallelize.py apply_ddp ('DDP has not supported > 1D parallelism')"},
    {"zero 2/3, HSDP", "FSDP2 fully_shard (reshard_after_forward), dp_shard/dp_replicate",
     "torchtitan/distributed/parallel_dims.py dp_shard, dp_replicate"},
    {"zero 1, qwZ, qgZ, hierarchical partition", "none", "no optimizer-only sharding in FSDP2"},
    {"recompute", "activation_checkpoint.mode none/selective(op)/full, every layer",
     "torchtitan/distributed/activation_checkpoint.py"},
    {"precision", "bf16 mixed_precision_param; reduce in fp32 (mixed_precision_reduce)",
     "torchtitan/config/job_config.py Parallelism/Training"},
    {"uneven first/last stages", "fewer layers only: pipeline_parallel_first/last_stage_less_layers",
     "torchtitan/config/job_config.py Parallelism (default 1 each)"},
    {"zero 2/3 with pp", "FSDP2 + PP (reshard_after_forward off with pp)",
     "torchtitan/models/llama3/infra/parallelize.py apply_fsdp reshard_after_forward_policy"},
    {"loss", "eager cross_entropy on fp32-upcast logits", "torchtitan/components/loss.py cross_entropy_loss"},
    {"optimizers", "Adam, AdamW", "torchtitan/components/optimizer.py"},
};

constexpr EngineCapabilities kMegatron{Engine::kMegatron,
                                       "megatron",
                                       "Megatron-LM core_r0.13.0",
                                       /*tp*/ true,
                                       /*cp*/ true,
                                       /*pp*/ true,
                                       /*ep*/ true,
                                       /*sp*/ true,
                                       /*sp_required*/ false,
                                       /*max_vp*/ 0,
                                       /*etp_any*/ true,
                                       /*a2a_hierarchical*/ true,
                                       /*ep_overlap*/ true,
                                       /*zero*/ {true, true, true, true},
                                       /*max_zero_with_pp*/ 1,
                                       /*zero0_only_1d*/ false,
                                       /*hpz*/ false,
                                       /*qwz*/ false,
                                       /*qgz*/ false,
                                       /*hierarchical_partition*/ false,
                                       /*selective*/ true,
                                       /*full*/ true,
                                       /*partial*/ true,
                                       /*uneven_first_last*/ true,
                                       /*custom_split*/ false,
                                       /*overlap_grad_reduce*/ true,
                                       /*overlap_param_gather*/ true,
                                       /*tp_comm_overlap*/ true,
                                       /*fp8*/ true,
                                       /*fp16*/ true,
                                       /*grad_reduce_bf16*/ true,
                                       /*moe*/ true,
                                       /*sgd*/ true,
                                       kMegatronSources,
                                       /*uneven_fewer_only*/ false};

constexpr EngineCapabilities kDeepSpeed{Engine::kDeepSpeed,
                                        "deepspeed",
                                        "DeepSpeed v0.17",
                                        false,
                                        false,
                                        true,
                                        false,
                                        false,
                                        false,
                                        1,
                                        false,
                                        false,
                                        false,
                                        {true, true, true, true},
                                        1,
                                        false,
                                        true,
                                        true,
                                        true,
                                        false,
                                        false,
                                        true,
                                        false,
                                        false,
                                        false,
                                        true,
                                        false,
                                        false,
                                        false,
                                        true,
                                        true,
                                        false,
                                        false,
                                        kDeepSpeedSources,
                                        /*uneven_fewer_only*/ false};

constexpr EngineCapabilities kMegatronDeepSpeed{Engine::kMegatronDeepSpeed,
                                                "megatron-deepspeed",
                                                "Megatron-DeepSpeed main",
                                                true,
                                                false,
                                                true,
                                                true,
                                                true,
                                                false,
                                                1,
                                                false,
                                                false,
                                                false,
                                                {true, true, true, true},
                                                1,
                                                false,
                                                true,
                                                true,
                                                true,
                                                false,
                                                true,
                                                true,
                                                false,
                                                false,
                                                false,
                                                true,
                                                false,
                                                false,
                                                false,
                                                true,
                                                true,
                                                true,
                                                true,
                                                kMegatronDeepSpeedSources,
                                                /*uneven_fewer_only*/ false};

constexpr EngineCapabilities kTorchtitan{Engine::kTorchtitan,
                                         "torchtitan",
                                         "torchtitan v0.2.0",
                                         true,
                                         true,
                                         true,
                                         true,
                                         true,
                                         true,
                                         2,
                                         false,
                                         false,
                                         false,
                                         {true, false, true, true},
                                         3,
                                         true,
                                         true,
                                         false,
                                         false,
                                         false,
                                         true,
                                         true,
                                         false,
                                         true,  // uneven first/last stages
                                         false,
                                         true,
                                         false,
                                         false,
                                         false,
                                         false,
                                         false,
                                         true,
                                         false,
                                         kTorchtitanSources,
                                         /*uneven_fewer_only*/ true};

}  // namespace

const EngineCapabilities& engine_capabilities(Engine engine) {
  switch (engine) {
    case Engine::kDeepSpeed:
      return kDeepSpeed;
    case Engine::kMegatronDeepSpeed:
      return kMegatronDeepSpeed;
    case Engine::kTorchtitan:
      return kTorchtitan;
    case Engine::kMegatron:
      break;
  }
  return kMegatron;
}

const char* capability_problem(const EngineCapabilities& e, const ModelSpec& model, const JobSpec& job,
                               const ParallelConfig& c) {
  if (c.tp > 1 && !e.tp) return "no tensor parallelism";
  if (c.sp && !e.sp) return "no sequence parallelism";
  if (c.tp > 1 && e.sp_required && !c.sp) return "tensor parallelism always runs with sequence parallelism";
  if (c.cp > 1 && !e.cp) return "no context parallelism";
  // Megatron's local attention asserts cp == 1 and Transformer Engine turns
  // unfused attention off under CP; torch's context_parallel replaces only
  // the fused SDPA kernels (engine_rules.cpp cites the lines).
  if (c.cp > 1 && !c.flash_attention) return "context parallelism needs fused (flash) attention";
  if (c.pp > 1 && !e.pp) return "no pipeline parallelism";
  if (e.max_vp > 0 && c.vp > e.max_vp) return "no interleaved schedule with this many model chunks";
  if (model.is_moe() && !e.moe) return "no MoE layers";
  if (c.ep > 1 && !e.ep) return "no expert parallelism";
  if (!e.etp_any && c.etp != 1 && c.etp != c.tp) return "expert tensor parallelism is 1 or tp";
  if (c.a2a_hierarchical && !e.a2a_hierarchical) return "no hierarchical all-to-all";
  if (c.ep_overlap && !e.ep_overlap) return "no overlapped all-to-all";
  if (c.zero < 0 || c.zero > 3 || !e.zero[c.zero]) return "no such ZeRO stage";
  if (c.pp > 1 && c.zero > e.max_zero_with_pp) return "this ZeRO stage cannot run with pipeline parallelism";
  if (e.zero0_only_1d && c.zero == 0 && c.dp > 1 && c.tp * c.cp * c.pp > 1)
    return "plain data parallelism (DDP) only as 1-D parallelism";
  if (c.hpz_ranks > 1 && !e.hpz) return "no hpZ / HSDP";
  if (c.qwz && !e.qwz) return "no quantized weight all-gather (qwZ)";
  if (c.qgz && !e.qgz) return "no quantized gradient reduction (qgZ)";
  if (c.hierarchical_partition && !e.hierarchical_partition) return "no hierarchical partition";
  if (c.recompute == Recompute::kSelective && !e.recompute_selective) return "no selective recomputation";
  if (c.recompute == Recompute::kFull && !e.recompute_full) return "no full recomputation";
  if (c.recompute == Recompute::kFull && !e.recompute_partial && c.recompute_layers > 0 && c.pp > 0 &&
      c.vp > 0 && c.recompute_layers < model.layers / (c.pp * c.vp))
    return "full recomputation covers every layer";
  if ((c.first_stage_layers > 0 || c.last_stage_layers > 0) && !e.uneven_first_last)
    return "no first/last stage layer counts";
  if ((c.first_stage_layers > 0 || c.last_stage_layers > 0) && e.uneven_fewer_only) {
    const int first = c.first_stage_layers, last = c.last_stage_layers;
    const int others = c.pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
    const int middle = others > 0 ? (model.layers - first - last) / others : 0;
    if (others > 0 && ((first > 0 && first > middle) || (last > 0 && last > middle)))
      return "first/last stages may only hold fewer layers than the middle ones";
  }
  if (c.custom_split() && !e.custom_split) {
    // An arbitrary split with equal middle stages is a first/last split.
    bool first_last = e.uneven_first_last && c.pp <= ParallelConfig::kMaxSplitStages;
    for (int s = 2; first_last && s + 1 < c.pp; ++s) first_last = c.stage_split[s] == c.stage_split[1];
    if (!first_last) return "no per-stage layer counts";
  }
  if (job.grad_reduce == GradReduceDtype::kBf16 && !e.grad_reduce_bf16) return "no bf16 gradient reduction";
  if (job.precision == Precision::kFp8 && !e.fp8) return "no fp8";
  if (job.precision == Precision::kFp16 && !e.fp16) return "no fp16";
  if (job.optimizer == Optimizer::kSgd && !e.sgd) return "no SGD";
  return nullptr;
}

EngineSelection parse_engine_selection(const std::string& name, const char* flag) {
  EngineSelection s;
  if (name.empty() || name == "any") return s;
  s.any = false;
  s.count = 1;
  for (Engine e : {Engine::kMegatron, Engine::kDeepSpeed, Engine::kMegatronDeepSpeed, Engine::kTorchtitan}) {
    if (name == engine_capabilities(e).name) {
      s.engines[0] = e;
      return s;
    }
  }
  throw InputError(std::string(flag) + ": unknown engine '" + name +
                   "'; choose one of megatron, deepspeed, megatron-deepspeed, torchtitan, any.");
}

namespace {
// Each engine's gradient-reduction schedule; the sources are in
// cost/grad_sync_schedule.h (DeepSpeed's is the default rule).
GradSyncSchedule engine_grad_sync(Engine engine) {
  if (engine == Engine::kMegatron) return GradSyncSchedule::kLastMicroBatch;
  if (engine == Engine::kTorchtitan) return GradSyncSchedule::kTorchtitan;
  return GradSyncSchedule::kEngineDefault;
}

// The attention kernel each engine runs on its default path; on devices
// without published kernel figures every kernel is the profile's
// (cost/attention_kernels.h).
AttentionKernel engine_attention_kernel(Engine engine) {
  switch (engine) {
    // Megatron-Core's TransformerConfig.attention_backend defaults to auto
    // (megatron/core/transformer/transformer_config.py:151 at
    // core_v0.15.0rc7-2333-gd98e8a64) and Transformer Engine then disables
    // FlashAttention "to give FusedAttention preference on Hopper+"
    // (transformer_engine/pytorch/attention/dot_product_attention/utils.py,
    // get_attention_backend): cuDNN fused attention; the launch file says
    // --attention-backend fused.
    case Engine::kMegatron:
      return AttentionKernel::kCudnn;
    // torchtitan's ScaledDotProductAttention runs SDPA under
    // sdpa_kernel([CUDNN_ATTENTION, FLASH_ATTENTION, MATH], set_priority=True)
    // (torchtitan/models/common/attention.py:389-393 and 417 at b5bcd76c):
    // cuDNN first.
    case Engine::kTorchtitan:
      return AttentionKernel::kCudnn;
    // Megatron-DeepSpeed with --use-flash-attn-v2 (what parplan emits):
    // the flash-attn 2 package.
    case Engine::kMegatronDeepSpeed:
      return AttentionKernel::kFlash2;
    // DeepSpeed leaves attention to the user's model code.
    default:
      return AttentionKernel::kProfile;
  }
}
}  // namespace

EngineRecipe engine_recipe_defaults(const EngineSelection& selection) {
  EngineRecipe recipe;
  if (!selection.any && selection.engines[0] == Engine::kTorchtitan) {
    recipe.grad_reduce = GradReduceDtype::kFp32;
    recipe.cross_entropy = CrossEntropy::kEager;
    recipe.selective_checkpoint = SelectiveCheckpoint::kTorchtitanOps;
    recipe.cp_exchange = ContextParallelExchange::kAllGatherKv;
  }
  if (!selection.any) {
    recipe.grad_sync = engine_grad_sync(selection.engines[0]);
    recipe.attention_kernel = engine_attention_kernel(selection.engines[0]);
  }
  return recipe;
}

ParallelConfig released_part(const ParallelConfig& config) {
  ParallelConfig out = config;
  if (out.hierarchical_partition) {
    out.hierarchical_partition = false;
    out.partition = PartitionPlacement{};
    out.hpz_ranks = 1;
  }
  return out;
}

int first_engine_running(const EngineSelection& selection, const ModelSpec& model, const JobSpec& job,
                         const ParallelConfig& config) {
  for (int i = 0; i < selection.count; ++i)
    if (capability_problem(engine_capabilities(selection.engines[i]), model, job, config) == nullptr)
      return static_cast<int>(selection.engines[i]);
  return -1;
}

}  // namespace parplan
