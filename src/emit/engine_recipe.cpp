// Each engine's recipe: the job inputs an engine fixes whatever the
// parallel config (loss and attention kernels, gradient dtype and schedule,
// FSDP units, checkpointing), applied to the jobs plan, sweep, check and the
// readers cost. Sources as in engine_capabilities.cpp.
#include <string>

#include "src/emit/engine_capabilities.h"

namespace parplan {

namespace {
// Each engine's gradient-reduction schedule; the sources are in
// cost/grad_sync_schedule.h (DeepSpeed's is the default rule).
GradSyncSchedule engine_grad_sync(Engine engine) {
  if (engine == Engine::kMegatron) return GradSyncSchedule::kLastMicroBatch;
  if (engine == Engine::kTorchtitan) return GradSyncSchedule::kTorchtitan;
  if (engine == Engine::kDeepSpeed || engine == Engine::kMegatronDeepSpeed)
    return GradSyncSchedule::kDeepSpeed;
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
    // torchtitan main builds every language model's attention with
    // get_attention_config(attn_backend), default "flex" in the llama3 and
    // qwen3 model_registry: FlexAttention with a block-causal mask; "sdpa"
    // raises for language models since #3571 (2026-06-09;
    // torchtitan/models/common/config_utils.py:71-101 and
    // models/llama3/__init__.py:369-377 at b5bcd76c). v0.2.x runs SDPA
    // with cuDNN first (plan --engine-version 0.2 sets that).
    case Engine::kTorchtitan:
      return AttentionKernel::kFlex;
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

void apply_engine_recipe(const EngineRecipe& recipe, JobSpec& job) {
  job.grad_reduce = recipe.grad_reduce;
  job.cross_entropy = recipe.cross_entropy;
  job.fp8_saves_cast = recipe.fp8_saves_cast;
  job.te_layernorm_linear = recipe.te_layernorm_linear;
  job.checkpoint_early_stop = recipe.checkpoint_early_stop;
  job.selective_checkpoint = recipe.selective_checkpoint;
  job.cp_exchange = recipe.cp_exchange;
  job.tp_overlap_mechanism = recipe.tp_overlap;
  job.partition_activations = recipe.partition_activations;
  job.moe_pipe_unpartitioned = recipe.moe_pipe_unpartitioned;
  job.shard_unit = recipe.shard_unit;
  job.moe_pads_to_busiest_expert = recipe.moe_pads_to_busiest_expert;
  job.moe_grouped_mm = recipe.moe_grouped_mm;
  job.moe_probs_in_activation = recipe.moe_probs_in_activation;
  job.fsdp_copy_out = recipe.fsdp_copy_out;
  job.sharded_grad_passes = recipe.sharded_grad_passes;
  job.separate_gate_up = recipe.separate_gate_up;
  job.fp8_tp_all_gather = recipe.fp8_tp_all_gather;
  job.grad_sync = recipe.grad_sync;
  job.grad_accumulation = recipe.grad_accumulation;
  job.attention_kernel = recipe.attention_kernel;
}

void apply_engine_recipe(const std::string& engine, JobSpec& job) {
  apply_engine_recipe(engine_recipe_defaults(parse_engine_selection(engine)), job);
}

void apply_engine_defaults(const EngineSelection& selection, JobSpec& job) {
  apply_engine_recipe(engine_recipe_defaults(selection), job);
  // torchtitan compiles the loss with the model (compile.components defaults
  // to ["model", "loss"]; src/cli/torchtitan_job_options.cpp).
  if (!selection.any && selection.engines[0] == Engine::kTorchtitan && job.fused_elementwise)
    job.cross_entropy = CrossEntropy::kCompiled;
}

const char* megatron_attention_backend(const JobSpec& job, const ParallelConfig& config) {
  // A plan costed with cuDNN fused attention (Megatron's default on Hopper)
  // says so: "flash" would force Transformer Engine's FlashAttention.
  if (!config.flash_attention) return "unfused";
  return job.attention_kernel == AttentionKernel::kCudnn ? "fused" : "flash";
}

EngineRecipe engine_recipe_defaults(const EngineSelection& selection) {
  EngineRecipe recipe;
  if (!selection.any && selection.engines[0] == Engine::kTorchtitan) {
    recipe.grad_reduce = GradReduceDtype::kFp32;
    recipe.cross_entropy = CrossEntropy::kEager;
    recipe.selective_checkpoint = SelectiveCheckpoint::kTorchtitanOps;
    recipe.cp_exchange = ContextParallelExchange::kAllGatherKv;
    recipe.tp_overlap = TpOverlapMechanism::kMicroPipeline;
    // torchao's Float8Linear saves the high-precision input and weight
    // (pytorch/ao torchao/float8/float8_linear.py @ 7ca1bfb,
    // matmul_with_hp_or_float8_args.forward: ctx.save_for_backward(input_hp,
    // weight_hp_t)) and casts again in the backward.
    recipe.fp8_saves_cast = false;
    // GroupedExperts (torchtitan/models/common/moe.py @ b5bcd76c).
    recipe.moe_grouped_mm = true;
    // FSDP2's fully_shard (torchtitan/parallelisms/parallelize_llama.py
    // apply_fsdp @ 9dec370; torchtitan/distributed/fsdp.py @ b5bcd76).
    recipe.fsdp_copy_out = true;
    // FeedForward's w1 and w3 are separate Linears (torchtitan/models/common/
    // config_utils.py make_ffn_config @ b5bcd76c); QKV is fused there
    // (fuse_qkv=True since #3714, 2026-06) but not in v0.2.x (wq, wk, wv:
    // models/llama3/model/model.py:203-207 @ v0.2.2): --engine-version 0.2
    // and torchtitan's TOML-era logs set JobSpec::separate_qkv.
    recipe.separate_gate_up = true;
    // Float8 tensor parallelism gathers fp8 (JobSpec::fp8_tp_all_gather).
    recipe.fp8_tp_all_gather = true;
    // Full activation checkpointing wraps each block in
    // ptd_checkpoint_wrapper, CheckpointImpl.NO_REENTRANT by default
    // (torchtitan/parallelisms/parallelize_llama.py _apply_ac_to_transformer_block
    // @ 9dec370): JobSpec::checkpoint_early_stop.
    recipe.checkpoint_early_stop = true;
  }
  // Megatron-DeepSpeed runs full recomputation through DeepSpeed's
  // checkpointing; parplan's launch files pass --partition-activations.
  // DeepSpeed's ZeRO-3 (also under Megatron-DeepSpeed) copies, concatenates
  // and divides every gradient before its reduce-scatter
  // (cost/sharded_grad_passes.h); at ZeRO-0/1 it sums micro-batch
  // gradients in passes of its own (cost/grad_accumulation.h).
  if (!selection.any &&
      (selection.engines[0] == Engine::kDeepSpeed || selection.engines[0] == Engine::kMegatronDeepSpeed)) {
    recipe.sharded_grad_passes = ShardedGradPasses::kDeepSpeedZero3;
    recipe.grad_accumulation = GradAccumulation::kDeepSpeed;
  }
  if (!selection.any && selection.engines[0] == Engine::kMegatronDeepSpeed) {
    recipe.partition_activations = true;
    recipe.moe_pipe_unpartitioned = true;
    // Its MoE layers are DeepSpeed-MoE's (megatron/model/transformer.py @
    // 4efb479 builds deepspeed.moe.layer.MoE).
    recipe.moe_pads_to_busiest_expert = true;
  }
  if (!selection.any) {
    // torchtitan/distributed/fsdp.py:246-296 (b5bcd76): fully_shard per
    // transformer block, the embedding, and norm + output; Megatron FSDP
    // under optim_grads_params: TransformerLayer units
    // (custom_fsdp/fully_sharded_data_parallel.py:186-192 at core_r0.13.0).
    const Engine e = selection.engines[0];
    if (e == Engine::kTorchtitan || e == Engine::kMegatron) recipe.shard_unit = ShardUnit::kLayer;
    recipe.moe_probs_in_activation = e == Engine::kMegatron;
    // Megatron-Core's Transformer Engine layer spec builds linear_qkv and
    // linear_fc1 as TELayerNormColumnParallelLinear
    // (megatron/core/models/gpt/gpt_layer_specs.py,
    // get_gpt_layer_with_transformer_engine_spec).
    recipe.te_layernorm_linear = e == Engine::kMegatron;
    // ... whose sequence-parallel all-gathers move fp8 (JobSpec::fp8_tp_all_gather).
    if (e == Engine::kMegatron) recipe.fp8_tp_all_gather = true;
    recipe.grad_sync = engine_grad_sync(selection.engines[0]);
    recipe.attention_kernel = engine_attention_kernel(selection.engines[0]);
  }
  return recipe;
}

}  // namespace parplan
